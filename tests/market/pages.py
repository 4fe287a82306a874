"""The market's pages as a trader's browser uses them, read through ``tests.html.Page``: the
market table's terms in order, the quote page's confirm form, and posting it."""

from __future__ import annotations

from tests.html import Element, Page


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
