"""The opt-in daily digest: what subscribers get after an ingest, and who gets nothing."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail

from accounts.digest import send_daily_digests
from accounts.models import Preferences
from market.models import Term
from papers.models import Category
from tests.factories import buy, list_paper, make_paper, make_topical_papers
from tests.market.state import held_before_the_announcement
from tests.text import html_part

pytestmark = pytest.mark.django_db

FRIDAY = dt.date(2026, 10, 2)


def subscribe(user) -> None:
    Preferences.objects.update_or_create(user=user, defaults={"daily_digest": True})


def test_subscriber_gets_the_days_papers_and_term_moves(cs_dc, reader, trader):
    cs_dc.toggle_watch(reader)
    subscribe(reader)
    kv = Term.objects.create(phrase="KV cache")
    buy(reader, kv, 3)
    list_paper(
        make_paper(title="Paging the KV cache", authors=["Ada Lovelace"]),
        category=cs_dc,
        date=FRIDAY,
    )
    list_paper(make_paper(title="Older paper"), category=cs_dc, date=FRIDAY - dt.timedelta(1))
    list_paper(
        make_paper(title="Robots", primary="cs.RO"),
        category=Category.objects.get(code="cs.RO"),
        date=FRIDAY,
    )

    assert send_daily_digests(date=FRIDAY, base_url="https://peer.example") == 1
    [message] = mail.outbox
    assert message.to == ["rosalind@example.org"]
    assert message.subject == "Peer Revenue digest for Friday 2 October"
    assert "Paging the KV cache" in message.body
    assert "https://peer.example/abs/" in message.body
    assert "Older paper" not in message.body and "Robots" not in message.body
    assert "KV cache: 3 shares, 1.03 credits a share" in message.body
    html = html_part(message)
    assert "Paging the KV cache" in html


def test_digest_is_sent_once_per_day(cs_dc, reader):
    cs_dc.toggle_watch(reader)
    subscribe(reader)
    list_paper(make_paper(title="Once only"), category=cs_dc, date=FRIDAY)
    assert send_daily_digests(date=FRIDAY) == 1
    assert send_daily_digests(date=FRIDAY) == 0
    assert len(mail.outbox) == 1


def test_nobody_is_mailed_without_opting_in_or_with_nothing_to_say(cs_dc, reader, trader):
    cs_dc.toggle_watch(reader)  # watches, but never opted in
    subscribe(trader)  # opted in, but watches nothing and holds nothing
    list_paper(make_paper(title="Quiet day"), category=cs_dc, date=FRIDAY)
    assert send_daily_digests(date=FRIDAY) == 0
    assert mail.outbox == []


def test_preferences_page_turns_the_digest_on(client, reader):
    client.force_login(reader)
    assert "Send me the daily digest" in client.get("/accounts/settings/").content.decode()
    response = client.post("/accounts/settings/", {"daily_digest": "on"}, follow=True)
    assert "Your preferences are saved." in response.content.decode()
    assert Preferences.objects.get(user=reader).daily_digest
    client.post("/accounts/settings/", {})
    assert not Preferences.objects.get(user=reader).daily_digest


def test_preferences_need_a_login(client):
    response = client.get("/accounts/settings/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_digest_carries_the_days_dividends_and_the_biggest_moves_first(cs_dc, reader, rival):
    from market import dividends

    subscribe(reader)
    kv = Term.objects.create(phrase="KV cache")
    raft = Term.objects.create(phrase="Raft", p0=2_000_000, k=50_000)
    quiet = Term.objects.create(phrase="Quorum")
    buy(reader, kv, 3)
    buy(reader, raft, 1)
    buy(reader, quiet, 1)
    # Dividends pay what was held at the announcement: the reader's shares are older than
    # both days' announcements; the rival's buys are today's, and move today's prices.
    held_before_the_announcement(FRIDAY - dt.timedelta(days=1))
    buy(rival, raft, 9)
    buy(rival, kv, 3)
    papers = [
        make_paper(title="Paging the KV cache"),
        make_paper(title="A KV cache for agents"),
        make_paper(title="Raft, again"),
    ]
    for paper in papers:
        list_paper(paper, category=cs_dc, date=FRIDAY)
    dividends.pay_dividend(
        term=kv, paper_ids=[p.pk for p in papers[:2]], per_share=50_000, date=FRIDAY
    )
    dividends.pay_dividend(term=raft, paper_ids=[papers[2].pk], per_share=50_000, date=FRIDAY)
    # Paid for an earlier day: not in this digest.
    old = make_paper(title="Old KV cache")
    list_paper(old, category=cs_dc, date=FRIDAY - dt.timedelta(days=1))
    dividends.pay_dividend(
        term=kv, paper_ids=[old.pk], per_share=50_000, date=FRIDAY - dt.timedelta(days=1)
    )

    assert send_daily_digests(date=FRIDAY, base_url="https://peer.example") == 1
    body = mail.outbox[0].body
    assert "Your dividends for the day's papers: 0.35 credits" in body
    assert "- KV cache: 0.30 credits for 2 mentioning papers" in body
    assert "- Raft: 0.05 credits for 1 mentioning paper\n" in body
    moves = body[body.index("Biggest moves in your terms:") :]
    # Raft rose 21.95% today (nine more shares on one), KV cache 3% (three on three), Quorum not.
    assert moves.index("Raft") < moves.index("KV cache") < moves.index("Quorum")
    # Rounded half away from zero, as credits are: the page and the e-mail say the same.
    assert "Raft: 1 share, 2.50 credits a share (+22.0% today)" in moves
    html = html_part(mail.outbox[0])
    assert "Your dividends: 0.35 credits" in html
    assert 'href="https://peer.example/market/raft/"' in html


@pytest.fixture
def fresh_text_model():
    """The process keeps the fitted model and pool between requests; each test fits its own."""
    from library.recommend import pool, text

    pool.forget()
    text.forget()
    yield
    pool.forget()
    text.forget()


def picks_for(reader, papers) -> None:
    from library import saves
    from library.recommend import readers, text

    for paper in papers:
        saves.save(user=reader, paper=paper)
    text.fit()
    readers.refit(user_id=reader.pk)


def for_you_part(body: str) -> str:
    return body.split("For you")[1].split("You get this email")[0]


def test_the_digest_picks_new_papers_like_the_readers_library(fresh_text_model, cs_dc, reader):
    subscribe(reader)  # watches nothing: the picks alone are worth a mail
    papers = make_topical_papers(cs_dc, per_topic=9, last_day=FRIDAY)
    older = make_topical_papers(
        cs_dc, per_topic=3, last_day=FRIDAY - dt.timedelta(days=5), title="Earlier,"
    )
    picks_for(reader, papers["serving"][:3])

    assert send_daily_digests(date=FRIDAY, base_url="https://peer.example") == 1
    [message] = mail.outbox
    part = for_you_part(str(message.body))
    shown = [p for p in papers["serving"][3:] if p.title in part]
    assert len(shown) == 5  # the best five of the six unsaved serving papers
    assert not any(p.title in part for p in papers["consensus"] + papers["storage"])
    assert not any(p.title in part for p in papers["serving"][:3])  # saved already
    assert not any(p.title in part for p in older["serving"])  # announced before the 3 days
    assert "Why: like 3 papers in your library; shares" in part
    assert f"https://peer.example{shown[0].get_absolute_url()}" in part
    html = for_you_part(html_part(message))
    assert all(p.title in html for p in shown) and "why: like 3 papers in your library" in html


def test_a_digest_pick_already_in_the_days_list_is_not_repeated(fresh_text_model, cs_dc, reader):
    cs_dc.toggle_watch(reader)
    subscribe(reader)
    papers = make_topical_papers(cs_dc, per_topic=3, days=1, last_day=FRIDAY)
    picks_for(reader, papers["serving"][:1])
    assert send_daily_digests(date=FRIDAY) == 1
    [message] = mail.outbox
    for paper in papers["serving"][1:]:
        assert message.body.count(paper.title) == 1
    assert "For you: new papers" not in message.body  # every pick was listed above


def test_a_reader_with_nothing_saved_is_told_how_to_start_and_what_is_hot(
    fresh_text_model, cs_dc, reader, rival
):
    from library import saves

    cs_dc.toggle_watch(reader)
    subscribe(reader)
    list_paper(make_paper(title="The day's paper"), category=cs_dc, date=FRIDAY)
    popular = make_paper(title="Everybody saves this")
    list_paper(popular, category=cs_dc, date=FRIDAY - dt.timedelta(days=1))
    saves.save(user=rival, paper=popular)

    assert send_daily_digests(date=FRIDAY, base_url="https://peer.example") == 1
    [message] = mail.outbox
    part = for_you_part(str(message.body))
    assert "Save papers you like" in part and "hot this week" in part
    assert "Everybody saves this (1 save, 0 trades in its terms)" in part
    assert "https://peer.example/hot/" in part
    assert "Everybody saves this" in for_you_part(html_part(message))


def test_how_to_start_alone_is_no_reason_to_mail(fresh_text_model, cs_dc, reader, rival):
    from library import saves

    subscribe(reader)  # nothing watched, held or saved
    popular = make_paper(title="Everybody saves this")
    list_paper(popular, category=cs_dc, date=FRIDAY)
    saves.save(user=rival, paper=popular)
    assert send_daily_digests(date=FRIDAY) == 0
