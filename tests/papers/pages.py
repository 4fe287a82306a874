"""Reading pages the way a reader does: visible text, entries in page order."""

from __future__ import annotations

import re


def page_text(response) -> str:
    """The visible text of a page, whitespace folded, for assertions a reader would make."""
    html = response.content.decode()
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]+>", " ", html)
    text = text.replace("&nbsp;", " ").replace("&amp;", "&").replace("&#x27;", "'")
    return re.sub(r"\s+", " ", text).strip().replace(" ,", ",")


def paper_ids_in_order(response) -> list[str]:
    """The stream's entries in page order (replacement entries have ids "replaced-…")."""
    return re.findall(r'<li class="paper" id="(\d[^"]*)"', response.content.decode())


def replaced_ids_in_order(response) -> list[str]:
    return re.findall(r'<li class="paper" id="replaced-([^"]+)"', response.content.decode())


def entry_parts(response) -> list[tuple[str, list[str]]]:
    """[(entry id, [the entry's parts, by class, in order])] for every paper entry on the page.

    The parts are the elements whose class starts with ``paper__`` (nothing inside a title or
    an abstract has one), so the typeset MathML in between does not matter.
    """
    html = response.content.decode()
    entries = []
    for chunk in html.split('<li class="paper" id="')[1:]:
        entry_id, _, body = chunk.partition('"')
        body = body.split("</li>\n</ol>")[0].split('<li class="paper" id="')[0]
        entries.append((entry_id, re.findall(r'class="(paper__[a-z-]+)', body)))
    return entries


def queries_for(client, url: str) -> int:
    """How many SQL queries serving `url` takes (the page must be served)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)
