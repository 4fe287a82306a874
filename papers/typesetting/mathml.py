"""Maths → MathML Core: latex2mathml, then repairs for what it gets wrong, then our serialiser.

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

The markup is as small as MathML Core allows, since a list page holds dozens of formulas
(issue 38): the TeX is the ``<math alttext>`` (no ``<semantics>``/``<annotation>`` pair), and
an ``<mrow>`` goes where it changes no layout (around the whole formula, around one child,
as all a row-like parent holds).
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element

from . import symbols
from .sanitising import ATTRS_BY_TAG, MATHML_TAGS

_HEX_ENTITY = re.compile(r"&#x([0-9A-Fa-f]+);")


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


def _as_text(name: str) -> str:
    """``\\text{…}`` holding the macro's text from pylatexenc or our overrides."""
    found = symbols.symbol(name)
    assert found is not None, name
    return "\\text{" + found.text + "}"


# Macros latex2mathml does not know but which are common in abstracts, and the input it does
# handle in their place: \AA, and the astronomy (A&A/AAS) angle macros (0\farcs5 is 0″.5).
_MATH_PRE: dict[str, str] = {"textdegree": "\\degree", "degr": "\\degree"}
_MATH_PRE |= {name: _as_text(name) for name in ("AA", "arcsec", "arcmin", "farcs", "farcm", "fdg")}
# One pass for all of them; not followed by a letter, so \degree is not \degr + "ee".
_MATH_PRE_RE = re.compile(r"\\(" + "|".join(_MATH_PRE) + r")(?![A-Za-z])")
# \textsc in maths ("\mathrm{H\,\textsc{i}}" for neutral hydrogen): capitals are the closest
# plain-text rendering of small capitals.
# "\cal{O}(\alpha_s)": an old font switch written like a command; latex2mathml applies the
# switch to the rest of the formula (a script "s"), the author meant it for the braces only.
_OLD_FONT_CALL = re.compile(r"\\(cal|bf|rm|it|sf|tt)\s*\{")
# Equation numbering is never shown.
_LABEL = re.compile(
    r"\\(?:label\s*\{[^{}]*\}|tag\*?\s*\{[^{}]*\}|nonumber(?![A-Za-z])|notag(?![A-Za-z]))"
)
# A % before a line break is a TeX comment, as in an equation an author wrapped by hand; any
# other % in a formula is a percent sign.
_COMMENT = re.compile(r"(?<!\\)%[^\n]*\n")
_ASCII_WS = re.compile(r"[ \t\n\r\f\v]+")


def formula_body(tex: str) -> str:
    """A formula's TeX as :func:`convert_math` takes it: comments out, whitespace collapsed
    (it is insignificant in maths, and the collapsed form makes a better cache key)."""
    if "%" in tex:
        tex = _COMMENT.sub("", tex)
    return _ASCII_WS.sub(" ", tex).strip()


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


def _is_operator_name(el: Element) -> bool:
    text = el.text or ""
    return el.tag == "mi" and len(text) > 1 and text.isalpha()


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
        # Never inside an element with a fixed number of children: in \log^2 n the <msup>
        # holds "log" and "2" only, and the spacing goes around the <msup> itself.
        operator_name = el.tag not in _ARITY and (
            _is_operator_name(ch)
            or (ch.tag in _SCRIPT_TAGS and len(ch) > 0 and _is_operator_name(ch[0]))
        )
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
    if tag not in MATHML_TAGS:
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


# Elements that lay out their children as one row ("inferred mrow" in MathML Core): an <mrow>
# directly inside one adds nothing but an element.
_ROW_PARENTS = frozenset({"mrow", "msqrt", "mstyle", "mtd", "mpadded", "mphantom", "menclose"})


def _is_plain_row(el: Element) -> bool:
    """An <mrow> with no attribute that our serialiser would write: a bare grouping."""
    return el.tag == "mrow" and not any(k in ATTRS_BY_TAG["mrow"] for k in el.attrib)


def _row_children(el: Element) -> list[Element]:
    return list(el) if _is_plain_row(el) else [el]


def _drop_rows(el: Element) -> None:
    """Unwrap the <mrow>s that change nothing in MathML Core layout: one around a single
    child (it lays out as that child: ``{3}`` in ``10^{3}``), and one that is all an element
    laying out its children as a row holds (``\\sqrt{a+b}``). A row among siblings stays: the
    fences of ``\\left(…\\right)`` stretch to its height, not to the whole formula's. A braced
    operator keeps its TeX spacing (``{=}``): _repair gave the <mo> explicit zero spacing,
    which it keeps wherever it sits."""
    new: list[Element] = []
    for child in el:
        _drop_rows(child)
        while _is_plain_row(child) and len(child) == 1:
            child = child[0]
        new.append(child)
    if len(new) == 1 and _is_plain_row(new[0]) and el.tag in _ROW_PARENTS:
        new = list(new[0])
    el[:] = new


def _serialize(el: Element, parts: list[str]) -> None:
    tag = el.tag
    allowed = ATTRS_BY_TAG[tag]
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
def convert_math(tex: str, display: bool) -> str | None:
    """MathML for one formula body, or None if it cannot be converted faithfully.

    Cached: abstracts repeat formulas ($N$, $\\sim$…) and ingest re-renders whole batches.
    """
    prepared = tex
    if "\\" in prepared:
        prepared = _MATH_PRE_RE.sub(lambda m: _MATH_PRE[m.group(1)], prepared)
        prepared = symbols.angle_brackets(prepared)
        prepared = _LABEL.sub("", prepared)
        prepared = _OLD_FONT_CALL.sub(r"\\math\1{", prepared)
        prepared = _MATH_TEXTSC.sub(lambda m: "\\text{" + m.group(1).upper() + "}", prepared)
    try:
        root = convert_to_element(prepared, display="block" if display else "inline")
        # root is <math><mrow>…</mrow></math>
        (row,) = list(root)
        _repair(row, "math", 0)
    except Exception:  # latex2mathml errors, RecursionError on deep nesting, _Unconvertible
        return None
    _drop_rows(row)
    # The TeX goes in alttext (MathML Core; screen readers read it, search reads it back):
    # a <semantics> + <annotation> pair would cost two elements per formula on a list page.
    parts: list[str] = ["<math", ' display="block"' if display else "", ' alttext="']
    parts += [html.escape(tex), '">']
    # <math> lays its children out as a row already: the formula's outer <mrow> goes.
    for child in _row_children(row):
        _serialize(child, parts)
    parts.append("</math>")
    return "".join(parts)
