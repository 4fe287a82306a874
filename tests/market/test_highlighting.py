"""The counting rules published on the rules page, one by one."""

from __future__ import annotations

import pytest

from market import highlighting
from market.models import Term


@pytest.fixture
def terms(db):
    return {
        "kv": Term.objects.create(phrase="KV cache", aliases=["key-value cache"]),
        "kvs": Term.objects.create(phrase="key-value store"),
        "vs": Term.objects.create(phrase="value store"),
        "gpu": Term.objects.create(phrase="GPU"),
        "index": Term.objects.create(phrase="index"),
        "policy": Term.objects.create(phrase="scheduling policy"),
        "cpp": Term.objects.create(phrase="C++"),
    }


def found(text: str) -> list[str]:
    return [text[m.start : m.end] for m in highlighting.find_mentions(text)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We shrink the kv CACHE by half.", ["kv CACHE"]),  # case does not matter
        ("A cached KV cacheline is not a KV cache.", ["KV cache"]),  # whole words
        ("Two GPUs and many indexes", ["GPUs", "indexes"]),  # plurals s / es
        ("new scheduling policies", ["scheduling policies"]),  # y → ies
        ("a key value store, a key-value-store", ["key value store", "key-value-store"]),
        ("a key-\nvalue store", ["key-\nvalue store"]),  # wrapped after a hyphen
        ("a key-value cache", ["key-value cache"]),  # alias
        ("fast C++ code", ["C++"]),
        ("GPU-aware KV-cache reuse", ["GPU", "KV-cache"]),  # a hyphen separates words
    ],
)
def test_counting_rules(terms, text, expected):
    assert found(text) == expected


def test_longest_match_wins_on_overlaps(terms):
    matches = highlighting.find_mentions("a key-value store")
    assert [m.term.id for m in matches] == [terms["kvs"].pk]
    assert highlighting.mentioned_terms("the value store") == {terms["vs"].pk}


def test_only_listed_terms_count_and_changes_apply_at_once(terms):
    assert highlighting.mentioned_terms("GPU") == {terms["gpu"].pk}
    Term.objects.filter(pk=terms["gpu"].pk).halt(reason="review")
    assert highlighting.mentioned_terms("GPU") == set()
    Term.objects.filter(pk=terms["gpu"].pk).relist()
    assert highlighting.mentioned_terms("GPU") == {terms["gpu"].pk}
    raft = Term.objects.create(phrase="Raft")
    assert highlighting.mentioned_terms("Raft logs") == {raft.pk}
    raft.aliases = ["Multi-Raft"]
    raft.save()
    assert highlighting.mentioned_terms("Multi Raft") == {raft.pk}


def test_the_matcher_is_compiled_once_per_change(terms, django_assert_num_queries):
    highlighting.mentioned_terms("warm up")
    with django_assert_num_queries(0):
        for _ in range(5):
            highlighting.mentioned_terms("KV cache on the GPU")


def test_rules_are_documented():
    doc = highlighting.__doc__
    for rule in ("Case does not matter", "Whole words", "Plurals", "Hyphens and spaces", "Aliases"):
        assert rule in doc
