"""TeX → HTML and TeX → Unicode text for arXiv titles, abstracts and author names.

arXiv metadata is written in a loose dialect of LaTeX that is never actually compiled: authors
mix prose with ``$…$`` math, TeX accents, a few font commands and the occasional literal dollar
or percent sign.  This module turns it into

* :func:`tex_to_html` – a sanitised HTML fragment (text markup plus MathML Core for the maths,
  so browsers render formulas natively without JavaScript), and
* :func:`tex_to_text` – plain Unicode text for author names, search, feeds and ``<title>``.

The module is pure Python (no Django) and is run once at ingest time; the stored output is
tagged with :data:`TYPESETTER_VERSION` so it can be regenerated when the output changes.

Guiding rules
-------------
* Never raise and never silently drop text: anything not understood (an unknown macro, a formula
  latex2mathml cannot convert, unbalanced delimiters) is shown as its TeX source.
* A bare ``%`` is a percent sign, never a comment (abstracts are not TeX files).
* Whatever the input, the HTML passes through an allowlist sanitiser (:func:`sanitize`).

Currency heuristic
------------------
A single ``$`` opens inline maths only if all of the following hold; otherwise it is a literal
dollar sign (``\\$`` is always a literal dollar sign):

1. it is not a currency prefix: a letter right before it and a digit right after it
   (``US$5``, ``A$ 10``); ``H$\\alpha$`` and ``M$_\\odot$`` are maths;
2. a closing ``$`` exists in the same paragraph and the formula between them is not blank;
3. if the text after the opening ``$`` starts with a digit (``$5 …``, i.e. it *could* be money),
   the span up to the closing ``$`` must look like a formula rather than prose: the closing
   ``$`` is not directly followed by a digit (``$5 and $10``), the span does not end in
   whitespace (``$5 or $x$``), contains no sentence end (``. ``, ``; ``, ``! ``, ``? ``) and no
   two consecutive plain words (``$5 million and $``).

So ``$5$``, ``$10^{3}$``, ``$3\\times 10^5$`` are maths, while ``$5 million``, ``US$5``,
``between $5 and $10`` and ``$5 and $x$`` (only ``$x$`` is maths) keep their dollars.

MathML repairs
--------------
latex2mathml output is taken as an element tree, checked and repaired, then serialised here
(its own serialiser does not escape ``\\text{…}`` contents):

* ``\\sim`` becomes ``<mo>∼</mo>`` (U+223C) instead of ``<mi>~</mi>``; other operator
  characters it emits as ``<mi>`` (±, ⟨, :, …) become ``<mo>``;
* ``{}^{235}\\mathrm{U}`` and ``^{3}He`` become ``<mmultiscripts>`` prescripts;
* ``10{,}000`` becomes one ``<mn>10,000</mn>``; ``{=}`` gets no operator spacing;
* ``\\mathrm{U}`` and capital Greek are upright; ``\\bm``, ``\\mathscr``… use the Unicode
  mathematical alphanumerics (MathML Core ignores other ``mathvariant`` values);
* named spaces (``negativethinmathspace``) become lengths; ``\\operatorname`` is an ``<mi>``;
* unknown macros, wrong argument counts and latex2mathml exceptions make the formula fall back
  to ``<code class="tex">`` with its source.
"""

from __future__ import annotations

import functools
import html
import logging
import re
import unicodedata
from dataclasses import dataclass
from xml.etree.ElementTree import Element

import nh3
from latex2mathml.converter import convert_to_element

__all__ = ["TYPESETTER_VERSION", "sanitize", "tex_to_html", "tex_to_text"]

_log = logging.getLogger(__name__)

#: Bump whenever the HTML or text produced for some input changes, so stored renderings
#: can be found and regenerated.
TYPESETTER_VERSION: int = 2

# ---------------------------------------------------------------------------------------------
# Sanitiser allowlist.  It lists exactly what this module emits; the MathML serialiser below
# filters attributes against the same tables so that sanitising our own output is a no-op.
# ---------------------------------------------------------------------------------------------

_MATHML_TAGS: frozenset[str] = frozenset(
    {
        "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace",
        "msup", "msub", "msubsup", "mfrac", "msqrt", "mroot", "mstyle", "mtable", "mtr", "mtd",
        "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mpadded",
        "mphantom", "menclose", "merror",
    }
)  # fmt: skip
_HTML_TAGS: frozenset[str] = frozenset({"p", "em", "strong", "code", "span", "a"})

_MATHML_COMMON_ATTRS = frozenset({"mathvariant", "displaystyle", "scriptlevel", "dir"})
_MATHML_ATTRS: dict[str, frozenset[str]] = {
    "math": frozenset({"display", "xmlns"}),
    "mo": frozenset(
        {
            "form", "fence", "separator", "stretchy", "symmetric", "largeop", "movablelimits",
            "lspace", "rspace", "minsize", "maxsize", "accent",
        }
    ),
    "mover": frozenset({"accent"}),
    "munder": frozenset({"accentunder"}),
    "munderover": frozenset({"accent", "accentunder"}),
    "mfrac": frozenset({"linethickness"}),
    "mspace": frozenset({"width", "height", "depth"}),
    "mpadded": frozenset({"width", "height", "depth", "lspace", "voffset"}),
    "mtable": frozenset(
        {"columnalign", "rowalign", "columnspacing", "rowspacing", "columnlines", "rowlines"}
    ),
    "mtr": frozenset({"columnalign", "rowalign"}),
    "mtd": frozenset({"columnalign", "rowalign", "columnspan", "rowspan"}),
    "menclose": frozenset({"notation"}),
    "annotation": frozenset({"encoding"}),
}  # fmt: skip


def _allowed_attrs(tag: str) -> frozenset[str]:
    return _MATHML_ATTRS.get(tag, frozenset()) | _MATHML_COMMON_ATTRS


_ATTRS_BY_TAG: dict[str, frozenset[str]] = {tag: _allowed_attrs(tag) for tag in _MATHML_TAGS}

_CLEANER = nh3.Cleaner(
    tags=set(_MATHML_TAGS | _HTML_TAGS),
    attributes={
        **{tag: set(attrs) for tag, attrs in _ATTRS_BY_TAG.items()},
        "a": {"href"},
    },
    allowed_classes={"span": {"smallcaps"}, "code": {"tex"}},
    url_schemes={"http", "https"},
    link_rel="nofollow noopener",
    strip_comments=True,
    # Raw <script>/<style> can never come from us (all text is escaped), but if someone calls
    # sanitize() on foreign HTML their content must go too, not just the tags.
    clean_content_tags={"script", "style"},
)


def sanitize(html_fragment: str) -> str:
    """Clean an HTML fragment against the typesetting allowlist.

    Keeps only the MathML Core elements and the text markup this module emits (``p``, ``em``,
    ``strong``, ``code class="tex"``, ``span class="smallcaps"``, ``a href`` with http/https
    URLs only, which get ``rel="nofollow noopener"``).  Scripts, styles, event handlers, SVG,
    images, iframes and ``javascript:`` URLs never survive.  Idempotent:
    ``sanitize(sanitize(x)) == sanitize(x)``.  Note that ``"`` in text content is left as is
    (it is harmless outside attributes); ``<``, ``>`` and ``&`` are always escaped.
    """
    return _CLEANER.clean(html_fragment)


# ---------------------------------------------------------------------------------------------
# Text-mode tables
# ---------------------------------------------------------------------------------------------

# Accent command → combining character.  Symbol accents (\' \" …) take their argument directly;
# letter accents (\c \v …) need a space or braces, which the control-word regex guarantees.
_ACCENTS: dict[str, str] = {
    "'": "\u0301", "`": "\u0300", '"': "\u0308", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "c": "\u0327", "v": "\u030c", "u": "\u0306", "r": "\u030a", "H": "\u030b",
    "k": "\u0328", "d": "\u0323", "b": "\u0331", "t": "\u0361",
}  # fmt: skip
# Stand-alone (spacing) forms for an accent with nothing to sit on, e.g. ``\~{}``.
_SPACING_ACCENTS: dict[str, str] = {
    "'": "\u00b4", "`": "`", '"': "\u00a8", "^": "^", "~": "~", "=": "\u00af", ".": "\u02d9",
    "c": "\u00b8", "v": "\u02c7", "u": "\u02d8", "r": "\u02da", "H": "\u02dd", "k": "\u02db",
    "d": ".", "b": "_", "t": "\u2040",
}  # fmt: skip
# Accents drawn below the letter keep the dot of i/j; the others replace it (\'{\i} → í).
_ACCENTS_BELOW = frozenset({"\u0327", "\u0328", "\u0323", "\u0331"})
_DOTLESS = {"ı": "i", "ȷ": "j"}

# Control words that produce letters.  TeX swallows the spaces after a control word, which is
# exactly why authors write ``Stra\ss e``; we do the same for these.
_LETTERS: dict[str, str] = {
    "i": "ı", "j": "ȷ", "ss": "ß", "SS": "SS", "o": "ø", "O": "Ø", "aa": "å", "AA": "Å",
    "l": "ł", "L": "Ł", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "dh": "ð", "DH": "Ð",
    "th": "þ", "TH": "Þ", "ng": "ŋ", "NG": "Ŋ", "dj": "đ", "DJ": "Đ",
}  # fmt: skip

# Control words that produce symbols or words; following spaces are kept because arXiv text is
# read by humans, not TeX, and "\ldots and" is meant with its space.
_SYMBOL_WORDS: dict[str, str] = {
    "ldots": "…", "dots": "…", "textellipsis": "…", "S": "§", "P": "¶", "copyright": "©",
    "textcopyright": "©", "pounds": "£", "textsterling": "£", "euro": "€", "texteuro": "€",
    "deg": "°", "textdegree": "°", "degree": "°", "dag": "†", "ddag": "‡", "textdagger": "†",
    "textdaggerdbl": "‡", "textregistered": "®", "texttrademark": "™", "textmu": "µ",
    "textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "textless": "<",
    "textgreater": ">", "textbar": "|", "textendash": "–", "textemdash": "—",
    "textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“",
    "textquotedblright": "”", "textbullet": "•", "textperiodcentered": "·",
    "textunderscore": "_", "LaTeX": "LaTeX", "TeX": "TeX", "LaTeXe": "LaTeX2ε",
    "checkmark": "✓", "textpm": "±", "texttimes": "×",
}  # fmt: skip

# Escaped single characters: \% \& … and the TeX spacing/no-op control symbols.
_CONTROL_SYMBOLS: dict[str, str] = {
    "%": "%", "&": "&", "$": "$", "_": "_", "#": "#", "{": "{", "}": "}", " ": " ",
    "\n": " ", "\t": " ", ",": "\u2009", ";": " ", ":": " ", "\\": " ", "-": "", "/": "",
    "@": "", "|": "|",
}  # fmt: skip

# Commands taking one argument and rendering it with some markup (None: just the content).
_STYLE_COMMANDS: dict[str, str | None] = {
    "emph": "em", "textit": "em", "textsl": "em", "textbf": "strong", "texttt": "code",
    "textsc": "smallcaps", "textrm": None, "textsf": None, "textup": None, "textmd": None,
    "textnormal": None, "mbox": None, "text": None, "underline": None, "hbox": None,
}  # fmt: skip
# Font declarations: apply to the rest of the enclosing group, as in ``{\em …}``.
_DECLARATIONS: dict[str, str | None] = {
    "em": "em", "it": "em", "itshape": "em", "sl": "em", "slshape": "em", "bf": "strong",
    "bfseries": "strong", "tt": "code", "ttfamily": "code", "sc": "smallcaps",
    "scshape": "smallcaps", "rm": None, "sf": None, "normalfont": None, "upshape": None,
    "rmfamily": None, "sffamily": None, "mdseries": None, "tiny": None, "scriptsize": None,
    "footnotesize": None, "small": None, "normalsize": None, "large": None, "Large": None,
    "LARGE": None, "huge": None, "Huge": None,
}  # fmt: skip
# Formatting-only commands with no text of their own.
_NO_OUTPUT = frozenset({"noindent", "relax", "protect", "nobreak", "centering", "xspace"})
_SPACE_WORDS = frozenset({"par", "newline", "linebreak", "quad", "qquad", "smallskip"})

_MARKUP = {"em": ("<em>", "</em>"), "strong": ("<strong>", "</strong>"),
           "code": ("<code>", "</code>"),
           "smallcaps": ('<span class="smallcaps">', "</span>")}  # fmt: skip

# ---------------------------------------------------------------------------------------------
# Regexes (compiled once)
# ---------------------------------------------------------------------------------------------

# A run of characters with no special meaning.  'h' is only special when it starts a URL.
# Spaces and tabs are included (they are collapsed at the end) so that a line of prose is one
# match; line breaks are not, because "\n  " may be a paragraph break.
_PLAIN = re.compile(r"(?:[^\\{}$~\-`'\n\r\f\vh]|h(?!ttps?://))+")
_WS = re.compile(r"\s+")
_ASCII_WS = re.compile(r"[ \t\n\r\f\v]+")
_PAR_BREAK = re.compile(r"\n[ \t]|\n[ \t\r\f\v]*\n")
_SPACES = re.compile(r"[ \t]*")
_CONTROL = re.compile(r"\\(?:([A-Za-z]+)|(.))", re.S)
_DASHES = re.compile(r"-{1,3}")
# Bare URLs; trailing sentence punctuation is not part of the URL.
_URL = re.compile(r"https?://[^\s<>\"{}\\$^`|]*[^\s<>\"{}\\$^`|.,;:!?)\]'’”]")
_SAFE_URL = re.compile(r"https?://[^\s<>\"\\^`{|}\x00-\x1f\x7f]+\Z", re.I)
_URL_ESCAPES = re.compile(r"\\([_%#&~$])")
_INLINE_BODY = re.compile(r"((?:[^$\\]|\\.)*)\$", re.S)
_DISPLAY_BODY = re.compile(r"((?:[^$\\]|\\.|\$(?!\$))*)\$\$", re.S)
_PAREN_BODY = re.compile(r"((?:[^\\]|\\[^)])*)\\\)", re.S)
_BRACKET_BODY = re.compile(r"((?:[^\\]|\\[^\]])*)\\\]", re.S)
_DIGIT_LED = re.compile(r"\s*[0-9]")
_SENTENCE_END = re.compile(r"[.;!?]\s")
_TWO_WORDS = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}\s+[A-Za-z]{2,}")
_HEX_ENTITY = re.compile(r"&#x([0-9A-Fa-f]+);")

# ---------------------------------------------------------------------------------------------
# Parse tree
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Text:
    text: str


@dataclass(slots=True)
class _Math:
    tex: str  # formula body, without delimiters
    display: bool
    source: str  # as written, with delimiters (shown if conversion fails)


@dataclass(slots=True)
class _Styled:
    kind: str | None  # key of _MARKUP, or None for plain grouping
    children: list[_Node]


@dataclass(slots=True)
class _Link:
    url: str
    children: list[_Node]
    # \href{url}{text}: the link text differs from the URL, so a non-http(s) URL is shown
    # after the text rather than lost.
    has_label: bool


class _ParBreak:
    __slots__ = ()


_PAR = _ParBreak()
_Node = _Text | _Math | _Styled | _Link | _ParBreak


def _apply_accent(text: str, combining: str) -> str:
    """Put ``combining`` on the first character of ``text`` (TeX would centre it over all)."""
    base = text[0]
    if base in _DOTLESS and combining not in _ACCENTS_BELOW:
        base = _DOTLESS[base]
    return unicodedata.normalize("NFC", base + combining) + text[1:]


def _is_currency(body: str, following: str) -> bool:
    """Rule 3 of the currency heuristic in the module docstring."""
    if not _DIGIT_LED.match(body):
        return False
    return (
        following.isdigit()
        or body[-1].isspace()
        or _SENTENCE_END.search(body) is not None
        or _TWO_WORDS.search(body) is not None
    )


class _Parser:
    """Recursive-descent scanner from TeX source to a small node tree.

    One parse serves both the HTML and the text renderer.  Runs of ordinary characters are
    consumed by a single regex match, which keeps the Python-level loop short.
    """

    __slots__ = ("src", "pos", "n", "paragraphs")

    def __init__(self, src: str, paragraphs: bool) -> None:
        self.src = src
        self.pos = 0
        self.n = len(src)
        self.paragraphs = paragraphs

    def parse(self) -> list[_Node]:
        nodes: list[_Node] = []
        while self.pos < self.n:
            # At top level a stray '}' ends _seq early; skip it and keep going.
            more, _closed = self._seq(in_group=False, top=True)
            nodes.extend(more)
        return nodes

    # The core loop.  Returns the nodes and whether a closing brace ended the sequence.
    def _seq(self, in_group: bool, top: bool) -> tuple[list[_Node], bool]:
        out: list[_Node] = []
        src = self.src
        n = self.n
        while self.pos < n:
            m = _PLAIN.match(src, self.pos)
            if m is not None:
                out.append(_Text(m.group()))
                self.pos = m.end()
                continue
            c = src[self.pos]
            if c == "\\":
                closed = self._control(out, in_group)
                if closed is not None:  # a declaration consumed the rest of the group
                    return out, closed
            elif c == "{":
                self.pos += 1
                inner, _closed = self._seq(in_group=True, top=False)
                out.extend(inner)  # grouping braces vanish, unbalanced or not
            elif c == "}":
                self.pos += 1
                if in_group:
                    return out, True
                # A stray closing brace at top level: drop it, keep scanning.
            elif c == "$":
                self._dollar(out)
            elif c == "~":
                out.append(_Text("\u00a0"))
                self.pos += 1
            elif c == "-":
                m = _DASHES.match(src, self.pos)
                assert m is not None
                dashes = m.group()
                out.append(_Text({1: "-", 2: "–", 3: "—"}[len(dashes)]))
                self.pos = m.end()
            elif c == "`":
                if src.startswith("``", self.pos):
                    out.append(_Text("“"))
                    self.pos += 2
                else:
                    out.append(_Text("‘"))
                    self.pos += 1
            elif c == "'":
                if src.startswith("''", self.pos):
                    out.append(_Text("”"))
                    self.pos += 2
                else:
                    out.append(_Text("’"))
                    self.pos += 1
            elif c.isspace():
                m = _WS.match(src, self.pos)
                assert m is not None
                self.pos = m.end()
                if top and self.paragraphs and _PAR_BREAK.search(m.group()):
                    out.append(_PAR)
                else:
                    out.append(_Text(" "))
            else:  # 'h' starting a URL
                m = _URL.match(src, self.pos)
                if m is None:  # e.g. "http://" with nothing after it
                    out.append(_Text(c))
                    self.pos += 1
                else:
                    url = m.group()
                    end = m.end()
                    # Keep a closing parenthesis that belongs to the URL: …/Foo_(bar).
                    if url.count("(") > url.count(")") and src.startswith(")", end):
                        url += ")"
                        end += 1
                    out.append(_Link(url, [_Text(url)], has_label=False))
                    self.pos = end
        return out, False

    def _skip_spaces(self) -> None:
        m = _SPACES.match(self.src, self.pos)
        assert m is not None
        self.pos = m.end()

    def _group_arg(self) -> list[_Node] | None:
        """Parse a ``{…}`` argument after optional spaces; None if there is none."""
        save = self.pos
        self._skip_spaces()
        if self.pos < self.n and self.src[self.pos] == "{":
            self.pos += 1
            inner, _closed = self._seq(in_group=True, top=False)
            return inner
        self.pos = save
        return None

    def _raw_arg(self) -> str | None:
        """A brace-balanced verbatim argument (for URLs); None if absent or unterminated."""
        save = self.pos
        self._skip_spaces()
        src = self.src
        if self.pos >= self.n or src[self.pos] != "{":
            self.pos = save
            return None
        depth = 0
        i = self.pos
        while i < self.n:
            ch = src[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    arg = src[self.pos + 1 : i]
                    self.pos = i + 1
                    return arg
            i += 1
        self.pos = save
        return None

    def _control(self, out: list[_Node], in_group: bool) -> bool | None:
        """Handle a backslash sequence.  Returns non-None only for font declarations, which
        consume the rest of the enclosing group (the value is whether a '}' closed it)."""
        m = _CONTROL.match(self.src, self.pos)
        if m is None:  # lone backslash at the very end
            out.append(_Text("\\"))
            self.pos += 1
            return None
        self.pos = m.end()
        name, sym = m.group(1), m.group(2)
        if sym is not None:
            if sym in _ACCENTS:
                self._accent(out, sym)
            elif sym in _CONTROL_SYMBOLS:
                out.append(_Text(_CONTROL_SYMBOLS[sym]))
            elif sym == "(":
                self._delimited_math(out, _PAREN_BODY, display=False, opener="\\(")
            elif sym == "[":
                self._delimited_math(out, _BRACKET_BODY, display=True, opener="\\[")
            else:  # unknown control symbol, e.g. a stray "\)": show it
                out.append(_Text("\\" + sym))
            return None

        if name in _LETTERS:
            self._skip_spaces()
            out.append(_Text(_LETTERS[name]))
        elif name in _ACCENTS:
            self._accent(out, name)
        elif name in _SYMBOL_WORDS:
            # "\LaTeX{}" / "\ldots{}": the empty group is only there to stop TeX eating spaces.
            if self.src.startswith("{}", self.pos):
                self.pos += 2
            out.append(_Text(_SYMBOL_WORDS[name]))
        elif name in _STYLE_COMMANDS:
            arg = self._group_arg()
            if arg is None:
                out.append(_Text("\\" + name))
            else:
                out.append(_Styled(_STYLE_COMMANDS[name], arg))
        elif name in _DECLARATIONS:
            self._skip_spaces()
            inner, closed = self._seq(in_group=in_group, top=False)
            out.append(_Styled(_DECLARATIONS[name], inner))
            return closed
        elif name == "url":
            self._url(out)
        elif name == "href":
            self._href(out)
        elif name in _NO_OUTPUT:
            pass
        elif name in _SPACE_WORDS:
            out.append(_Text(" "))
        else:
            self._unknown(out, name)
        return None

    def _unknown(self, out: list[_Node], name: str) -> None:
        # Show the macro and its directly attached {arguments} with their braces, so
        # "\foo{bar}" reads "\foo{bar}".  Contents are still typeset (accents, maths…).
        out.append(_Text("\\" + name))
        while self.pos < self.n and self.src[self.pos] == "{":
            self.pos += 1
            out.append(_Text("{"))
            inner, closed = self._seq(in_group=True, top=False)
            out.extend(inner)
            if closed:
                out.append(_Text("}"))

    def _accent(self, out: list[_Node], key: str) -> None:
        combining = _ACCENTS[key]
        self._skip_spaces()
        src = self.src
        if self.pos >= self.n:
            out.append(_Text(_SPACING_ACCENTS[key]))
            return
        c = src[self.pos]
        if c == "{":
            self.pos += 1
            inner, _closed = self._seq(in_group=True, top=False)
            first = inner[0] if inner else None
            if isinstance(first, _Text) and first.text.strip():
                inner[0] = _Text(_apply_accent(first.text.lstrip(), combining))
            else:  # "\'{}" or an accent over maths: show the accent itself
                out.append(_Text(_SPACING_ACCENTS[key]))
            out.extend(inner)
        elif c == "\\":
            m = _CONTROL.match(src, self.pos)
            if m is not None and m.group(1) in _LETTERS:
                self.pos = m.end()
                self._skip_spaces()
                out.append(_Text(_apply_accent(_LETTERS[m.group(1)], combining)))
            else:
                out.append(_Text(_SPACING_ACCENTS[key]))
        elif c in "}$" or c.isspace():
            out.append(_Text(_SPACING_ACCENTS[key]))
        else:
            self.pos += 1
            out.append(_Text(_apply_accent(c, combining)))

    def _url(self, out: list[_Node]) -> None:
        raw = self._raw_arg()
        if raw is None:
            out.append(_Text("\\url"))
            return
        url = _URL_ESCAPES.sub(r"\1", raw).strip()
        out.append(_Link(url, [_Text(url)], has_label=False))

    def _href(self, out: list[_Node]) -> None:
        raw = self._raw_arg()
        if raw is None:
            out.append(_Text("\\href"))
            return
        url = _URL_ESCAPES.sub(r"\1", raw).strip()
        label = self._group_arg()
        if label is None:
            out.append(_Link(url, [_Text(url)], has_label=False))
        else:
            out.append(_Link(url, label, has_label=True))

    def _dollar(self, out: list[_Node]) -> None:
        src = self.src
        start = self.pos
        if src.startswith("$$", start):
            m = _DISPLAY_BODY.match(src, start + 2)
            if m is not None and m.group(1).strip():
                out.append(_Math(m.group(1), True, src[start : m.end()]))
                self.pos = m.end()
                return
            # No closing "$$": the first '$' is text; the second is examined on its own.
            out.append(_Text("$"))
            self.pos = start + 1
            return
        self.pos = start + 1
        if start > 0 and src[start - 1].isalpha() and _DIGIT_LED.match(src, start + 1):
            # US$5, A$ 10.  (Letters before maths are common too: H$\alpha$, M$_\odot$.)
            out.append(_Text("$"))
            return
        m = _INLINE_BODY.match(src, start + 1)
        if m is None:
            out.append(_Text("$"))
            return
        body = m.group(1)
        following = src[m.end()] if m.end() < self.n else ""
        if (
            not body.strip()
            or (self.paragraphs and _PAR_BREAK.search(body))
            or _is_currency(body, following)
        ):
            out.append(_Text("$"))
            return
        out.append(_Math(body, False, src[start : m.end()]))
        self.pos = m.end()

    def _delimited_math(
        self, out: list[_Node], body_re: re.Pattern[str], display: bool, opener: str
    ) -> None:
        start = self.pos - 2
        m = body_re.match(self.src, self.pos)
        if m is None or not m.group(1).strip():
            out.append(_Text(opener))
            return
        out.append(_Math(m.group(1), display, self.src[start : m.end()]))
        self.pos = m.end()


def _parse(source: str, paragraphs: bool) -> list[_Node]:
    return _Parser(source.strip(), paragraphs).parse()


# ---------------------------------------------------------------------------------------------
# MathML: latex2mathml, then repairs for what it gets wrong, then our own serialiser
# ---------------------------------------------------------------------------------------------


class _Unconvertible(Exception):
    """latex2mathml produced something we will not show as MathML."""


_TOKEN_TAGS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
_SCRIPT_TAGS = frozenset({"msup", "msub", "msubsup"})
# Exact child counts MathML requires; latex2mathml happily emits e.g. a one-child mfrac.
_ARITY = {
    "mfrac": 2, "msup": 2, "msub": 2, "msubsup": 3, "mroot": 2, "munder": 2, "mover": 2,
    "munderover": 3,
}  # fmt: skip
_NAMED_SPACES = {
    "veryverythinmathspace": "0.056em", "verythinmathspace": "0.111em",
    "thinmathspace": "0.167em", "mediummathspace": "0.222em", "thickmathspace": "0.278em",
    "verythickmathspace": "0.333em", "veryverythickmathspace": "0.389em",
}  # fmt: skip
_NAMED_SPACES |= {"negative" + k: "-" + v for k, v in _NAMED_SPACES.items()}

# Macros latex2mathml does not know but which are common in abstracts; replaced by input that
# it does handle.  Word boundary: not followed by a letter.
_MATH_PRE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\\AA(?![A-Za-z])"), "\\text{Å}"),
    (re.compile(r"\\(?:textdegree|degr)(?![A-Za-z])"), "\\degree"),
    # Astronomy (A&A/AAS) angle macros: 0\farcs5 is 0″.5.
    (re.compile(r"\\arcsec(?![A-Za-z])"), "\\text{″}"),
    (re.compile(r"\\arcmin(?![A-Za-z])"), "\\text{′}"),
    (re.compile(r"\\farcs(?![A-Za-z])"), "\\text{″.}"),
    (re.compile(r"\\farcm(?![A-Za-z])"), "\\text{′.}"),
    (re.compile(r"\\fdg(?![A-Za-z])"), "\\text{°.}"),
)
# \textsc in maths ("\mathrm{H\,\textsc{i}}" for neutral hydrogen): capitals are the closest
# plain-text rendering of small capitals.
_MATH_TEXTSC = re.compile(r"\\textsc\s*\{([^{}\\]*)\}")


def _decode(text: str | None) -> tuple[str, bool]:
    """latex2mathml stores symbols as literal "&#x…;" strings; turn them into characters.
    Also report whether the text was such an entity (used to spot ``\\mathrm{X}``)."""
    if not text:
        return "", False
    if "&#" not in text:
        return text, False
    decoded = _HEX_ENTITY.sub(lambda m: chr(int(m.group(1), 16)), text)
    if "&#" in decoded:  # e.g. "\unicode{x}" gives "&#x;"
        raise _Unconvertible(text)
    return decoded, True


def _is_empty(el: Element) -> bool:
    return len(el) == 0 and not (el.text or "").strip()


# Letterlike-block characters that fill the holes of the Mathematical Alphanumeric block.
_ALNUM_HOLES = {
    ("ITALIC", "h"): "ℎ", ("SCRIPT", "B"): "ℬ", ("SCRIPT", "E"): "ℰ", ("SCRIPT", "F"): "ℱ",
    ("SCRIPT", "H"): "ℋ", ("SCRIPT", "I"): "ℐ", ("SCRIPT", "L"): "ℒ", ("SCRIPT", "M"): "ℳ",
    ("SCRIPT", "R"): "ℛ", ("SCRIPT", "e"): "ℯ", ("SCRIPT", "g"): "ℊ", ("SCRIPT", "o"): "ℴ",
    ("FRAKTUR", "C"): "ℭ", ("FRAKTUR", "H"): "ℌ", ("FRAKTUR", "I"): "ℑ", ("FRAKTUR", "R"): "ℜ",
    ("FRAKTUR", "Z"): "ℨ", ("DOUBLE-STRUCK", "C"): "ℂ", ("DOUBLE-STRUCK", "H"): "ℍ",
    ("DOUBLE-STRUCK", "N"): "ℕ", ("DOUBLE-STRUCK", "P"): "ℙ", ("DOUBLE-STRUCK", "Q"): "ℚ",
    ("DOUBLE-STRUCK", "R"): "ℝ", ("DOUBLE-STRUCK", "Z"): "ℤ",
}  # fmt: skip
# mathvariant value → the style word in Unicode character names.
_VARIANT_STYLE = {
    "bold": "BOLD", "italic": "ITALIC", "bold-italic": "BOLD ITALIC", "script": "SCRIPT",
    "bold-script": "BOLD SCRIPT", "fraktur": "FRAKTUR", "bold-fraktur": "BOLD FRAKTUR",
    "double-struck": "DOUBLE-STRUCK", "sans-serif": "SANS-SERIF",
    "bold-sans-serif": "SANS-SERIF BOLD", "sans-serif-italic": "SANS-SERIF ITALIC",
    "sans-serif-bold-italic": "SANS-SERIF BOLD ITALIC", "monospace": "MONOSPACE",
}  # fmt: skip


@functools.lru_cache(maxsize=2048)
def _styled_char(style: str, ch: str) -> str | None:
    """The Mathematical Alphanumeric Symbol for ``ch`` in ``style``, or None."""
    if (style, ch) in _ALNUM_HOLES:
        return _ALNUM_HOLES[(style, ch)]
    try:
        name = unicodedata.name(ch)
    except ValueError:
        return None
    for prefix, kind in (("LATIN CAPITAL LETTER ", "CAPITAL"), ("LATIN SMALL LETTER ", "SMALL"),
                         ("DIGIT ", "DIGIT"), ("GREEK CAPITAL LETTER ", "CAPITAL"),
                         ("GREEK SMALL LETTER ", "SMALL")):  # fmt: skip
        if name.startswith(prefix):
            rest = name[len(prefix) :]
            if " " in rest:  # accented letters have no mathematical forms
                return None
            try:
                return unicodedata.lookup(f"MATHEMATICAL {style} {kind} {rest}")
            except KeyError:
                return None
    return None


def _apply_mathvariant(el: Element, text: str) -> str:
    # MathML Core (Chrome) honours only mathvariant="normal"; other variants are expressed
    # with the Mathematical Alphanumeric Symbols instead, which every browser renders.
    variant = el.get("mathvariant")
    style = _VARIANT_STYLE.get(variant or "")
    if style is None or el.tag == "mtext":
        return text
    styled = [_styled_char(style, ch) for ch in text]
    if all(styled):
        del el.attrib["mathvariant"]
        return "".join(c for c in styled if c)
    return text


def _fix_token(el: Element, parent_tag: str, index: int) -> None:
    text, from_entity = _decode(el.text)
    tag = el.tag
    if text.startswith("\\"):
        raise _Unconvertible(text)  # an unknown macro, echoed back by latex2mathml
    if tag == "mi" and len(text) == 1:
        if text == "~":  # latex2mathml renders \sim as a tilde identifier
            el.tag, text = "mo", "\u223c"
        else:
            category = unicodedata.category(text)
            if category == "Sm" or text in ":;":  # ±, ∓, ¬, |, ":" are operators in TeX
                el.tag = "mo"
            elif category in ("Ps", "Pe"):  # ⟨ ⟩ { }
                el.tag = "mo"
                el.set("stretchy", "false")
            elif (
                from_entity
                and "mathvariant" not in el.attrib
                and ((text.isascii() and text.isalpha()) or "\u0391" <= text <= "\u03a9")
            ):
                # A single letter that went through the symbol table came from \mathrm{X}, and
                # TeX sets capital Greek (\Gamma) upright; MathML would make both italic.
                el.set("mathvariant", "normal")
    elif (
        tag == "mo"
        and len(text) > 1
        and text.isalpha()
        and "movablelimits" not in el.attrib
        and not (index == 0 and parent_tag in _SCRIPT_TAGS | {"munder", "munderover"})
    ):
        # \operatorname{Tr}: a multi-letter <mi> renders upright without operator spacing.
        el.tag = "mi"
    elif tag == "mo" and text == "\u2015":
        # \overline: U+2015 does not stretch; the overline character does.
        text = "\u203e"
        el.set("stretchy", "true")
    if "mathvariant" in el.attrib:
        text = _apply_mathvariant(el, text)
    el.text = text


def _fix_children(el: Element) -> None:
    """Sibling-level repairs: prescripts and digit groups."""
    children = list(el)
    if not children:
        return
    new: list[Element] = []
    i = 0
    changed = False
    while i < len(children):
        ch = children[i]
        nxt = children[i + 1] if i + 1 < len(children) else None
        if (
            ch.tag in _SCRIPT_TAGS
            and len(ch) == _ARITY[ch.tag]
            and _is_empty(ch[0])
            and nxt is not None
            and el.tag not in _SCRIPT_TAGS | {"mfrac", "mroot", "munder", "mover", "munderover"}
        ):
            # {}^{235}U or ^{3}He: an empty base followed by the nucleus is a prescript.
            multi = Element("mmultiscripts")
            multi.append(nxt)
            multi.append(Element("mprescripts"))
            if ch.tag == "msup":
                multi.extend([Element("none"), ch[1]])
            elif ch.tag == "msub":
                multi.extend([ch[1], Element("none")])
            else:
                multi.extend([ch[1], ch[2]])
            new.append(multi)
            i += 2
            changed = True
            continue
        if (
            ch.tag == "mn"
            and nxt is not None
            and nxt.tag == "mrow"
            and len(nxt) == 1
            and nxt[0].tag == "mo"
            and nxt[0].text in (",", ".")
            and i + 2 < len(children)
            and children[i + 2].tag == "mn"
        ):
            # 10{,}000: one number, not "10" "," "000" with separator spacing.
            merged = Element("mn", dict(ch.attrib))
            merged.text = (ch.text or "") + nxt[0].text + (children[i + 2].text or "")
            children[i + 2] = merged
            i += 2
            changed = True
            continue
        operator_name = ch.tag == "mi" and len(ch.text or "") > 1 and (ch.text or "").isalpha()
        # n \log n: TeX puts thin spaces around an operator name next to ordinary symbols;
        # browsers draw adjacent <mi>s touching ("nlogn").
        if operator_name and new and new[-1].tag not in ("mo", "mspace"):
            new.append(Element("mspace", {"width": "0.1667em"}))
            changed = True
        new.append(ch)
        if operator_name and nxt is not None and nxt.tag != "mo":
            new.append(Element("mspace", {"width": "0.1667em"}))
            changed = True
        i += 1
    if changed:
        el[:] = new


def _repair(el: Element, parent_tag: str = "", index: int = 0) -> None:
    tag = el.tag
    if tag not in _MATHML_TAGS:
        raise _Unconvertible(tag)
    if (el.tail or "").strip() or (tag not in _TOKEN_TAGS and (el.text or "").strip()):
        raise _Unconvertible(tag)  # stray text outside token elements: not valid MathML
    if tag in _TOKEN_TAGS:
        if len(el):
            # \mathrel{=} yields <mo><mrow><mo>=</mo></mrow></mo>; tokens hold only text.
            el.tag = "mrow"
            el.attrib.clear()
            if (el.text or "").strip():
                raise _Unconvertible(el.text)
        else:
            _fix_token(el, parent_tag, index)
            return
    if tag == "mspace":
        width = el.get("width")
        if width in _NAMED_SPACES:
            el.set("width", _NAMED_SPACES[width])
    for i, child in enumerate(el):
        _repair(child, el.tag, i)
    # After the children, so that their entity text is already decoded.
    _fix_children(el)
    expected = _ARITY.get(el.tag)
    if expected is not None and len(el) != expected:
        raise _Unconvertible(el.tag)  # e.g. \frac{a} with one argument
    if el.tag == "mrow" and len(el) == 1 and el[0].tag == "mo" and parent_tag != "math":
        # {=} and {,}: braces make TeX treat the operator as ordinary, i.e. without spacing.
        el[0].set("lspace", "0")
        el[0].set("rspace", "0")


def _serialize(el: Element, parts: list[str]) -> None:
    tag = el.tag
    allowed = _ATTRS_BY_TAG[tag]
    attrs = "".join(f' {k}="{html.escape(v)}"' for k, v in el.attrib.items() if k in allowed)
    parts.append(f"<{tag}{attrs}>")
    if el.text:
        parts.append(html.escape(el.text, quote=False))
    for child in el:
        _serialize(child, parts)
        if child.tail:
            parts.append(html.escape(child.tail, quote=False))
    parts.append(f"</{tag}>")


# ~1 KB per entry: bounded so a long-running web process stays small.
@functools.lru_cache(maxsize=8192)
def _convert_math(tex: str, display: bool) -> str | None:
    """MathML for one formula body, or None if it cannot be converted faithfully.

    Cached: abstracts repeat formulas ($N$, $\\sim$…) and ingest re-renders whole batches.
    """
    prepared = tex
    if "\\" in prepared:
        for pattern, replacement in _MATH_PRE:
            prepared = pattern.sub(lambda _m, r=replacement: r, prepared)
        prepared = _MATH_TEXTSC.sub(lambda m: "\\text{" + m.group(1).upper() + "}", prepared)
    try:
        root = convert_to_element(prepared, display="block" if display else "inline")
        # root is <math><mrow>…</mrow></math>
        (row,) = list(root)
        _repair(row, "math", 0)
    except Exception:  # latex2mathml errors, RecursionError on deep nesting, _Unconvertible
        return None
    parts: list[str] = ['<math display="block">' if display else "<math>", "<semantics>"]
    _serialize(row, parts)
    parts.append('<annotation encoding="application/x-tex">')
    parts.append(html.escape(tex, quote=False))
    parts.append("</annotation></semantics></math>")
    return "".join(parts)


def _math_html(node: _Math) -> str:
    tex = _ASCII_WS.sub(" ", node.tex).strip()
    converted = _convert_math(tex, node.display)
    if converted is None:
        return '<code class="tex">' + html.escape(node.source, quote=False) + "</code>"
    return converted


# ---------------------------------------------------------------------------------------------
# Rendering
# ---------------------------------------------------------------------------------------------


def _is_safe_url(url: str) -> bool:
    return _SAFE_URL.match(url) is not None


def _render_html(nodes: list[_Node], parts: list[str], in_link: bool = False) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            parts.append(html.escape(node.text, quote=False))
        elif isinstance(node, _Math):
            parts.append(_math_html(node))
        elif isinstance(node, _Styled):
            if node.kind is None:
                _render_html(node.children, parts, in_link)
            else:
                open_tag, close_tag = _MARKUP[node.kind]
                parts.append(open_tag)
                _render_html(node.children, parts, in_link)
                parts.append(close_tag)
        elif isinstance(node, _Link):
            if in_link or not _is_safe_url(node.url):
                # Not linkable (nested link, or a scheme other than http/https): show as text.
                _render_html(node.children, parts, True)
                if node.has_label and not in_link:
                    parts.append(" (" + html.escape(node.url, quote=False) + ")")
            else:
                parts.append(f'<a href="{html.escape(node.url)}" rel="nofollow noopener">')
                _render_html(node.children, parts, True)
                parts.append("</a>")
        # _ParBreak only occurs at top level and is handled by the caller.


def _split_paragraphs(nodes: list[_Node]) -> list[list[_Node]]:
    paragraphs: list[list[_Node]] = [[]]
    for node in nodes:
        if node is _PAR:
            paragraphs.append([])
        else:
            paragraphs[-1].append(node)
    return paragraphs


def _finish(text: str) -> str:
    # Collapse ASCII whitespace only: U+00A0 from "~" is deliberate and must survive.
    return unicodedata.normalize("NFC", _ASCII_WS.sub(" ", text)).strip(" ")


def tex_to_html(source: str, *, paragraphs: bool = True) -> str:
    """Typeset an arXiv title or abstract as a sanitised HTML fragment.

    * Text-mode TeX (accents, ``\\emph``/``\\textbf``/…, dashes, quotes, ``~``, escaped
      specials, ``\\url``/``\\href``) becomes Unicode text and ``em``/``strong``/``code``/
      ``span.smallcaps``/``a`` markup.  Unknown macros are shown as their source.
    * Maths (``$…$``, ``$$…$$``, ``\\(…\\)``, ``\\[…\\]``) becomes ``<math>`` (MathML Core,
      ``display="block"`` for display maths) with the TeX kept in an ``annotation``; a formula
      that cannot be converted is shown as ``<code class="tex">`` holding its source.
    * Paragraphs: the result is wrapped in ``<p>`` elements **only** when the source has more
      than one non-empty paragraph (a newline followed by indentation, arXiv's "\\n  ", or a
      blank line).  Otherwise it is inline HTML that can go inside ``<h1>``/``<a>``.  Pass
      ``paragraphs=False`` for titles: arXiv wraps long titles with "\\n  " as well, so the
      break must not be read as a paragraph there.
    * Runs of whitespace collapse to one space; the result is stripped and NFC-normalised.

    Never raises; the result always satisfies ``sanitize(result) == result``.
    """
    if not source:
        return ""
    try:
        return _tex_to_html(source, paragraphs)
    except RecursionError:  # braces or \emph nested hundreds deep: show the source
        pass
    except Exception:  # a bug here must not break ingest; log it and show the source
        _log.exception("tex_to_html failed; showing the source as text")
    return sanitize(_finish(html.escape(source, quote=False)))


def _tex_to_html(source: str, paragraphs: bool) -> str:
    rendered: list[str] = []
    for paragraph in _split_paragraphs(_parse(source, paragraphs)):
        parts: list[str] = []
        _render_html(paragraph, parts)
        text = _finish("".join(parts))
        if text:
            rendered.append(text)
    if len(rendered) > 1:
        out = "".join(f"<p>{p}</p>" for p in rendered)
    else:
        out = rendered[0] if rendered else ""
    return sanitize(out)


# ---------------------------------------------------------------------------------------------
# Plain text
# ---------------------------------------------------------------------------------------------

_GREEK_LOWER = [
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega",
]  # fmt: skip
# Only these capitals have TeX macros (the others look Latin).
_GREEK_UPPER = [
    "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Phi", "Psi", "Omega",
]  # fmt: skip


def _greek(name: str) -> str:
    # Unicode spells lambda "LAMDA".
    case = "CAPITAL" if name[0].isupper() else "SMALL"
    return unicodedata.lookup(f"GREEK {case} LETTER {name.upper().replace('LAMBDA', 'LAMDA')}")


# Escaped braces stand in as private-use characters while grouping braces are being removed.
_LBRACE, _RBRACE = "\ue000", "\ue001"
_MATH_ORD: dict[str, str] = {name: _greek(name) for name in _GREEK_LOWER + _GREEK_UPPER}
_MATH_ORD |= {
    "varepsilon": "ε", "vartheta": "ϑ", "varphi": "φ", "varpi": "ϖ", "varrho": "ϱ",
    "varsigma": "ς", "hbar": "ℏ", "ell": "ℓ", "infty": "∞", "partial": "∂", "nabla": "∇",
    "prime": "′", "degree": "°", "odot": "⊙", "dagger": "†", "AA": "Å", "emptyset": "∅",
    "aleph": "ℵ", "Re": "ℜ", "Im": "ℑ", "ldots": "…", "dots": "…", "cdots": "⋯",
    "star": "⋆", "sun": "☉", "arcsec": "″", "arcmin": "′", "farcs": "″.", "farcm": "′.",
    "fdg": "°.", "degr": "°", "textdegree": "°",
}  # fmt: skip
_MATH_ORD |= {
    "sum": "∑", "prod": "∏", "int": "∫", "oint": "∮", "forall": "∀", "exists": "∃",
    "langle": "⟨", "rangle": "⟩", "neg": "¬", "lbrace": _LBRACE, "rbrace": _RBRACE, "vert": "|",
    "Vert": "‖", "ast": "∗", "circ": "∘",
}  # fmt: skip
# Binary operators and relations: written with a space on each side ("3 × 10⁵", "a ≤ b").
_MATH_OP: dict[str, str] = {
    "times": "×", "pm": "±", "mp": "∓", "sim": "∼", "simeq": "≃", "approx": "≈", "cong": "≅",
    "equiv": "≡", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠",
    "ll": "≪", "gg": "≫", "lesssim": "≲", "gtrsim": "≳", "propto": "∝", "to": "→",
    "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒", "leftrightarrow": "↔",
    "Leftrightarrow": "⇔", "mapsto": "↦", "cdot": "·", "in": "∈", "notin": "∉",
    "subset": "⊂", "subseteq": "⊆", "supset": "⊃", "cup": "∪", "cap": "∩", "otimes": "⊗",
    "oplus": "⊕", "div": "÷", "mid": "∣", "lt": "<", "gt": ">", "wedge": "∧", "vee": "∨",
    "perp": "⊥", "parallel": "∥",
}  # fmt: skip
# \log, \sin…: upright words; the space after them separates them from the argument.
_MATH_FUNCTIONS = frozenset(
    {
        "log", "ln", "lg", "exp", "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh",
        "tanh", "coth", "arcsin", "arccos", "arctan", "lim", "liminf", "limsup", "max", "min",
        "sup", "inf", "det", "dim", "ker", "deg", "gcd", "arg", "Pr", "hom", "bmod", "mod",
    }
)  # fmt: skip
_MATH_SPACES = {",": "\u2009", ";": " ", ":": " ", " ": " ", "!": "", "{": _LBRACE, "}": _RBRACE,
                "%": "%", "$": "$", "&": "&", "#": "#", "_": "_", "|": "‖"}  # fmt: skip
_MATH_FONT = re.compile(
    r"\\(?:mathrm|mathit|mathbf|mathsf|mathtt|mathcal|mathscr|mathfrak|mathnormal|boldsymbol"
    r"|bm|pmb|mathbb|text|textrm|textit|textbf|textsc|mbox|operatorname|rm|it|bf)"
    r"\s*\{([^{}]*)\}"
)
# Old-style font switches, as in "{\rm GeV}" and "{\cal O}".
_MATH_OLD_FONT = re.compile(r"\\(?:rm|it|bf|cal|sf|tt|mit|scr)(?![A-Za-z])\s*")
# Braces that only group ("{GeV}" once the switch is gone), i.e. not a macro's argument and
# not a script.
_MATH_BARE_GROUP = re.compile(r"(?<![\\\w}^_])\{([^{}\\]*)\}")
_MATH_BB = re.compile(r"\\mathbb\s*\{([A-Z])\}")
_BB = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "P": "ℙ", "H": "ℍ"}
_MATH_SIZING = re.compile(r"\\(?:left|right|[bB]igg?[lrm]?)(?![A-Za-z])\s*\.?")
# "{,}" and "{=}" lose their braces, unless they are a macro's argument ("\mathrel{=}").
_MATH_BRACED_OP = re.compile(r"(\\[A-Za-z]+\s*)?(?<!\\)\{([,.=+\-<>:;])\}")
_MATH_EMPTY_GROUP = re.compile(r"(?<!\\)\{\}")
_MATH_CONTROL = re.compile(r"\\(?:([A-Za-z]+)( *)|(.))", re.S)
_SUPERSCRIPTS = dict(zip("0123456789+-−=()ni′∘", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ⁿⁱ′°", strict=True))
_SUBSCRIPTS = dict(zip("0123456789+-−=()", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎", strict=True))
_SCRIPT = re.compile(r"([\^_])(?:\{([^{}]*)\}|([^{}\\\s]))")


def _math_control_text(m: re.Match[str]) -> str:
    name, spaces, sym = m.group(1), m.group(2), m.group(3)
    if sym is not None:
        return _MATH_SPACES.get(sym, "\\" + sym)
    if name in _MATH_ORD:
        return _MATH_ORD[name]  # spaces after a letter-like macro carry no meaning in TeX
    if name in _MATH_FUNCTIONS:
        start = m.start()
        glued = start > 0 and m.string[start - 1].isalnum()  # "n\log n" → "n log n"
        return (" " if glued else "") + name + spaces
    if name in _MATH_OP:
        return " " + _MATH_OP[name] + " "  # doubled spaces are collapsed later
    return "\\" + name + spaces


def _script_text(m: re.Match[str]) -> str:
    body = m.group(2) if m.group(2) is not None else m.group(3)
    table = _SUPERSCRIPTS if m.group(1) == "^" else _SUBSCRIPTS
    if body and all(ch in table for ch in body):
        return "".join(table[ch] for ch in body)
    return m.group(0)


@functools.lru_cache(maxsize=16384)
def _math_text(tex: str) -> str:
    """Readable Unicode for a formula: symbols and simple scripts converted, the rest kept as
    TeX source (without the $ delimiters)."""
    text = _ASCII_WS.sub(" ", tex).strip()
    text = _MATH_BB.sub(lambda m: _BB.get(m.group(1), m.group(0)), text)
    text = _MATH_SIZING.sub("", text)
    text = _MATH_BRACED_OP.sub(lambda m: m.group(0) if m.group(1) else m.group(2), text)
    text = _MATH_OLD_FONT.sub("", text)
    # Symbols before fonts, so that "\mu\mathrm{m}" cannot turn into the macro "\mum".
    text = _MATH_CONTROL.sub(_math_control_text, text)
    text = _SCRIPT.sub(_script_text, text)  # before fonts: \mathrm{km\,s^{-1}} has braces
    for _ in range(8):  # innermost-first; nesting deeper than this is left as source
        new = _MATH_FONT.sub(r"\1", text)
        if new == text:
            break
        text = new
    text = _MATH_EMPTY_GROUP.sub("", text)
    text = _MATH_BARE_GROUP.sub(r"\1", text)
    text = _SCRIPT.sub(_script_text, text)
    text = text.replace("~", "\u00a0").replace(_LBRACE, "{").replace(_RBRACE, "}")
    return _ASCII_WS.sub(" ", text).strip(" ")


def _render_text(nodes: list[_Node], parts: list[str]) -> None:
    for node in nodes:
        if isinstance(node, _Text):
            parts.append(node.text)
        elif isinstance(node, _Math):
            parts.append(_math_text(node.tex))
        elif isinstance(node, _Styled):
            _render_text(node.children, parts)
        elif isinstance(node, _Link):
            _render_text(node.children, parts)
            if node.has_label and not _is_safe_url(node.url):
                parts.append(f" ({node.url})")
        else:  # paragraph break
            parts.append(" ")


def tex_to_text(source: str) -> str:
    """Plain Unicode text for author names, search, feeds and ``<title>``.

    Same text-mode rules as :func:`tex_to_html` but without markup and without HTML escaping
    (templates escape).  Maths keeps a readable Unicode form where that is easy (Greek
    letters, ×, ±, ∼, ≤, simple super/subscripts such as ``10⁻³``); anything else stays as
    its TeX source minus the ``$`` delimiters.  Link targets of ``\\href`` are dropped for
    http(s) links (the text is what is read) and kept in parentheses otherwise.  All
    whitespace, including paragraph breaks, collapses to single spaces; ``~`` stays a
    non-breaking space.  Never raises and never drops text.
    """
    if not source:
        return ""
    try:
        parts: list[str] = []
        _render_text(_parse(source, paragraphs=False), parts)
        return _finish("".join(parts))
    except RecursionError:  # absurdly deep nesting: the source is the best text we have
        pass
    except Exception:
        _log.exception("tex_to_text failed; returning the source")
    return _finish(source)
