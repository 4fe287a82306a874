"""Moderation and spam: reports, the curators' queue, suspensions, new accounts' limits, the
same text refused, every write rate-limited."""

from __future__ import annotations

import pytest
from django.test import override_settings

from discussion import rules, writing
from discussion.models import Comment, Report, Suspension
from discussion.targets import Target
from tests.discussion.speak import comments_on, post
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def spam(writer, paper):
    return writing.post(
        user=writer,
        target=Target("paper", paper.pk),
        body="Buy pills https://spam.example",
        key="s",
    )


def test_a_reader_reports_a_comment_with_a_reason(client, other, spam, paper):
    url = paper.get_absolute_url()
    client.force_login(other)
    form = comments_on(client, url)[0].one("form", action=f"/discussion/comment/{spam.pk}/report/")
    assert [o.get("value") for o in form.select("option")] == Report.Reason.values
    response = client.post(
        f"/discussion/comment/{spam.pk}/report/",
        {"reason": "spam", "details": "pills", "next": url},
        follow=True,
    )
    assert "curators will look" in page_text(response)
    client.post(f"/discussion/comment/{spam.pk}/report/", {"reason": "spam", "next": url})
    assert Report.objects.get().reason == "spam"  # once per reader
    response = client.post(
        f"/discussion/comment/{spam.pk}/report/", {"reason": "nonsense", "next": url}, follow=True
    )
    assert "Choose why" in page_text(response)


def test_a_curator_hides_from_the_queue_and_it_is_gone_from_every_page_at_once(
    client, staff, other, spam, paper
):
    Report.objects.create(comment=spam, reporter=other, reason="spam")
    url = paper.get_absolute_url()
    reader = client.__class__()
    assert "Buy pills" in page_text(reader.get(url))  # kept, for anonymous readers
    queue = page_text(staff.get("/admin/discussion/report/"))
    assert "Buy pills" in queue and "Spam or advertising" in queue
    report = Report.objects.get()
    staff.post(
        "/admin/discussion/report/",
        {"action": "hide_comments", "_selected_action": [report.pk]},
    )
    for page in (url, f"/discussion/comment/{spam.pk}/", f"/discussion/paper:{paper.pk}/feed.atom"):
        text = reader.get(page).content.decode()
        assert "Buy pills" not in text, page
    assert "Hidden by a curator: Spam or advertising" in page_text(reader.get(url))
    assert Report.objects.get().resolved_at is not None
    staff.post(
        "/admin/discussion/report/",
        {"action": "restore_comments", "_selected_action": [report.pk]},
    )
    assert "Buy pills" in page_text(reader.get(url))


def test_a_suspended_writer_cannot_comment(client, staff, other, spam, writer, paper):
    report = Report.objects.create(comment=spam, reporter=other, reason="abuse")
    staff.post(
        "/admin/discussion/report/",
        {"action": "suspend_writers", "_selected_action": [report.pk]},
    )
    assert Suspension.objects.get().user == writer
    client.force_login(writer)
    url = paper.get_absolute_url()
    assert "suspended you from commenting" in page_text(client.get(url))
    response = post(client, target=f"paper:{paper.pk}", body="Again", next_=url)
    assert "suspended you from commenting" in page_text(client.get(response["Location"]))
    assert Comment.objects.count() == 1


def test_new_accounts_post_no_links_and_a_few_comments_a_day(client, reader, paper):
    client.force_login(reader)  # joined just now
    target = f"paper:{paper.pk}"
    assert "post no links" in page_text(client.get(paper.get_absolute_url()))
    response = post(client, target=target, body="See https://example.org", next_="/")
    assert "cannot post links yet" in page_text(client.get(response["Location"]))
    for n in range(rules.NEW_ACCOUNT_DAILY):
        post(client, target=target, body=f"Comment {n}")
    response = post(client, target=target, body="One more", next_="/")
    assert f"{rules.NEW_ACCOUNT_DAILY} comments a day" in page_text(
        client.get(response["Location"])
    )
    assert Comment.objects.count() == rules.NEW_ACCOUNT_DAILY


def test_the_same_text_is_refused(client, writer, other, reader, paper, django_user_model):
    target = Target("paper", paper.pk)
    writing.post(user=writer, target=target, body="Great paper!", key="1")
    with pytest.raises(rules.Refused, match="same text already"):
        writing.post(user=writer, target=target, body="great   PAPER!\u200b", key="2")
    writing.post(user=other, target=target, body="Great paper!", key="3")
    third = django_user_model.objects.create_user("third", date_joined=writer.date_joined)
    writing.post(user=third, target=target, body="Great paper!", key="4")
    fourth = django_user_model.objects.create_user("fourth", date_joined=writer.date_joined)
    with pytest.raises(rules.Refused, match="too many times"):
        writing.post(user=fourth, target=target, body="Great paper!", key="5")
    assert Comment.objects.count() == 3


@override_settings(RATELIMIT_WINDOW_SECONDS=3600)
def test_every_write_is_rate_limited(client, writer, other, paper, monkeypatch):
    monkeypatch.setattr(rules, "WRITES_PER_WINDOW", 3)
    comment = writing.post(user=other, target=Target("paper", paper.pk), body="Hi", key="1")
    client.force_login(writer)
    for up in ("1", "0", "1"):
        client.post(f"/discussion/comment/{comment.pk}/vote/", {"up": up, "next": "/"})
    response = client.post(f"/discussion/comment/{comment.pk}/vote/", {"up": "0", "next": "/"})
    assert response.status_code == 429 and "Nothing was changed" in page_text(response)
    assert post(client, target=f"paper:{paper.pk}", body="x").status_code == 429
    assert Comment.objects.get().score == 1


def test_links_are_marked_user_content(client, writer, paper):
    writing.post(
        user=writer, target=Target("paper", paper.pk), body="[src](https://example.org/x)", key="1"
    )
    link = Page.of(client.get(paper.get_absolute_url())).one("a", href="https://example.org/x")
    assert link.get("rel") == "ugc nofollow"
