"""A search result's snippet: where a long abstract matched, with "…" wherever text is cut."""

from __future__ import annotations

import pytest

from papers.models import Paper
from papers.search.marks import SNIPPET_WORDS, matches_for, word_lexemes

pytestmark = pytest.mark.django_db  # the cache every test starts from empty

FILLER = "Nodes exchange messages in rounds and keep local state."  # nine words


def snippet(abstract: str, *words: str) -> str:
    paper = Paper(title="A study", abstract=abstract, authors=[], authors_text="")
    marks = matches_for(paper, word_lexemes(words))
    assert marks.snippet is not None
    return str(marks.snippet)


def test_a_passage_cut_from_the_middle_of_an_abstract_is_marked_as_cut_at_both_ends():
    text = snippet(" ".join([FILLER] * 8 + ["Gossip spreads rumours."] + [FILLER] * 8), "gossip")
    assert text.startswith("… ") and text.endswith(" …")
    assert "<mark>Gossip</mark> spreads rumours." in text


def test_an_abstract_shown_from_its_start_or_to_its_end_has_no_ellipsis_there():
    start = snippet(" ".join(["Gossip spreads rumours."] + [FILLER] * 8), "gossip")
    assert start.startswith("<mark>Gossip</mark>") and start.endswith(" …")
    end = snippet(" ".join([FILLER] * 8 + ["Gossip spreads rumours."]), "gossip")
    assert end.startswith("… ") and end.endswith("rumours.")


def test_a_short_abstract_is_shown_whole_and_two_passages_apart_have_one_between():
    short = "Gossip spreads rumours among nodes."
    assert snippet(short, "gossip") == "<mark>Gossip</mark> spreads rumours among nodes."
    far = " ".join(["Gossip first."] + [FILLER] * 10 + ["Then gossip again."] + [FILLER] * 10)
    text = snippet(far, "gossip")
    assert text.startswith("<mark>Gossip</mark> first.") and text.endswith(" …")
    first, second = text.removesuffix(" …").split(" … ")  # two passages, a cut between
    assert len(first.split()) == len(second.split()) == SNIPPET_WORDS
    assert "<mark>gossip</mark> again." in second
