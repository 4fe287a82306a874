"""The rulebook on /market/rules/ is proved by the matcher: every example the page shows, read
from the page itself, counts or not exactly as the page says when the one matcher reads it."""

from __future__ import annotations

import pytest

from market.highlighting import Matcher
from market.rulebook import RULES, counts
from tests.html import Element, Page


def raw(element: Element) -> str:
    """The element's text exactly as written, line breaks kept (``text`` folds them)."""
    return "".join(child if isinstance(child, str) else raw(child) for child in element.children)


def examples_on_the_page(page: Page) -> list[tuple[Element, Element, bool]]:
    """(rule section, example item, whether the page says it counts) for every example."""
    found = []
    for section in page.select("section", cls="rulebook__rule"):
        for column in section.select("div", cls="rulebook__column"):
            for item in column.select("li"):
                found.append((section, item, column.get("data-counts") == "yes"))
    return found


def matcher_for(section: Element) -> tuple[Matcher, dict[str, int]]:
    """The matcher over the terms the page names for a rule, built as the market builds it."""
    term = section.get("data-term", "")
    aliases = [a for a in section.get("data-aliases", "").split("|") if a]
    phrases = [term, *(o for o in section.get("data-others", "").split("|") if o)]
    phrases += [
        item.get("data-term", "")
        for item in section.select("li")
        if item.get("data-term", "") not in phrases
    ]
    ids = {phrase: number for number, phrase in enumerate(phrases, start=1)}
    rows = [
        {"id": n, "slug": f"t{n}", "phrase": p, "aliases": aliases if p == term else []}
        for p, n in ids.items()
    ]
    return Matcher.from_terms(rows), ids


def test_every_example_on_the_rules_page_is_what_the_matcher_does(client, db):
    page = Page.of(client.get("/market/rules/"))
    examples = examples_on_the_page(page)
    assert len(examples) == sum(len(rule.examples) for rule in RULES)
    disagreements = []
    for section, item, says_it_counts in examples:
        matcher, ids = matcher_for(section)
        term_id = ids[item.get("data-term", "")]
        parts = {code.get("data-part"): raw(code) for code in item.select("code")}
        if "title" in parts:
            mentioned = matcher.paper_mentions(title=parts["title"], abstract=parts["abstract"])
        else:
            mentioned = matcher.mentioned_terms(parts["text"])
        if (term_id in mentioned) != says_it_counts:
            disagreements.append((section.id, item.text, says_it_counts))
        # The marked words are the matcher's own: an example that counts shows where.
        assert bool(item.select("mark")) == says_it_counts, item.text
    assert disagreements == []


def test_the_page_covers_every_word_form_the_market_promises_a_rule_for(client, db):
    page = Page.of(client.get("/market/rules/"))
    headings = page.texts("h3")
    for form in (
        "Case does not matter",
        "Whole words only",
        "Plurals count",
        "Possessives count",
        "Hyphenated compounds count",
        "Closed compounds do not count",
        "Other forms of a word do not count",
        "Words inside formulas count",
        "Title and abstract, each alone",
    ):
        assert any(form in heading for heading in headings), form
    for section in page.select("section", cls="rulebook__rule"):
        # Each rule shows at least one example, and says which term they are for.
        assert section.select("li") and "Examples for the term" in section.text


@pytest.mark.parametrize(
    ("rule", "example"),
    [(rule, example) for rule in RULES for example in rule.examples],
    ids=lambda value: getattr(value, "slug", None) or getattr(value, "text", "")[:30],
)
def test_each_rulebook_example_through_the_matcher(rule, example):
    assert counts(rule, example) is example.counts
