"""The counting rules published on the rules page, one by one."""

from __future__ import annotations

import ast
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from market import highlighting, models, rulebook
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
    # Each use reads the term-set stamp (one small query); the terms are not read again.
    with django_assert_num_queries(5) as queries:
        for _ in range(5):
            highlighting.mentioned_terms("KV cache on the GPU")
    assert all("kept_stamp" in q["sql"] for q in queries.captured_queries)


def test_rules_are_documented_on_the_rules_page_the_matcher_points_to():
    # The rules are the rulebook's (market/rulebook.py), rendered on the rules page.
    assert "market/rulebook.py" in highlighting.__doc__
    headings = [rule.heading for rule in rulebook.RULES]
    for rule in ("Case does not matter", "Whole words", "Plurals", "Hyphens and spaces", "Aliases"):
        assert any(heading.startswith(rule) for heading in headings), rule


def _choose_quadratically(candidates):
    """The original chooser, kept as the reference: each span against every chosen span."""
    chosen: list[tuple[int, int, int]] = []
    for start, end, term_id in sorted(candidates, key=lambda c: (c[0] - c[1], c[0], c[2])):
        if all(end <= s or start >= e for s, e, _ in chosen):
            chosen.append((start, end, term_id))
    return sorted(chosen)


_spans = st.tuples(st.integers(0, 60), st.integers(1, 12), st.integers(1, 4)).map(
    lambda t: (t[0], t[0] + t[1], t[2])
)


@given(st.sets(_spans, max_size=80))
@settings(max_examples=300)
def test_the_linear_chooser_picks_what_the_quadratic_one_did(candidates):
    assert highlighting.choose_longest(candidates, length=72) == _choose_quadratically(candidates)


_WORDS = ["Raft", "consensus", "protocol", "key", "value", "store", "-", " ", "s", "a"]


@given(st.lists(st.sampled_from(_WORDS), max_size=40))
@settings(max_examples=200)
def test_mentions_in_random_texts_never_overlap_and_prefer_the_longest(words):
    text = " ".join(words)
    matcher = _matcher("Raft", "consensus", "Raft consensus", "consensus protocol", "value store")
    found = matcher.find_mentions(text)
    spans = [(m.start, m.end) for m in found]
    assert spans == sorted(spans)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in pairwise(spans))
    # A single word's mention is dropped only where a chosen (longer) match covers it.
    for match in _matcher("Raft", "consensus", "value store").find_mentions(text):
        assert any(m.start < match.end and match.start < m.end for m in found)


def _matcher(*phrases):
    return highlighting.Matcher.from_terms(
        {"id": n, "slug": f"t{n}", "phrase": phrase, "aliases": []}
        for n, phrase in enumerate(phrases, start=1)
    )


def test_a_huge_abstract_of_repeated_terms_is_matched_in_one_pass():
    # 40,000 repetitions once took the category page past the worker timeout.
    matcher = _matcher("Raft", "consensus", "Raft consensus")
    found = matcher.find_mentions("Raft consensus " * 40_000)
    assert len(found) == 40_000
    assert {m.term.phrase for m in found} == {"Raft consensus"}
    assert found[-1].start == 15 * 39_999


def test_the_models_do_not_import_the_matcher():
    # The matcher reads the models; term changes reach it through market.signals instead.
    source = Path(models.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            imported |= {node.module or alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
    assert not {"highlighting", "market.highlighting", "signals", "market.signals"} & imported
