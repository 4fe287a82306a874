"""Reading a served page the way a reader or a browser does, for every view test.

Built on the standard library's ``html.parser`` (never a regex over markup): a page is parsed
once into a small tree of ``Element``s, and tests ask it for what a person would notice, its
visible text, the entries in page order, a form's fields, a table's rows, the links.

    page = Page.of(client.get("/list/cs.DC/"))
    assert "Distributed Computing" in page.text
    assert page.ids("li", cls="paper") == ["2611.00001", "2611.00002"]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from types import EllipsisType
from typing import overload

# Elements that never have content, so never get an end tag.
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"}
    | {"source", "track", "wbr"}
)
# Elements a browser closes when a sibling of the same kind opens (``<li>a<li>b``).
_SELF_CLOSING_SIBLINGS = frozenset({"li", "p", "option", "tr", "td", "th", "dt", "dd"})
# Content a reader never sees as text.
_HIDDEN = frozenset({"script", "style", "svg", "template"})


# Punctuation that follows a word: a space markup leaves before it (``<b>4</b>.``) is dropped.
_TRAILING_PUNCTUATION = ".,;:)"


def _fold(text: str) -> str:
    """Whitespace folded to single spaces; a space left by markup before a comma, full stop,
    semicolon, colon or closing parenthesis is dropped."""
    text = " ".join(text.split())
    for mark in _TRAILING_PUNCTUATION:
        text = text.replace(" " + mark, mark)
    return text


@dataclass(eq=False)
class Element:
    """One element: its tag, attributes (valueless ones map to ``""``) and children in order."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        return self.attrs.get(name, default)

    @property
    def id(self) -> str:
        """The element's id, or "" when it has none."""
        return self.attrs.get("id") or ""

    @property
    def classes(self) -> list[str]:
        return self.attrs.get("class", "").split()

    def _texts(self) -> Iterator[str]:
        for child in self.children:
            if isinstance(child, str):
                yield child
            elif child.tag not in _HIDDEN:
                # Every tag boundary separates words, as it does for most of a page's markup.
                yield " "
                yield from child._texts()
                yield " "

    @property
    def text(self) -> str:
        """The visible text inside, whitespace folded, scripts, styles and drawings left out."""
        return _fold("".join(self._texts()))

    def iter(self) -> Iterator[Element]:
        """Every element inside, in document order (this one excluded)."""
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.iter()

    def select(
        self, tag: str | None = None, *, cls: str | None = None, **attrs: str | EllipsisType
    ) -> list[Element]:
        """The elements inside, in page order, with this tag (any if None), having the class
        ``cls`` among theirs, and these exact attribute values (``data_x`` means ``data-x``;
        a value of ``...`` only asks that the attribute be there)."""
        wanted = {name.replace("_", "-"): value for name, value in attrs.items()}
        return [
            element
            for element in self.iter()
            if (tag is None or element.tag == tag)
            and (cls is None or cls in element.classes)
            and all(
                name in element.attrs and (value is ... or element.attrs[name] == value)
                for name, value in wanted.items()
            )
        ]

    def one(
        self, tag: str | None = None, *, cls: str | None = None, **attrs: str | EllipsisType
    ) -> Element:
        """The single element matching (see ``select``); fails the test if not exactly one."""
        found = self.select(tag, cls=cls, **attrs)
        assert len(found) == 1, f"{len(found)} elements match {tag!r} {cls!r} {attrs!r}"
        return found[0]

    def first(
        self, tag: str | None = None, *, cls: str | None = None, **attrs: str | EllipsisType
    ) -> Element:
        """The first element matching (see ``select``); fails the test if there is none."""
        found = self.select(tag, cls=cls, **attrs)
        assert found, f"no element matches {tag!r} {cls!r} {attrs!r}"
        return found[0]

    def ids(
        self, tag: str | None = None, *, cls: str | None = None, **attrs: str | EllipsisType
    ) -> list[str]:
        """The ids of the matching elements, in page order (for order checks)."""
        return [e.id for e in self.select(tag, cls=cls, **attrs) if e.id is not None]

    def texts(self, tag: str | None = None, *, cls: str | None = None, **attrs: str) -> list[str]:
        """The visible text of each matching element, in page order (see ``select``)."""
        return [e.text for e in self.select(tag, cls=cls, **attrs)]

    def attribute_values(self) -> list[str]:
        """The value of every attribute of every element inside, in page order: whatever a
        page points at or hands to a script is among them."""
        return [value for element in self.iter() for value in element.attrs.values()]

    def links(self) -> list[tuple[str, str]]:
        """``(href, text)`` of every link inside, in page order."""
        return [(a.attrs["href"], a.text) for a in self.select("a", href=...)]

    def cells(self) -> list[Element]:
        """The table cells (``th`` and ``td``) inside, in order: a row's cells."""
        return [cell for cell in self.iter() if cell.tag in ("td", "th")]

    def rows(self) -> list[list[str]]:
        """Every table row inside as the texts of its cells (``th`` and ``td``)."""
        return [[cell.text for cell in row.cells()] for row in self.select("tr")]

    def row_of(self, first: str) -> Element:
        """The first table row whose first cell's text contains ``first``; fails the test if
        there is none."""
        for row in self.select("tr"):
            cells = row.cells()
            if cells and first in cells[0].text:
                return row
        raise AssertionError(f"no table row starts with {first!r}")

    def row(self, first: str) -> list[str]:
        """The texts of the cells of the first row whose first cell contains ``first``."""
        return [cell.text for cell in self.row_of(first).cells()]

    def form(self, key: str) -> dict[str, str]:
        """The fields a browser would submit from the form with this id or action, as the page
        filled them: unchecked boxes and buttons left out, a select's chosen option, a textarea's
        text without the first newline browsers drop."""
        form = next(
            (f for f in self.select("form") if key in (f.attrs.get("id"), f.attrs.get("action"))),
            None,
        )
        assert form is not None, f"no form with id or action {key!r}"
        data: dict[str, str] = {}
        for element in form.iter():
            name = element.attrs.get("name")
            if name is None:
                continue
            if element.tag == "input":
                kind = element.attrs.get("type", "text")
                if kind in ("submit", "button", "file", "image", "reset"):
                    continue
                if kind in ("checkbox", "radio") and "checked" not in element.attrs:
                    continue
                data[name] = element.attrs.get("value", "on" if kind == "checkbox" else "")
            elif element.tag == "textarea":
                data[name] = "".join(c for c in element.children if isinstance(c, str))
                data[name] = data[name].removeprefix("\n")
            elif element.tag == "select":
                chosen = [o for o in element.select("option") if "selected" in o.attrs]
                data[name] = chosen[-1].attrs.get("value", chosen[-1].text) if chosen else ""
        return data

    def hidden_inputs(self) -> dict[str, str]:
        """``name: value`` of every hidden input inside (the CSRF token among them)."""
        return {
            e.attrs["name"]: e.attrs.get("value", "")
            for e in self.select("input", type="hidden", name=...)
        }


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document")
        self._open: list[Element] = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SELF_CLOSING_SIBLINGS and self._open[-1].tag == tag:
            self._open.pop()
        element = Element(tag, {name: value or "" for name, value in attrs})
        self._open[-1].children.append(element)
        if tag not in _VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._open[-1].children.append(Element(tag, {n: v or "" for n, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching open element; a stray end tag closes nothing.
        for depth in range(len(self._open) - 1, 0, -1):
            if self._open[depth].tag == tag:
                del self._open[depth:]
                return

    def handle_data(self, data: str) -> None:
        self._open[-1].children.append(data)


class Page(Element):
    """A whole parsed page (the document's root element)."""

    @classmethod
    def parse(cls, markup: str) -> Page:
        builder = _TreeBuilder()
        builder.feed(markup)
        builder.close()
        return cls("#document", {}, builder.root.children)

    @classmethod
    def of(cls, response) -> Page:
        """The page a test client's response served."""
        return cls.parse(response.content.decode())


def page_text(response) -> str:
    """The visible text of a served page (``Page.of(response).text``)."""
    return Page.of(response).text
