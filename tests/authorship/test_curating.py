"""The curator approves and refuses claims in the admin; the reader sees the decision and the
paper its verified authors."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from accounts.models import Preferences
from authorship.models import Claim
from tests.factories import make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db

CHANGELIST = "/admin/authorship/claim/"


def act(staff, action: str, *claims: Claim, reason: str = ""):
    return staff.post(
        CHANGELIST,
        {"action": action, "reason": reason, ACTION_CHECKBOX_NAME: [c.pk for c in claims]},
        follow=True,
    )


def verified_names(client, paper) -> list[str]:
    """The verified authors a paper's page names (empty: no badge)."""
    page = Page.of(client.get(paper.get_absolute_url()))
    found = page.select("ul", **{"aria-label": "Verified authors"})
    return [item.text for item in found[0].select("li")] if found else []


def test_the_queue_filters_by_status_and_evidence(staff, reader, rival, own_paper):
    Claim.objects.create(user=reader, paper=own_paper, orcid="0000-0002-1825-0097")
    Claim.objects.create(
        user=rival, paper=own_paper, status="refused", institution_email="r@uni.example"
    )
    pending = Page.of(staff.get(CHANGELIST + "?status__exact=pending"))
    assert "rosalind" in pending.text and "rhea" not in pending.text
    unconfirmed = Page.of(staff.get(CHANGELIST + "?email=unconfirmed"))
    assert "rhea" in unconfirmed.text and "rosalind" not in unconfirmed.text
    assert staff.get(CHANGELIST + "?q=0000-0002").status_code == 200


def test_approval_shows_the_verified_author_linked_to_their_page(
    client, staff, curator, reader, own_paper
):
    pending = Claim.objects.create(user=reader, paper=own_paper, orcid="0000-0002-1825-0097")
    assert verified_names(client, own_paper) == []
    done = act(staff, "approve", pending)
    assert "Approved 1 claim." in Page.of(done).text
    pending.refresh_from_db()
    assert (pending.status, pending.decided_by) == ("approved", curator)
    client.logout()
    page = Page.of(client.get(own_paper.get_absolute_url()))
    assert "✓ Verified author" in page.text
    assert ("/traders/rosalind/", "rosalind") in page.links()
    trader = Page.of(client.get("/traders/rosalind/"))
    assert "Verified papers" in trader.text and "Diffraction of consensus" in trader.text


def test_a_private_reader_is_counted_not_named(client, staff, reader, own_paper):
    Preferences.objects.create(user=reader, public_trader_page=False)
    claim = Claim.objects.create(user=reader, paper=own_paper, note="mine")
    act(staff, "approve", claim)
    client.logout()
    page = Page.of(client.get(own_paper.get_absolute_url()))
    assert "1 reader whose page is private" in page.text
    assert "rosalind" not in page.text


def test_refusal_needs_a_reason_the_reader_then_reads(client, staff, reader, own_paper):
    claim = Claim.objects.create(user=reader, paper=own_paper, note="mine")
    refused = act(staff, "refuse", claim)
    assert "Nothing was refused. Give the reason the reader will see." in Page.of(refused).text
    claim.refresh_from_db()
    assert claim.status == "pending"
    act(staff, "refuse", claim, reason="The ORCID record names another Rosalind.")
    claim.refresh_from_db()
    assert (claim.status, claim.reason) == ("refused", "The ORCID record names another Rosalind.")
    # Refused claims are kept: the admin deletes none.
    assert staff.get(f"{CHANGELIST}{claim.pk}/delete/").status_code == 403
    client.force_login(reader)
    page = Page.of(client.get("/claims/"))
    assert "Refused" in page.text
    assert "The curator's reason: The ORCID record names another Rosalind." in page.text


def test_an_approved_claim_refused_later_takes_the_badge_away(client, staff, reader, own_paper):
    claim = Claim.objects.create(user=reader, paper=own_paper, note="mine")
    act(staff, "approve", claim)
    assert verified_names(client, own_paper) == ["rosalind"]
    act(staff, "refuse", claim, reason="Withdrawn by the co-authors' request.")
    assert verified_names(client, own_paper) == []


def test_withdrawing_an_approved_claim_takes_the_badge_away(client, staff, reader, own_paper):
    claim = Claim.objects.create(user=reader, paper=own_paper, note="mine")
    act(staff, "approve", claim)
    client.force_login(reader)
    assert verified_names(client, own_paper) == ["rosalind"]
    client.post("/claims/withdraw/", {"claim": claim.pk})
    assert verified_names(client, own_paper) == []
    client.logout()
    assert verified_names(client, own_paper) == []


def test_two_people_of_one_name_each_verified_on_their_own_paper(client, staff, reader, rival):
    consensus = make_paper(title="Consensus at scale", authors=["Ada Lovelace"])
    compilers = make_paper(title="Compilers that prove", authors=["Ada Lovelace"])
    act(
        staff,
        "approve",
        Claim.objects.create(user=reader, paper=consensus, note="mine"),
        Claim.objects.create(user=rival, paper=compilers, note="mine"),
    )
    assert verified_names(client, consensus) == ["rosalind"]
    assert verified_names(client, compilers) == ["rhea"]


def test_editing_the_status_in_the_form_dates_and_signs_the_decision(
    staff, curator, reader, own_paper
):
    claim = Claim.objects.create(user=reader, paper=own_paper, note="mine")
    form = Page.of(staff.get(f"{CHANGELIST}{claim.pk}/change/")).form("claim_form")
    form.update(status="approved", reason="")
    staff.post(f"{CHANGELIST}{claim.pk}/change/", form)
    claim.refresh_from_db()
    assert claim.status == "approved" and claim.decided_by == curator and claim.decided_at
