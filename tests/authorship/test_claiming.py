"""A reader claims papers with each kind of evidence, follows the curator's decision, and
withdraws; the record of every claim is kept."""

from __future__ import annotations

import re

import pytest
from django.core import mail

from authorship.models import Claim
from tests.factories import make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"


def claim(client, *papers, **evidence):
    data = {"paper": [paper.arxiv_id for paper in papers], "orcid": "", "institution_email": ""}
    data.update({"note": ""}, **evidence)
    return client.post("/claims/new/", data)


def mailed_link(body) -> str:
    found = re.search(r"https?://\S+/claims/confirm/\S+/", str(body))
    assert found, body
    return found.group(0)


def test_a_paper_page_offers_the_claim_and_the_form_shows_that_paper_ticked(
    client, reader, own_paper
):
    page = Page.of(client.get(own_paper.get_absolute_url()))
    link = {text: href for href, text in page.links()}["Are you an author? Claim this paper"]
    client.force_login(reader)
    form = Page.of(client.get(link))
    assert form.form("/claims/new/")["paper"] == own_paper.arxiv_id
    assert "Diffraction of consensus" in form.text


def test_a_claim_with_an_orcid_id_waits_for_the_curator(client, reader, own_paper):
    client.force_login(reader)
    response = claim(client, own_paper, orcid="https://orcid.org/" + ORCID)
    assert response.status_code == 302
    stored = Claim.objects.get()
    assert (stored.user, stored.paper, stored.status, stored.orcid) == (
        reader,
        own_paper,
        "pending",
        ORCID,
    )
    page = Page.of(client.get(response["Location"]))
    assert "Claimed 1 paper: a curator will review it." in page.text
    assert "Pending review" in page.text and ORCID in page.text
    assert mail.outbox == []


def test_a_mistyped_orcid_id_is_refused_and_nothing_stored(client, reader, own_paper):
    client.force_login(reader)
    response = claim(client, own_paper, orcid="0000-0002-1825-0098")
    assert response.status_code == 200
    assert "does not check out" in Page.of(response).text
    assert not Claim.objects.exists()


def test_an_institutional_address_is_confirmed_by_the_mailed_link(client, reader, own_paper, rival):
    client.force_login(reader)
    claim(client, own_paper, institution_email="r.franklin@kcl.ac.uk")
    stored = Claim.objects.get()
    assert stored.institution_email == "r.franklin@kcl.ac.uk" and stored.email_confirmed_at is None
    (sent,) = mail.outbox
    assert sent.to == ["r.franklin@kcl.ac.uk"] and own_paper.arxiv_id in sent.body
    link = mailed_link(sent.body)
    # Whoever reads the mailbox opens the link, signed in or not; a GET confirms nothing (mail
    # scanners fetch links), the button does.
    client.logout()
    shown = Page.of(client.get(link))
    assert "Confirm r.franklin@kcl.ac.uk" in shown.text
    stored.refresh_from_db()
    assert stored.email_confirmed_at is None
    done = client.post(link)
    assert "r.franklin@kcl.ac.uk is confirmed" in Page.of(done).text
    stored.refresh_from_db()
    assert stored.email_confirmed_at is not None
    client.force_login(reader)
    assert "r.franklin@kcl.ac.uk: confirmed" in Page.of(client.get("/claims/")).text


def test_a_tampered_or_foreign_link_confirms_nothing(client, reader, own_paper):
    client.force_login(reader)
    claim(client, own_paper, institution_email="r.franklin@kcl.ac.uk")
    link = mailed_link(str(mail.outbox[0].body)).rstrip("/").rpartition("/")[2]
    token = link[:-3] + ("AAA" if not link.endswith("AAA") else "BBB")
    for bad in (token, "nonsense", "x" * 3000):
        response = client.post(f"/claims/confirm/{bad}/")
        assert response.status_code == 400
        assert "not one we sent" in Page.of(response).text
    assert Claim.objects.get().email_confirmed_at is None


def test_a_personal_mailbox_is_no_evidence(client, reader, own_paper):
    client.force_login(reader)
    response = claim(client, own_paper, institution_email="rosalind@gmail.com")
    assert "personal mailbox" in Page.of(response).text
    assert not Claim.objects.exists() and mail.outbox == []


def test_a_note_alone_is_evidence_for_the_curator(client, reader, own_paper):
    client.force_login(reader)
    claim(client, own_paper, note="My home page https://example.org/rf lists it.")
    assert Claim.objects.get().note == "My home page https://example.org/rf lists it."


def test_no_evidence_at_all_is_refused(client, reader, own_paper):
    client.force_login(reader)
    response = claim(client, own_paper)
    assert response.status_code == 400
    assert "Give some evidence" in Page.of(response).text
    assert not Claim.objects.exists()


def test_claiming_twice_keeps_one_standing_claim(client, reader, own_paper):
    client.force_login(reader)
    claim(client, own_paper, orcid=ORCID)
    response = claim(client, own_paper, orcid=ORCID)
    assert "You already claim arXiv:" in Page.of(client.get(response["Location"])).text
    assert Claim.objects.count() == 1


def test_one_name_shared_by_two_people_each_ticks_their_own(client, reader, rival):
    # Two different people both called Ada Lovelace here: one writes on consensus, the other
    # on compilers. The author page offers both papers, ticked by neither.
    consensus = make_paper(title="Consensus at scale", authors=["Ada Lovelace"])
    compilers = make_paper(title="Compilers that prove", authors=["Ada Lovelace", "Alan Turing"])
    author_page = Page.of(client.get("/author/Ada Lovelace/"))
    link = {text: href for href, text in author_page.links()}["Some of these are yours? Claim them"]
    client.force_login(reader)
    offered = Page.of(client.get(link))
    boxes = offered.select("input", type="checkbox", name="paper")
    assert sorted(box.attrs["value"] for box in boxes) == sorted(
        [consensus.arxiv_id, compilers.arxiv_id]
    )
    assert not any("checked" in box.attrs for box in boxes)
    claim(client, consensus, orcid=ORCID, author="Ada Lovelace")
    client.force_login(rival)
    claim(client, compilers, note="The compilers one is mine.", author="Ada Lovelace")
    assert set(Claim.objects.values_list("user__username", "paper__title")) == {
        ("rosalind", "Consensus at scale"),
        ("rhea", "Compilers that prove"),
    }


def test_several_papers_are_claimed_at_once(client, reader):
    papers = [make_paper(authors=["Rosalind Franklin"]) for _ in range(3)]
    client.force_login(reader)
    response = claim(client, *papers, orcid=ORCID)
    assert "Claimed 3 papers" in Page.of(client.get(response["Location"])).text
    assert Claim.objects.filter(user=reader, status="pending").count() == 3


def test_a_reader_withdraws_and_the_record_stays(client, reader, rival, own_paper):
    client.force_login(reader)
    claim(client, own_paper, orcid=ORCID)
    stored = Claim.objects.get()
    # Someone else's claim cannot be withdrawn by guessing its number.
    client.force_login(rival)
    client.post("/claims/withdraw/", {"claim": stored.pk})
    stored.refresh_from_db()
    assert stored.status == "pending"
    client.force_login(reader)
    page = Page.of(client.get("/claims/"))
    client.post("/claims/withdraw/", page.form("/claims/withdraw/"))
    stored.refresh_from_db()
    assert stored.status == "withdrawn"
    after = Page.of(client.get("/claims/"))
    assert "Withdrawn" in after.text
    assert after.select("form", action="/claims/withdraw/") == []
    # Withdrawn, the paper may be claimed again: a new row, the old one kept.
    claim(client, own_paper, note="Claiming again with a note.")
    assert list(Claim.objects.order_by("id").values_list("status", flat=True)) == [
        "withdrawn",
        "pending",
    ]


@pytest.mark.parametrize(
    "hostile",
    [
        {"paper": ["../../etc/passwd", "2611.99999", "x" * 5000]},
        {"note": "a\x00b"},
        {"note": "n" * 20_000},
        {"institution_email": "<script>@example.org"},
        {"orcid": "0" * 10_000},
    ],
)
def test_hostile_input_is_answered_with_a_message_and_changes_nothing(
    client, reader, own_paper, hostile
):
    client.force_login(reader)
    data = {"paper": [own_paper.arxiv_id], "orcid": ORCID, "note": "", "institution_email": ""}
    data.update(hostile)
    response = client.post("/claims/new/", data)
    assert response.status_code in (200, 400)
    assert not Claim.objects.exists() and mail.outbox == []


def test_signed_out_readers_are_asked_to_sign_in(client, own_paper):
    response = client.get(f"/claims/new/?paper={own_paper.arxiv_id}")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert client.post("/claims/withdraw/", {"claim": 1}).status_code == 302
    assert not Claim.objects.exists()


def test_hostile_get_parameters(client, reader):
    client.force_login(reader)
    assert client.get("/claims/new/?author=" + "a" * 5000).status_code == 200
    assert "There is no such paper here" in Page.of(client.get("/claims/new/?paper=..%2F")).text
    refused = client.get("/claims/new/?author=%00")
    assert refused.status_code == 400 and "NUL character" in refused.text


def test_unticking_every_paper_is_answered_on_the_form(client, reader, own_paper):
    client.force_login(reader)
    form = Page.of(client.get(f"/claims/new/?paper={own_paper.arxiv_id}")).form("/claims/new/")
    del form["paper"]
    form["orcid"] = ORCID
    response = client.post("/claims/new/", form)
    page = Page.of(response)
    assert response.status_code == 400 and "Tick at least one paper that is yours." in page.text
    assert page.select("input", type="checkbox", value=own_paper.arxiv_id)
    assert not Claim.objects.exists()
