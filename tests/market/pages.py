"""The market's pages as a trader's browser uses them, read through ``tests.html.Page``: the
market table's terms in order, the quote page's confirm form, and posting it; and how many
queries a page costs."""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from peerrevenue import keep
from tests.html import Element, Page

GRANT = 1_000_000_000  # a new trader's cash, in µ¢ (the settings' starting grant)


def count_queries(client, url: str) -> int:
    # Measure a real render: nothing kept, in the shared cache or this process.
    cache.clear()
    keep.forget_local()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def count_warm_queries(client, url: str) -> int:
    """Queries of a render right after another one, with nothing changed in between."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def get_quote(client, slug="kv-cache", **params):
    return client.get(f"/market/{slug}/quote/", params)


def confirm(client, fields: dict, slug="kv-cache", **overrides):
    return client.post(f"/market/{slug}/trade/", {**fields, **overrides})


def hidden_fields(response) -> dict[str, str]:
    """The confirm form's hidden inputs on a quote page (the CSRF token left out: the test
    client checks none unless asked to)."""
    forms = [
        form
        for form in Page.of(response).select("form", method="post")
        if form.get("action", "").endswith("/trade/")
    ]
    assert forms, "the quote page has no confirm form"
    fields = forms[0].hidden_inputs()
    fields.pop("csrfmiddlewaretoken", None)
    return fields


def trade_forms(response, slug="kv-cache") -> list[Element]:
    """Whatever on the page would post an order to the term's trade URL: a form, or a button
    sending its form there."""
    page, url = Page.of(response), f"/market/{slug}/trade/"
    return page.select(action=url) + page.select(formaction=url)


def market_terms(response) -> list[str]:
    """The terms of the market table, in the order the page lists them (each row's link)."""
    table = Page.of(response).one("table", cls="market-table")
    links = [row.one("a", href=...) for row in table.select("th", scope="row")]
    assert all(a.attrs["href"].startswith("/market/") for a in links), "a row not linking its term"
    return [a.text for a in links]
