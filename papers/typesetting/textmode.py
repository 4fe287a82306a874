"""Text-mode TeX → a small node tree (text, maths, styled runs, links, paragraph breaks).

arXiv metadata is written in a loose dialect of LaTeX that is never actually compiled, so the
scanner is forgiving: anything not understood stays as its source, and a bare ``%`` is a percent
sign, never a comment (abstracts are not TeX files).  What a macro stands for (``\\"o``, ``\\ss``,
``\\ldots``) is pylatexenc's answer (:mod:`.symbols`); markup, links, maths and dollars are ours.

Which ``$`` signs delimit maths (and which are money, or a sign an author left unbalanced) is
decided for the whole text before scanning, by :mod:`.formulas`; the scanner emits the formulas
it planned.  A line break inside a formula is part of it, not a paragraph break.
"""

from __future__ import annotations

import re
import unicodedata

from . import symbols
from .formulas import plan
from .nodes import PAR, Link, Math, Node, Styled, Text

# ---------------------------------------------------------------------------------------------
# Text-mode tables (letters, symbols and accents come from pylatexenc, see .symbols)
# ---------------------------------------------------------------------------------------------

# Stand-alone (spacing) forms for an accent with nothing to sit on, e.g. ``\~{}``; pylatexenc
# drops such an accent.  Other accents (``\hat{}``) are shown as their source.
_SPACING_ACCENTS: dict[str, str] = {
    "'": "\u00b4", "`": "`", '"': "\u00a8", "^": "^", "~": "~", "=": "\u00af", ".": "\u02d9",
    "c": "\u00b8", "v": "\u02c7", "u": "\u02d8", "r": "\u02da", "H": "\u02dd", "k": "\u02db",
    "d": ".", "b": "_", "t": "\u2040",
}  # fmt: skip
# Accents drawn below the letter keep the dot of i/j; the others replace it (\'{\i} → í).
_ACCENTS_BELOW = frozenset({"\u0327", "\u0328", "\u0323", "\u0331"})
_DOTLESS = {"ı": "i", "ȷ": "j"}

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


# ---------------------------------------------------------------------------------------------
# Regexes (compiled once)
# ---------------------------------------------------------------------------------------------

# A run of characters with no special meaning.  'h' is only special when it starts a URL.
# Spaces and tabs are included (they are collapsed at the end) so that a line of prose is one
# match; line breaks are not, because "\n  " may be a paragraph break.
_PLAIN = re.compile(r"(?:[^\\{}$~\-`'\n\r\f\vh]|h(?!ttps?://))+")
_WS = re.compile(r"\s+")
_PAR_BREAK = re.compile(r"\n[ \t]|\n[ \t\r\f\v]*\n")
_SPACES = re.compile(r"[ \t]*")
_CONTROL = re.compile(r"\\(?:([A-Za-z]+)|(.))", re.S)
_SPECIALS = re.compile(r"~|-{1,3}|``?|''?")
# What they read as: pylatexenc's no-break space, dashes (-, –, —) and double quotes (“ ”); a
# single quote, which pylatexenc leaves as ASCII, is curled (‘ ’).
_SPECIAL_TEXT = {chars: symbols.fragment(chars) for chars in ("~", "-", "--", "---", "``", "''")}
_SPECIAL_TEXT |= {"`": "‘", "'": "’"}
# Bare URLs; trailing sentence punctuation is not part of the URL.
_URL = re.compile(r"https?://[^\s<>\"{}\\$^`|]*[^\s<>\"{}\\$^`|.,;:!?)\]'’”]")
_URL_ESCAPES = re.compile(r"\\([_%#&~$])")


def _bears_accent(text: str, combining: str) -> bool:
    # \not strikes out a relation (\not\mid is ∤); other accents sit on letters.
    return len(text) == 1 and (text.isalpha() or (combining == "\u0338" and not text.isspace()))


def _apply_accent(text: str, combining: str) -> str:
    """Put ``combining`` on the first character of ``text`` (TeX would centre it over all)."""
    base = text[0]
    if base in _DOTLESS and combining not in _ACCENTS_BELOW:
        base = _DOTLESS[base]
    return unicodedata.normalize("NFC", base + combining) + text[1:]


class _Parser:
    """Recursive-descent scanner from TeX source to a small node tree.

    One parse serves both the HTML and the text renderer.  Runs of ordinary characters are
    consumed by a single regex match, which keeps the Python-level loop short.
    """

    __slots__ = ("src", "pos", "n", "paragraphs", "formulas", "glued", "next_glued")

    def __init__(self, src: str, paragraphs: bool) -> None:
        self.src = src
        self.pos = 0
        self.n = len(src)
        self.paragraphs = paragraphs
        self.formulas = plan(src)
        # Formulas that do not start at a "$" (\(, an environment, maths missing its opening
        # sign or written with none): the scanner must stop there even inside a run of text.
        self.glued = sorted(start for start in self.formulas if src[start] != "$")
        self.glued.append(self.n)
        self.glued.reverse()  # popped from the end, nearest first
        self.next_glued = self.glued.pop()

    def parse(self) -> list[Node]:
        nodes: list[Node] = []
        while self.pos < self.n:
            # At top level a stray '}' ends _seq early; skip it and keep going.
            more, _closed = self._seq(in_group=False, top=True)
            nodes.extend(more)
        return nodes

    # The core loop.  Returns the nodes and whether a closing brace ended the sequence.
    def _seq(self, in_group: bool, top: bool) -> tuple[list[Node], bool]:
        out: list[Node] = []
        src = self.src
        n = self.n
        while self.pos < n:
            if self.next_glued <= self.pos:
                if self.next_glued == self.pos:
                    self._formula(out)
                    continue
                # Passed inside something consumed whole (a macro's argument): its stray
                # sign, if met, is shown as a dollar sign.
                self.next_glued = self.glued.pop()
                continue
            m = _PLAIN.match(src, self.pos, self.next_glued)
            if m is not None:
                out.append(Text(m.group()))
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
            elif c in "~-`'":
                self._special(out, c)
            elif c.isspace():
                m = _WS.match(src, self.pos)
                assert m is not None
                self.pos = m.end()
                if top and self.paragraphs and _PAR_BREAK.search(m.group()):
                    out.append(PAR)
                else:
                    out.append(Text(" "))
            else:  # 'h' starting a URL
                m = _URL.match(src, self.pos)
                if m is None:  # e.g. "http://" with nothing after it
                    out.append(Text(c))
                    self.pos += 1
                else:
                    url = m.group()
                    end = m.end()
                    # Keep a closing parenthesis that belongs to the URL: …/Foo_(bar).
                    if url.count("(") > url.count(")") and src.startswith(")", end):
                        url += ")"
                        end += 1
                    out.append(Link(url, [Text(url)], has_label=False))
                    self.pos = end
        return out, False

    def _special(self, out: list[Node], c: str) -> None:
        """A tie, a dash run or TeX quotes."""
        m = _SPECIALS.match(self.src, self.pos)
        assert m is not None
        self.pos = m.end()
        out.append(Text(_SPECIAL_TEXT[m.group()]))

    def _skip_spaces(self) -> None:
        m = _SPACES.match(self.src, self.pos)
        assert m is not None
        self.pos = m.end()

    def _group_arg(self) -> list[Node] | None:
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

    def _control(self, out: list[Node], in_group: bool) -> bool | None:
        """Handle a backslash sequence.  Returns non-None only for font declarations, which
        consume the rest of the enclosing group (the value is whether a '}' closed it)."""
        m = _CONTROL.match(self.src, self.pos)
        if m is None:  # lone backslash at the very end
            out.append(Text("\\"))
            self.pos += 1
            return None
        self.pos = m.end()
        name, sym = m.group(1), m.group(2)
        if sym is not None:
            if sym in "([":
                # Its formula, if it has one, was emitted where it starts (see .formulas); this
                # opener has no closer.
                out.append(Text("\\" + sym))
            elif (combining := symbols.accent(sym)) is not None:
                self._accent(out, sym, combining)
            elif (found := symbols.symbol(sym)) is not None:
                out.append(Text(found.text))
            else:  # unknown control symbol, e.g. a stray "\)": show it
                out.append(Text("\\" + sym))
            return None

        if name in _STYLE_COMMANDS:
            arg = self._group_arg()
            if arg is None:
                out.append(Text("\\" + name))
            else:
                out.append(Styled(_STYLE_COMMANDS[name], arg))
        elif name in _DECLARATIONS:
            self._skip_spaces()
            inner, closed = self._seq(in_group=in_group, top=False)
            out.append(Styled(_DECLARATIONS[name], inner))
            return closed
        elif name in ("url", "href"):
            self._link(out, name)
        elif (combining := symbols.accent(name)) is not None:
            self._accent(out, name, combining)
        elif (found := symbols.symbol(name)) is not None:
            if found.letter:
                self._skip_spaces()
            elif self.src.startswith("{}", self.pos):
                # "\LaTeX{}" / "\ldots{}": the empty group is only there to stop TeX eating
                # the space after it.
                self.pos += 2
            out.append(Text(found.text))
        else:
            self._unknown(out, name)
        return None

    def _unknown(self, out: list[Node], name: str) -> None:
        # Show the macro and its directly attached {arguments} with their braces, so
        # "\foo{bar}" reads "\foo{bar}".  Contents are still typeset (accents, maths…).
        out.append(Text("\\" + name))
        while self.pos < self.n and self.src[self.pos] == "{":
            self.pos += 1
            out.append(Text("{"))
            inner, closed = self._seq(in_group=True, top=False)
            out.extend(inner)
            if closed:
                out.append(Text("}"))

    def _accent(self, out: list[Node], key: str, combining: str) -> None:
        # An accent with nothing to sit on is shown on its own, or as its source.
        alone = _SPACING_ACCENTS.get(key, "\\" + key)
        self._skip_spaces()
        src = self.src
        if self.pos >= self.n:
            out.append(Text(alone))
            return
        c = src[self.pos]
        if c == "{":
            self.pos += 1
            inner, _closed = self._seq(in_group=True, top=False)
            first = inner[0] if inner else None
            if isinstance(first, Text) and first.text.strip():
                inner[0] = Text(_apply_accent(first.text.lstrip(), combining))
            else:  # "\'{}" or an accent over maths: show the accent itself
                out.append(Text(alone))
            out.extend(inner)
        elif c == "\\":
            m = _CONTROL.match(src, self.pos)
            letter = symbols.symbol(m.group(1)) if m is not None and m.group(1) else None
            if m is not None and letter is not None and _bears_accent(letter.text, combining):
                # \'\i (í), and maths accents on Greek written without dollars: \bar\theta.
                self.pos = m.end()
                if letter.letter:  # TeX's space after \i; after \theta the author's own
                    self._skip_spaces()
                out.append(Text(_apply_accent(letter.text, combining)))
            else:
                out.append(Text(alone))
        elif c in "}$" or c.isspace():
            out.append(Text(alone))
        else:
            self.pos += 1
            out.append(Text(_apply_accent(c, combining)))

    def _link(self, out: list[Node], name: str) -> None:
        """``\\url{…}`` or ``\\href{…}{text}``; without its {url} the macro is shown as is."""
        raw = self._raw_arg()
        if raw is None:
            out.append(Text("\\" + name))
            return
        url = _URL_ESCAPES.sub(r"\1", raw).strip()
        label = self._group_arg() if name == "href" else None
        if label is None:
            out.append(Link(url, [Text(url)], has_label=False))
        else:
            out.append(Link(url, label, has_label=True))

    def _dollar(self, out: list[Node]) -> None:
        if self.pos in self.formulas:
            self._formula(out)
        else:  # money, or a stray sign with no maths next to it
            out.append(Text("$"))
            self.pos += 1

    def _formula(self, out: list[Node]) -> None:
        formula = self.formulas[self.pos]
        out.append(Math(formula.body, formula.display, self.src[formula.start : formula.end]))
        self.pos = formula.end
        while self.next_glued < self.pos:
            self.next_glued = self.glued.pop()


def parse(source: str, paragraphs: bool) -> list[Node]:
    return _Parser(source.strip(), paragraphs).parse()
