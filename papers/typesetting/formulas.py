"""Where the formulas are: one pass over the source before it is parsed.

Abstracts are never compiled, so nothing stops an author from leaving a ``$`` unbalanced, gluing
a formula to a word (``P$2_{1}/m$``), writing money (``at $0.031 each``) or putting a dollar in
the wrong place (``$0.84 \\pm $0.04``).  Pairing the signs one by one, left to right, turns a
single stray dollar into a page where every later formula is prose and every later stretch of
prose is a formula.  So the signs are paired here, for the whole text at once, and the scanner
(:mod:`.textmode`) only asks :func:`plan` where each formula starts and ends.

The rules, for two consecutive unescaped signs ``$…$`` (``$$…$$`` is display maths):

1. the body is not blank;
2. it is not **prose**: two plain words in a row outside braces (``in deeply inelastic``), or
   the shape of the text *between* two formulas, ``x$ and $y``: a space after a sign that
   follows a non-space and before a sign a non-space follows, or one of the two with a plain
   word or nothing but punctuation in between (``x$ and $ y``, ``x$, $ y``); a sign glued to
   maths with a space after it closes that maths (``\\alpha^2$ \\beta^2$``);
3. it is not **money**: when it starts with a digit and holds no maths markup (``^``, ``_``, a
   maths macro), a closing sign followed by a digit (``$5 and $10``), a body ending in a space
   (``$5 or $x$``), a sentence end or two words mean dollars, not maths.  With markup it is
   a formula, as in ``$0.84 \\pm $0.04`` and ``P$2_{1}/m$``.

A line break, with or without indentation, does not end a formula: whitespace inside maths is
insignificant, so ``$\\hat`` and ``q$`` on two lines are one formula.  A blank line ends any
paragraph, maths or not.

A sign that pairs with neither neighbour is a stray.  If it is glued to maths the author forgot
the other sign: the run of maths before it (``\\cal{O}(\\alpha_{s}^2)$``, back to the first
plain word, sentence punctuation or other formula) or after it (``$\\alpha_s^2 is``) becomes the
formula, so it is typeset, or shown once as its source with the one sign the author wrote.
Otherwise (``at $0.031 each``, ``US$5``) it is a dollar sign and stays as written.

Maths written with no dollars at all is found too: a LaTeX display environment
(``\\begin{equation*}…\\end{equation*}``, found first, with ``\\(…\\)`` and ``\\[…\\]``, so the
dollars inside it are its own), and, between all the formulas above, a run of maths around a
sub- or superscript (``x^\\mu``, ``\\la r^2\\ra^\\pi_s=0.75\\pm 0.07 fm^2``), which would
otherwise show converted symbols among leftover markup.  A run holding a link, an address or a
text command (``\\texttt{a_1}``) or a word spelt out (``snake_case``, ``phi^4``, ``deg^2``) is
left to the scanner, as written.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_SIGN = re.compile(r"\$")
_OPENER = re.compile(r"\\[(\[]")
_PAREN_BODY = re.compile(r"((?:[^\\]|\\[^)])*)\\\)", re.S)
_BRACKET_BODY = re.compile(r"((?:[^\\]|\\[^\]])*)\\\]", re.S)
_DISPLAY_BODY = re.compile(r"((?:[^$\\]|\\.|\$(?!\$))*)\$\$", re.S)
_BRACED = re.compile(r"\{[^{}]*\}")
# A plain word: letters not part of a macro name.
_WORD = r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])"
_ANY_WORD = re.compile(_WORD)
_TWO_WORDS = re.compile(_WORD + r"[ \t\r\n]+" + _WORD)
_DIGIT_LED = re.compile(r"\s*[0-9]")
_SENTENCE_END = re.compile(r"[.;!?]\s")
# Maths markup: a script, or a macro that is not a text-mode command.
_MARKUP = re.compile(
    r"[\^_]|\\(?!(?:emph|text[a-z]*|mbox|url|href|em|it|bf|rm)(?![A-Za-z]))[A-Za-z]+"
)
_CHUNK = re.compile(r"\S+")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_LETTER = re.compile(r"[A-Za-z]")
# Maths without dollars: an environment, or a sub/superscript on a brace, macro, digit or lone
# letter (not "snake_case").
_BEGIN = re.compile(r"\\begin\{(equation|align|gather|multline|eqnarray|displaymath)(\*?)\}")
_SCRIPT = re.compile(r"[\^_](?<!\\[\^_])(?:[{\\0-9]|[A-Za-z](?![A-Za-z]))")
# Chunks that are not maths even with a script in them: links, addresses, code, citations.
_NOT_MATHS = re.compile(r"://|@|\$|%|\\(?:text|emph|url|href|verb|cite|ref)")
# A word of three letters or more is the author's prose, spelt out: "phi^4", "deg^2", "Msun".
_NAME = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}")
# A stray sign's formula is looked for this far back or ahead, no further: a run of maths with
# no sign is short, and the bound keeps a text of many stray signs linear.
_ISLAND_REACH = 160
# Maths with no sign at all is shorter still ("\\la r^2\\ra^\\pi_s=0.75\\pm 0.07 fm^2").
_SCRIPT_REACH = 80


@dataclass(slots=True, frozen=True)
class Formula:
    """A formula the scanner must emit when it reaches ``start``: the source ``src[start:end]``
    is shown if it cannot be typeset; ``body`` is the TeX inside its delimiters."""

    start: int
    end: int
    body: str
    display: bool


def _is_prose(body: str, before: str, after: str) -> bool:
    """Rule 2: the body reads as the text between two formulas, not as one."""
    plain = _BRACED.sub(" ", body) if "{" in body else body  # a macro's {argument} is no prose
    word = _ANY_WORD.search(plain) is not None
    if word and _TWO_WORDS.search(plain) is not None:
        return True
    # "x$ and $y": the first sign closes a formula (a space after it, a non-space before), the
    # second opens one (a space before it, a non-space after).
    closes = body[0].isspace() and before != "" and not before.isspace() and before not in "([{"
    opens = body[-1].isspace() and after != "" and not after.isspace() and after not in ".,;:)]}"
    if closes and opens:
        return True
    return (closes or opens) and (word or not any(ch.isalnum() for ch in body))


def _closes_a_run(src: str, sign: int, body: str, floor: int) -> bool:
    """``\\alpha^2$ \\beta^2$``: a sign glued to maths with a space after it closes that maths;
    it does not open the next formula."""
    if not body[0].isspace() or sign == 0 or src[sign - 1].isspace() or src[sign - 1] == "$":
        return False
    return _island_before(src, sign, floor) is not None


def _is_money(body: str, after: str) -> bool:
    if _DIGIT_LED.match(body) is None or _MARKUP.search(body) is not None:
        return False
    return (
        after.isdigit()
        or body[-1].isspace()
        or _SENTENCE_END.search(body) is not None
        or _TWO_WORDS.search(body) is not None
    )


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _mathy(chunk: str) -> bool:
    """A chunk that may sit inside a formula next to others: markup, or no letters at all."""
    return _MARKUP.search(chunk) is not None or _LETTER.search(chunk) is None


def _island_before(src: str, sign: int, floor: int) -> int | None:
    """Where the run of maths glued to the stray sign at ``sign`` starts, or None."""
    reach = sign - _ISLAND_REACH
    # Not past the last formula, nor past another (literal) sign.
    low = max(floor, src.rfind("$", max(reach, 0), sign) + 1)
    window = src[max(low, reach) : sign]
    if not window or window[-1].isspace():
        return None
    chunks = list(_CHUNK.finditer(window))
    start = chunks[-1].start()
    for chunk in reversed(chunks[:-1]):
        text = chunk.group()
        if text[-1] in ",.;:" or not _mathy(text):
            break
        start = chunk.start()
    if start == 0 and reach > low:
        return None  # the run goes on past the reach: not a formula someone forgot to open
    island = window[start:]
    if _MARKUP.search(island) is None or not _balanced(island):
        return None
    return sign - len(island)


def _island_after(src: str, sign: int, ceiling: int) -> int | None:
    """Where the run of maths glued after the stray sign at ``sign`` ends, or None."""
    high = min(ceiling, sign + 1 + _ISLAND_REACH)
    window = src[sign + 1 : high]
    if not window or window[0].isspace():
        return None
    chunks = list(_CHUNK.finditer(window))
    end = chunks[0].end()
    for chunk in chunks[1:]:
        if not _mathy(chunk.group()):
            break
        end = chunk.end()
    island = window[:end].rstrip(",.;:")
    if _MARKUP.search(island) is None or not _balanced(island):
        return None
    return sign + 1 + len(island)


def _scripted(src: str, low: int, high: int, formulas: dict[int, Formula]) -> None:
    """Runs of maths around a sub- or superscript in ``src[low:high]``, which has no formula."""
    pos = floor = low  # floor: the end of the last run found, which the next cannot reach into
    while (mark := _SCRIPT.search(src, pos, high)) is not None:
        lo, hi = max(floor, mark.start() - _SCRIPT_REACH), min(high, mark.end() + _SCRIPT_REACH)
        start = _chunk_start(src, mark.start(), lo)
        chunk = _CHUNK.match(src, mark.start(), hi)
        assert chunk is not None  # the mark itself is no space
        end = chunk.end()
        if not _joins(src[start:end], before=False):
            pos = end
            continue
        while (previous := _chunk_before(src, start, lo)) is not None and _joins(
            src[previous:start].rstrip(), before=True
        ):
            start = previous
        while src[end - 1] not in ",.;:" and (following := _CHUNK.search(src, end, hi)):
            if not _joins(following.group(), before=False):
                break
            end = following.end()
        end = start + len(src[start:end].rstrip(",.;:"))
        if _balanced(src[start:end]) and end > mark.start():
            formulas[start] = Formula(start, end, src[start:end], False)
            floor = end
        pos = max(end, mark.end())


def _chunk_start(src: str, pos: int, low: int) -> int:
    """Where the run of non-space characters holding ``pos`` starts (not before ``low``)."""
    while pos > low and not src[pos - 1].isspace():
        pos -= 1
    return pos


def _chunk_before(src: str, start: int, low: int) -> int | None:
    """Where the chunk before the one starting at ``start`` starts, if it is within reach."""
    end = start
    while end > low and src[end - 1].isspace():
        end -= 1
    if end in (start, low):  # no space before (the stretch's edge), or out of reach
        return None
    return _chunk_start(src, end, low)


def _joins(chunk: str, *, before: bool) -> bool:
    """Whether a chunk next to a run of maths belongs to it."""
    if _NOT_MATHS.search(chunk) is not None or _NAME.search(chunk) is not None:
        return False
    if before and chunk[-1] in ",.;:":  # the end of a clause is not part of the formula after it
        return False
    return _mathy(chunk)


def _delimited(src: str) -> dict[int, Formula]:
    """Formulas between ``\\(`` and ``\\)``, ``\\[`` and ``\\]``, or in a display environment:
    they need no guessing, and whatever dollars they hold (``\\tag{$E_p$}``) are theirs."""
    found: list[Formula] = []
    closed = {"(": True, "[": True}  # once one has no closer, none after it has
    for m in _OPENER.finditer(src):
        start = m.start()
        kind = src[start + 1]
        if not closed[kind] or _escaped(src, start):
            continue
        body = (_PAREN_BODY if kind == "(" else _BRACKET_BODY).match(src, start + 2)
        if body is None:
            closed[kind] = False
        elif body.group(1).strip():
            found.append(Formula(start, body.end(), body.group(1), kind == "["))
    unclosed: set[str] = set()
    if "\\begin" in src:
        for m in _BEGIN.finditer(src):
            end_tag = "\\end{" + m.group(1) + m.group(2) + "}"
            if end_tag in unclosed:
                continue
            end = src.find(end_tag, m.end())
            if end < 0:
                unclosed.add(end_tag)
                continue
            end += len(end_tag)
            found.append(Formula(m.start(), end, src[m.start() : end], True))
    formulas: dict[int, Formula] = {}
    reached = 0
    for formula in sorted(found, key=lambda f: f.start):
        if formula.start >= reached:  # the outermost of nested ones
            formulas[formula.start] = formula
            reached = formula.end
    return formulas


def _escaped(src: str, pos: int) -> bool:
    """Whether the character at ``pos`` follows an odd number of backslashes (``\\$``, not
    ``\\\\$``, which is a line break and then a sign)."""
    k = pos
    while k > 0 and src[k - 1] == "\\":
        k -= 1
    return (pos - k) % 2 == 1


def _inside(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    k = bisect.bisect_right(starts, pos) - 1
    return k >= 0 and pos < spans[k][1]


def plan(src: str) -> dict[int, Formula]:
    """The formulas delimited (or left half-delimited) by dollar signs, and those written with
    no dollars, by start position."""
    formulas = _delimited(src)
    # Signs inside \(…\) or \[…\] are that formula's business.
    spans = sorted((f.start, f.end) for f in formulas.values())
    signs = [m.start() for m in _SIGN.finditer(src) if not _escaped(src, m.start())]
    if spans:
        starts = [start for start, _end in spans]
        signs = [p for p in signs if not _inside(spans, starts, p)]
    floor = 0  # end of the last formula: a stray sign's maths cannot reach back past it
    i = 0
    count = len(signs)
    while i < count:
        p = signs[i]
        if p < floor:
            i += 1
            continue
        if i + 1 < count and signs[i + 1] == p + 1 and src[p + 2 : p + 4] != "$$":
            m = _DISPLAY_BODY.match(src, p + 2)
            if m is not None and m.group(1).strip():
                formulas[p] = Formula(p, m.end(), m.group(1), True)
                floor = m.end()
                i += 1
                continue
            # No closing "$$": the first sign is examined alone, then the second.
        q = signs[i + 1] if i + 1 < count else None
        if q is not None:
            body = src[p + 1 : q]
            before = src[p - 1] if p > 0 else ""
            after = src[q + 1] if q + 1 < len(src) else ""
            if (
                body.strip()
                and _BLANK_LINE.search(body) is None  # a blank line ends a paragraph, maths or not
                and not _is_prose(body, before, after)
                and not _is_money(body, after)
                and not _closes_a_run(src, p, body, floor)
            ):
                formulas[p] = Formula(p, q + 1, body, False)
                floor = q + 1
                i += 2
                continue
        # A stray sign.  Most are money or sit between spaces: only one glued to something
        # other than a sign can have a formula its author forgot to open or close.
        glued_before = p > 0 and not src[p - 1].isspace() and src[p - 1] != "$"
        start = _island_before(src, p, floor) if glued_before else None
        if start is not None:
            formulas[start] = Formula(start, p + 1, src[start:p], False)
            floor = p + 1
        elif p + 1 < len(src) and not src[p + 1].isspace() and src[p + 1] != "$":
            end = _island_after(src, p, q if q is not None else len(src))
            if end is not None:
                formulas[p] = Formula(p, end, src[p + 1 : end], False)
                floor = end
        i += 1
    if "^" in src or "_" in src:
        ends = sorted((f.start, f.end) for f in formulas.values())
        low = 0
        for start, end in ends:
            _scripted(src, low, start, formulas)
            low = end
        _scripted(src, low, len(src), formulas)
    return formulas
