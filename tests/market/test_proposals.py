"""A trader proposes a term; it reaches the curators' candidate list with its mention counts;
listing it tells the proposer, once."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.test import Client

from market.models import Term, TermProposal
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db

REASON = "Every serving paper this year talks about it."


def propose(client, phrase: str = "speculative decoding", reason: str = REASON):
    return client.post("/market/propose/", {"phrase": phrase, "reason": reason})


@pytest.fixture
def trader_client(trader):
    """The trader's own browser (``staff`` is the curator's, on the default client)."""
    browser = Client()
    browser.force_login(trader)
    return browser


def test_market_page_links_to_the_proposal_form(client):
    assert "/market/propose/" in [href for href, _ in Page.of(client.get("/market/")).links()]


def test_signing_in_comes_first(client):
    response = client.get("/market/propose/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_proposal_reaches_the_curators_with_its_mention_counts(trader_client, staff, cs_dc):
    newest = dt.date(2026, 11, 26)
    for day, abstract in [
        (newest, "Speculative decoding with a draft model."),
        (newest - dt.timedelta(days=2), "We speed up speculative-decoding."),
        (newest - dt.timedelta(days=30), "Speculative decoding, revisited."),
        (newest - dt.timedelta(days=30), "Decoding, speculatively."),
    ]:
        list_paper(make_paper(title="A paper", abstract=abstract), category=cs_dc, date=day)

    response = propose(trader_client, phrase="  Speculative   decoding ")
    assert response.status_code == 302
    followed = trader_client.get(response["Location"])
    assert "Thank you: “Speculative decoding” is proposed." in page_text(followed)
    assert "waiting for a curator" in page_text(followed)

    page = Page.of(staff.get("/admin/market/term/candidates/"))
    row = next(  # the row whose box picks the proposal
        tr
        for tr in page.select("tr")
        if any(e.id.startswith("proposal-") for e in tr.select(id=...))
    )
    assert "Speculative decoding" in row.text and "tobias" in row.text and REASON in row.text
    # Used by two papers in the last week, three ever.
    assert "2" in row.texts("td") and "3" in row.texts("td")


def test_listing_the_proposal_tells_the_proposer_once(
    trader_client, trader, staff, django_capture_on_commit_callbacks
):
    propose(trader_client, phrase="speculative decoding")
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(
            "/admin/market/term/candidates/", {"phrase": ["speculative decoding"]}
        )
    assert response.status_code == 302
    term = Term.objects.get(phrase="speculative decoding")
    proposal = TermProposal.objects.get()
    assert proposal.term == term and proposal.listed_at is not None

    [message] = mail.outbox
    assert message.to == ["tobias@example.org"]
    assert message.subject == "“speculative decoding” is now on the Peer Revenue market"
    assert "/market/speculative-decoding/" in message.body

    notice = "Good call: “speculative decoding”, which you proposed, is now listed"
    assert notice in page_text(trader_client.get("/market/"))
    assert notice not in page_text(trader_client.get("/market/"))
    assert "listed as speculative decoding" in page_text(trader_client.get("/market/propose/"))

    # Saving the term again (an edit in the admin) tells nobody twice.
    with django_capture_on_commit_callbacks(execute=True):
        term.description = "Draft, then verify."
        term.save()
    assert len(mail.outbox) == 1
    assert notice not in page_text(trader_client.get("/market/"))


def test_a_term_added_by_hand_that_covers_the_phrase_closes_it(
    trader_client, django_capture_on_commit_callbacks
):
    propose(trader_client, phrase="KV caches")
    with django_capture_on_commit_callbacks(execute=True):
        Term.objects.create(phrase="KV cache")
    term = TermProposal.objects.get().term
    assert term is not None and term.phrase == "KV cache"
    assert len(mail.outbox) == 1


@pytest.mark.parametrize(
    ("phrase", "reason", "error"),
    [
        ("", REASON, "This field is required."),
        ("¿¡", REASON, "A term needs at least one letter or digit."),
        ("one two three four five six seven", REASON, "Keep a term to at most 6 words"),
        ("KV-caches", REASON, "“KV-caches” is already on the market as “KV cache”."),
        ("speculative decoding", "", "This field is required."),
        ("speculative decoding", "good", "Ensure this value has at least 10 characters"),
        ("x" * 101, REASON, "Ensure this value has at most 100 characters"),
    ],
)
def test_bad_proposals_are_refused_with_a_reason(trader_client, kv_cache, phrase, reason, error):
    response = propose(trader_client, phrase=phrase, reason=reason)
    assert response.status_code == 400
    assert error in page_text(response)
    assert not TermProposal.objects.exists()


def test_a_phrase_already_waiting_is_not_proposed_twice(trader_client, client, rival):
    assert propose(trader_client).status_code == 302
    client.force_login(rival)
    response = propose(client, phrase="Speculative Decoding")
    assert response.status_code == 400
    assert "already proposed and waiting for a curator" in page_text(response)
    assert TermProposal.objects.count() == 1


def test_proposals_are_rate_limited(trader_client, settings):
    settings.RATELIMIT_PROPOSALS_PER_DAY = 2
    assert propose(trader_client, phrase="first idea").status_code == 302
    assert propose(trader_client, phrase="second idea").status_code == 302
    response = propose(trader_client, phrase="third idea")
    assert response.status_code == 429
    assert "You have proposed 2 terms in the last day" in page_text(response)
    assert TermProposal.objects.count() == 2


def test_a_notice_given_after_the_trader_looked_shows_on_their_next_page(
    trader_client, staff, django_capture_on_commit_callbacks
):
    propose(trader_client, phrase="speculative decoding")
    notice = "Good call: “speculative decoding”, which you proposed, is now listed"
    assert notice not in page_text(trader_client.get("/market/"))  # nothing to tell yet
    with django_capture_on_commit_callbacks(execute=True):
        staff.post("/admin/market/term/candidates/", {"phrase": ["speculative decoding"]})
    # The flag is in the shared cache, which every process reads: no delay, no memory.
    assert notice in page_text(trader_client.get("/market/"))
