"""Maths → readable plain Unicode, for the plain-text rendering: symbols by pylatexenc (Greek
letters, ×, ±, ≤…, see .symbols), simple super/subscripts, fonts dropped; anything else (a
fraction, an unknown macro) stays as its TeX source."""

from __future__ import annotations

import functools
import re

from . import symbols

_ASCII_WS = re.compile(r"[ \t\n\r\f\v]+")


# Escaped braces stand in as private-use characters while grouping braces are being removed.
_LBRACE, _RBRACE = "\ue000", "\ue001"
_BRACES = {"{": _LBRACE, "}": _RBRACE, "lbrace": _LBRACE, "rbrace": _RBRACE}
# Binary operators and relations: written with a space on each side ("3 × 10⁵", "a ≤ b").  The
# characters themselves come from pylatexenc (.symbols).
_MATH_OPERATORS = frozenset(
    {
        "times", "pm", "mp", "sim", "simeq", "approx", "cong", "equiv", "le", "leq", "ge", "geq",
        "ne", "neq", "ll", "gg", "lesssim", "gtrsim", "propto", "to", "rightarrow", "leftarrow",
        "Rightarrow", "leftrightarrow", "Leftrightarrow", "mapsto", "cdot", "in", "notin",
        "subset", "subseteq", "supset", "cup", "cap", "otimes", "oplus", "div", "mid", "lt", "gt",
        "wedge", "vee", "perp", "parallel",
    }
)  # fmt: skip
# \log, \sin…: upright words; the space after them separates them from the argument.
_MATH_FUNCTIONS = frozenset(
    {
        "log", "ln", "lg", "exp", "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh",
        "tanh", "coth", "arcsin", "arccos", "arctan", "lim", "liminf", "limsup", "max", "min",
        "sup", "inf", "det", "dim", "ker", "deg", "gcd", "arg", "Pr", "hom", "bmod", "mod",
    }
)  # fmt: skip
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
# \mathbb{R} → ℝ (by pylatexenc); other fonts are dropped below, a plain letter reads better.
_MATH_BB = re.compile(r"\\mathbb\s*\{[A-Z]\}")
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
    key = name if sym is None else sym
    if key in _BRACES:
        return _BRACES[key]
    if name in _MATH_FUNCTIONS:
        start = m.start()
        glued = start > 0 and m.string[start - 1].isalnum()  # "n\log n" → "n log n"
        return (" " if glued else "") + name + spaces
    found = symbols.symbol(key)
    if found is None:
        return "\\" + key + (spaces or "")
    if key in _MATH_OPERATORS:
        return " " + found.text + " "  # doubled spaces are collapsed later
    return found.text  # spaces after a letter-like macro carry no meaning in TeX


def _script_text(m: re.Match[str]) -> str:
    body = m.group(2) if m.group(2) is not None else m.group(3)
    table = _SUPERSCRIPTS if m.group(1) == "^" else _SUBSCRIPTS
    if body and all(ch in table for ch in body):
        return "".join(table[ch] for ch in body)
    return m.group(0)


@functools.lru_cache(maxsize=16384)
def math_text(tex: str) -> str:
    """Readable Unicode for a formula: symbols and simple scripts converted, the rest kept as
    TeX source (without the $ delimiters)."""
    text = symbols.angle_brackets(_ASCII_WS.sub(" ", tex).strip())
    text = _MATH_BB.sub(lambda m: symbols.fragment(m.group()), text)
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
