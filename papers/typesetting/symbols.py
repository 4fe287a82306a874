"""TeX macros → Unicode text, by pylatexenc's latex2text.

pylatexenc knows TeX's accents, the special letters (ß, ø, ł, ı…) and several hundred symbols
(Greek, relations, arrows, ``\\textdegree``…), and ``LatexNodes2Text`` renders them.  It is asked
about one macro or one small fragment at a time, and each answer is cached: the structure around
the macros (maths, markup, links, paragraphs, literal dollars, and a bare ``%``, which is a
comment to pylatexenc but a percent sign in an abstract) is the scanner's, see
:mod:`.textmode`.  Nothing with a ``%`` or an unescaped ``$`` is ever handed to pylatexenc.

Only pylatexenc's symbol categories are used: its "approximations" and "placeholders" would
render ``\\frac{a}{b}`` as "a/b" and ``\\cite{x}`` as "<cit.>", where we show the source, and a
macro with an argument is never taken for a symbol.

:data:`OVERRIDES` holds what pylatexenc 2.11 lacks or renders differently from what we show;
the tests check that every entry still differs from pylatexenc's own answer, so that no entry
repeats it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

from pylatexenc import latexwalker
from pylatexenc.latex2text import LatexNodes2Text, get_default_latex_context_db

_CONTEXT = get_default_latex_context_db().filter_context(
    keep_categories=["latex-base", "nonascii-specials", "advanced-symbols"]
)
# Argument specs: which macros take a mandatory argument (an accent, \mathbb…).
_ARGUMENTS = latexwalker.get_default_latex_context_db()
_LATEX2TEXT = LatexNodes2Text(latex_context=_CONTEXT)

# Macro name → text, where pylatexenc has none or another one.
OVERRIDES: dict[str, str] = {
    # Text-mode symbols and logos pylatexenc does not know.
    "S": "§", "P": "¶", "copyright": "©", "pounds": "£", "euro": "€", "deg": "°",
    "degree": "°", "ddag": "‡", "textless": "<", "textgreater": ">", "textbar": "|",
    "textunderscore": "_", "checkmark": "✓", "LaTeX": "LaTeX", "TeX": "TeX",
    "LaTeXe": "LaTeX2ε", "SS": "SS",
    # LaTeX's single quotes (1412.4033: "a \lq directional local trace formula\rq").
    "lq": "‘", "rq": "’",
    # Readers expect the ASCII caret and a middle dot (pylatexenc: ˆ and a dot above).
    "textasciicircum": "^", "textperiodcentered": "·",
    # Spacing: a thin space (pylatexenc: a full one), a line break (pylatexenc: unknown), and a
    # discretionary hyphen that must not land in the search index (pylatexenc: U+00AD).
    ",": "\u2009", "\\": " ", "\n": " ", "\t": " ", "-": "", "/": "", "@": "",
    "par": " ", "newline": " ", "linebreak": " ", "smallskip": " ",
    # Formatting-only commands with no text of their own.
    "noindent": "", "relax": "", "protect": "", "nobreak": "", "centering": "", "xspace": "",
    # Maths: the letter forms TeX prints (pylatexenc: ϵ, ϕ, ħ, an apostrophe, |).
    "epsilon": "ε", "phi": "φ", "hbar": "ℏ", "prime": "′", "mid": "∣", "|": "‖",
    "ne": "≠", "lt": "<", "gt": ">", "neg": "¬", "Re": "ℜ", "Im": "ℑ",
    # Astronomy (A&A, AAS): 0\farcs5 is 0″.5.
    "sun": "☉", "arcsec": "″", "arcmin": "′", "farcs": "″.", "farcm": "′.", "fdg": "°.",
    "degr": "°",
}  # fmt: skip
# An opening quote is glued to the word after it, as a letter is inside one: the spaces after
# \lq are TeX's, never the author's.
_OPENING_QUOTES = frozenset({"lq"})
# pylatexenc's \today is the date of typesetting, which is not what the author meant.
_NOT_SYMBOLS = frozenset({"today"})
# The tie accent (\t{oo}), which pylatexenc 2.11 drops.
_ACCENT_OVERRIDES = {"t": "\u0361"}


class Symbol(NamedTuple):
    text: str
    # A letter sits inside words (``Stra\ss e``), and an opening quote before one, so the
    # spaces after either are TeX's, not the author's; after other symbols they are kept
    # ("\ldots and" is meant with its space).
    letter: bool


def _is_letter(text: str) -> bool:
    return len(text) == 1 and text.isalpha() and unicodedata.name(text, "").startswith("LATIN")


def _takes_argument(name: str) -> bool:
    spec = _ARGUMENTS.get_macro_spec(name)
    if spec is not None and "{" in getattr(spec.args_parser, "argspec", "{"):
        return True
    # Some text specs use arguments the parser's table does not list (\braket: "⟨%s|%s⟩").
    text = _CONTEXT.get_macro_spec(name).simplify_repl
    return isinstance(text, str) and "%" in text


@functools.lru_cache(maxsize=4096)  # bounded: macro names come from the feed
def symbol(name: str) -> Symbol | None:
    """What the argument-less macro ``\\name`` stands for (``ss`` → ß, ``ldots`` → …,
    ``%`` → %, ``alpha`` → α), or None if it is no such macro."""
    text = OVERRIDES.get(name)
    if text is None:
        if name in _NOT_SYMBOLS or _CONTEXT.get_macro_spec(name) is None:
            return None
        if _takes_argument(name):
            return None
        text = _LATEX2TEXT.latex_to_text("\\" + name)
    return Symbol(text, _is_letter(text) or name in _OPENING_QUOTES)


@functools.lru_cache(maxsize=256)
def accent(name: str) -> str | None:
    """The combining mark(s) the accent macro ``\\name`` puts on its argument (``'`` → U+0301,
    ``c`` → U+0327, ``hat`` → U+0302), or None if it is no accent."""
    if name in _ACCENT_OVERRIDES:
        return _ACCENT_OVERRIDES[name]
    if _CONTEXT.get_macro_spec(name) is None or not _takes_argument(name):
        return None
    accented = unicodedata.normalize("NFD", _LATEX2TEXT.latex_to_text(f"\\{name}{{o}}"))
    marks = accented[1:]
    if accented[:1] != "o" or not marks or not all(unicodedata.combining(c) for c in marks):
        return None
    return marks


@functools.lru_cache(maxsize=256)
def fragment(tex: str) -> str:
    """pylatexenc's text for a small fragment with no ``%`` and no ``$``: a dash run, TeX's
    quotes, ``~``, or ``\\mathbb{R}``."""
    return _LATEX2TEXT.latex_to_text(tex)


# \la and \ra together are angle brackets, <r^2>, an abbreviation common in hep papers (AASTeX's
# lone \la is "less than about", which is left alone).
_LA = re.compile(r"\\la(?![A-Za-z])")
_RA = re.compile(r"\\ra(?![A-Za-z])")


def angle_brackets(tex: str) -> str:
    """A formula with both ``\\la`` and ``\\ra`` written with ``\\langle`` and ``\\rangle``."""
    if "\\la" in tex and _LA.search(tex) and _RA.search(tex):
        return _RA.sub(r"\\rangle", _LA.sub(r"\\langle", tex))
    return tex
