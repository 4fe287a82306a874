"""The site's addresses (peerrevenue/urls.py): its apps' patterns are tried in an order chosen
for speed (the most-read pages first), so every named address must still reach its own view."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse

pytestmark = pytest.mark.django_db  # the suite's fixtures reach the database

# A value for each part an address takes, by the part's name or else by its converter.
SAMPLES = {"arxiv_id": "2411.01234", "code": "cs.DC", "date": "2026-11-27", "target": "paper:7"}
BY_CONVERTER = {"IntConverter": "7", "SlugConverter": "a-slug", "PathConverter": "Ada/Lovelace"}


def named(resolver: URLResolver, namespace: str = "") -> Iterator[tuple[str, URLPattern]]:
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from named(entry, inner)
        elif entry.name:
            yield f"{namespace}{entry.name}", entry


def sample_address(name: str, pattern: URLPattern) -> str:
    converters = getattr(pattern.pattern, "converters", {})
    kwargs = {
        group: SAMPLES.get(group) or BY_CONVERTER.get(type(converters.get(group)).__name__, "x1")
        for group in pattern.pattern.regex.groupindex
    }
    return reverse(name, kwargs=kwargs or None)


def test_every_named_address_of_the_sites_apps_reaches_its_own_view():
    ours = [(name, p) for name, p in named(get_resolver()) if not name.startswith("admin:")]
    assert len(ours) > 60
    # One address may carry several names of one app, one per method (the API's GET and POST
    # of a term's trades): any of them will do, but never another app's.
    names_at: dict[tuple[str, str], set[str]] = {}
    for name, pattern in ours:
        app = name.rpartition(":")[0]
        names_at.setdefault((sample_address(name, pattern), app), set()).add(name)
    for (address, _), names in names_at.items():
        found = resolve(address)
        assert found.view_name in names, f"{address} reaches {found.view_name}, not {names}"
