"""The parse tree shared by the HTML and the plain-text renderers."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Text:
    text: str


@dataclass(slots=True)
class Math:
    tex: str  # formula body, without delimiters
    display: bool
    source: str  # as written, with delimiters (shown if conversion fails)


@dataclass(slots=True)
class Styled:
    kind: str | None  # "em", "strong", "code", "smallcaps", or None for plain grouping
    children: list[Node]


@dataclass(slots=True)
class Link:
    url: str
    children: list[Node]
    # \href{url}{text}: the link text differs from the URL, so a non-http(s) URL is shown
    # after the text rather than lost.
    has_label: bool


class ParBreak:
    __slots__ = ()


PAR = ParBreak()
Node = Text | Math | Styled | Link | ParBreak
