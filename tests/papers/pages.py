"""The paper stream as a reader sees it, read through ``tests.html.Page``: entries in page
order, and what serving a page costs."""

from __future__ import annotations

from tests.html import Page


def paper_ids_in_order(response) -> list[str]:
    """The stream's entries in page order (replacement entries, "replaced-…", left out)."""
    return [i for i in Page.of(response).ids("li", cls="paper") if not i.startswith("replaced-")]


def replaced_ids_in_order(response) -> list[str]:
    """The arXiv ids of the replacement entries, in page order."""
    ids = Page.of(response).ids("li", cls="paper")
    return [i.removeprefix("replaced-") for i in ids if i.startswith("replaced-")]


def entry_parts(response) -> list[tuple[str, list[str]]]:
    """[(entry id, [the entry's parts, by class, in order])] for every paper entry on the page.

    The parts are the elements whose first class starts with ``paper__`` (nothing inside a
    title or an abstract has one), so the typeset MathML in between does not matter.
    """
    firsts = lambda entry: [e.classes[0] for e in entry.iter() if e.classes]  # noqa: E731
    return [
        (entry.id or "", [name for name in firsts(entry) if name.startswith("paper__")])
        for entry in Page.of(response).select("li", cls="paper")
    ]


def queries_for(client, url: str) -> int:
    """How many SQL queries serving `url` takes (the page must be served)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)
