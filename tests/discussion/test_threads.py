"""Threads on paper and term pages as readers use them: comment, reply, edit, delete, vote,
permalink, pages of a long thread."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from discussion.models import Comment
from discussion.threads import PER_PAGE
from tests.discussion.speak import comments_on, post, texts
from tests.factories import buy
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


def test_a_comment_with_a_formula_shows_on_the_paper_page(client, writer, paper):
    url = paper.get_absolute_url()
    anonymous = Page.of(client.get(url))
    assert "No comments yet." in anonymous.text
    assert "Sign in to comment" in anonymous.text
    client.force_login(writer)
    response = post(client, target=f"paper:{paper.pk}", body="Is $x^2 \\leq n$ *tight*?", next_=url)
    assert response.status_code == 303
    comment = Comment.objects.get()
    assert response["Location"] == f"{url}#comment-{comment.pk}"
    html = client.get(url).content.decode()
    article = comments_on(client, url)[0]
    assert article.id == f"comment-{comment.pk}"
    assert "<math alttext=" in html and "<em>tight</em>" in html
    assert "tobias" in article.text and "0 votes" in article.text
    assert "1 comment" in Page.of(client.get(url)).one("h2", id="discussion-heading").text
    client.logout()
    assert "1 comment" in page_text(client.get(url))  # the anonymous page, kept, moved too


def test_a_formula_the_typesetter_cannot_set_shows_its_source(client, writer, paper):
    client.force_login(writer)
    post(client, target=f"paper:{paper.pk}", body="See $\\nosuchmacro{x}$ and $\\frac12$.")
    article = comments_on(client, paper.get_absolute_url())[0]
    assert "$\\nosuchmacro{x}$" in article.text
    assert article.select("math")


def test_replies_are_one_level_deep_and_follow_their_parent(client, writer, other, paper):
    url, target = paper.get_absolute_url(), f"paper:{paper.pk}"
    client.force_login(writer)
    post(client, target=target, body="First thought")
    first = Comment.objects.get()
    client.force_login(other)
    post(client, target=target, body="A reply", parent=first.pk)
    reply = Comment.objects.get(body="A reply")
    post(client, target=target, body="A reply to the reply", parent=reply.pk)
    assert Comment.objects.get(body="A reply to the reply").parent_id == first.pk
    post(client, target=target, body="Second thought")
    assert texts(client, url) == [
        "First thought",
        "A reply",
        "A reply to the reply",
        "Second thought",
    ]
    nested = Page.of(client.get(url)).select("ol", cls="discussion__replies")
    assert len(nested) == 1 and len(nested[0].select("article")) == 2


def test_a_writer_edits_within_the_window_and_it_says_edited(client, writer, paper):
    url = paper.get_absolute_url()
    client.force_login(writer)
    post(client, target=f"paper:{paper.pk}", body="Teh result")
    comment = Comment.objects.get()
    assert Page.of(client.get(url)).select("textarea", id=f"edit-{comment.pk}")
    client.post(f"/discussion/comment/{comment.pk}/edit/", {"body": "The result", "next": url})
    article = comments_on(client, url)[0]
    assert "The result" in article.text and "edited" in article.text
    Comment.objects.filter(pk=comment.pk).update(
        created_at=timezone.now() - dt.timedelta(minutes=16)
    )
    response = client.post(
        f"/discussion/comment/{comment.pk}/edit/",
        {"body": "Changed later", "next": url},
        follow=True,
    )
    assert "can be edited for 15 minutes" in page_text(response)
    assert Comment.objects.get().body == "The result"
    assert not Page.of(client.get(url)).select("textarea", id=f"edit-{comment.pk}")


def test_each_of_a_writers_own_comments_has_its_own_text_to_edit(client, writer, paper):
    # The edit forms are made once per shape and each comment's text put in (discussion.fillers):
    # every form must hold its own comment's text, escaped, whatever the text holds.
    url, target = paper.get_absolute_url(), f"paper:{paper.pk}"
    client.force_login(writer)
    bodies = [
        "First: </textarea><script>alert(1)</script>",
        "Second, with \ue002 and \ue003 and &amp; in it",
        "Third: a reply",
    ]
    post(client, target=target, body=bodies[0])
    post(client, target=target, body=bodies[1])
    top = Comment.objects.get(body=bodies[0])
    post(client, target=target, body=bodies[2], parent=top.pk)
    page = Page.of(client.get(url))
    for body in bodies:
        comment = Comment.objects.get(body=body)
        [area] = page.select("textarea", id=f"edit-{comment.pk}")
        assert area.text == " ".join(body.split())
    assert not page.one("section", id="discussion").select("script")


def test_only_the_writer_edits_or_deletes(client, writer, other, paper):
    client.force_login(writer)
    post(client, target=f"paper:{paper.pk}", body="Mine")
    comment = Comment.objects.get()
    client.force_login(other)
    response = client.post(f"/discussion/comment/{comment.pk}/delete/", {"next": "/"}, follow=True)
    assert "not yours to change" in page_text(response)
    client.post(f"/discussion/comment/{comment.pk}/edit/", {"body": "Theirs", "next": "/"})
    assert Comment.objects.get().body == "Mine" and Comment.objects.get().deleted_at is None


def test_a_deleted_comment_keeps_its_place_and_its_replies(client, writer, other, paper):
    url, target = paper.get_absolute_url(), f"paper:{paper.pk}"
    client.force_login(writer)
    post(client, target=target, body="Regrettable")
    comment = Comment.objects.get()
    client.force_login(other)
    post(client, target=target, body="Indeed", parent=comment.pk)
    client.force_login(writer)
    client.post(f"/discussion/comment/{comment.pk}/delete/", {"next": url})
    articles = comments_on(client, url)
    assert "deleted by its writer" in articles[0].text and "Regrettable" not in articles[0].text
    assert "tobias" not in articles[0].text
    assert "Indeed" in articles[1].text
    assert "1 comment" in Page.of(client.get(url)).one("h2", id="discussion-heading").text
    assert Comment.objects.get(pk=comment.pk).body == ""


def test_upvotes_one_per_reader_sort_the_thread(client, writer, other, reader, paper):
    url, target = paper.get_absolute_url(), f"paper:{paper.pk}"
    client.force_login(writer)
    post(client, target=target, body="Early")
    post(client, target=target, body="Late but good")
    late = Comment.objects.get(body="Late but good")
    assert texts(client, url) == ["Early", "Late but good"]
    for voter in (other, reader):
        client.force_login(voter)
        client.post(f"/discussion/comment/{late.pk}/vote/", {"up": "1", "next": url})
        client.post(f"/discussion/comment/{late.pk}/vote/", {"up": "1", "next": url})
    assert texts(client, url) == ["Late but good", "Early"]
    article = comments_on(client, url)[0]
    assert "2 votes" in article.text
    assert article.one("button", aria_pressed="true").text == "▲ Upvoted"
    client.post(f"/discussion/comment/{late.pk}/vote/", {"up": "0", "next": url})
    assert "1 vote" in comments_on(client, url)[0].text
    client.force_login(writer)
    response = client.post(
        f"/discussion/comment/{late.pk}/vote/", {"up": "1", "next": url}, follow=True
    )
    assert "cannot be voted up by you" in page_text(response)


def test_a_comment_has_a_permalink_page(client, writer, other, paper):
    client.force_login(writer)
    post(client, target=f"paper:{paper.pk}", body="Worth linking")
    comment = Comment.objects.get()
    client.force_login(other)
    post(client, target=f"paper:{paper.pk}", body="Agreed", parent=comment.pk)
    client.logout()
    page = Page.of(client.get(f"/discussion/comment/{comment.pk}/"))
    assert "Worth linking" in page.text and "Agreed" in page.text
    assert (f"{paper.get_absolute_url()}#comment-{comment.pk}", "Read it in the discussion") in (
        page.links()
    )
    assert client.get("/discussion/comment/999999/").status_code == 404


def test_a_long_thread_comes_in_pages(client, writer, paper, django_user_model):
    from discussion import writing
    from discussion.targets import Target

    for n in range(PER_PAGE + 3):
        writing.post(user=writer, target=Target("paper", paper.pk), body=f"Point {n}", key=str(n))
    url = paper.get_absolute_url()
    first = texts(client, url)
    assert len(first) == PER_PAGE and first[0] == "Point 0"
    page = Page.of(client.get(url))
    assert ("?comments=2#discussion", "Next page →") in page.links()
    assert texts(client, url + "?comments=2") == [
        f"Point {n}" for n in range(PER_PAGE, PER_PAGE + 3)
    ]
    assert texts(client, url + "?comments=99") == texts(client, url + "?comments=2")
    last = Comment.objects.get(body=f"Point {PER_PAGE + 1}")
    page = Page.of(client.get(f"/discussion/comment/{last.pk}/"))
    assert (f"{url}?comments=2#comment-{last.pk}", "Read it in the discussion") in page.links()


def test_a_term_page_has_its_thread_with_each_writers_holding(client, writer, other, term):
    url = term.get_absolute_url()
    buy(writer, term, 25)
    client.force_login(writer)
    post(client, target=f"term:{term.pk}", body="Buying: it will be everywhere")
    client.force_login(other)
    post(client, target=f"term:{term.pk}", body="Not convinced")
    articles = comments_on(client, url)
    assert "holds 25" in articles[0].text and "holds" not in articles[1].text
    buy(writer, term, 5)
    assert "holds 30" in comments_on(client, url)[0].text


def test_bad_input_is_refused_with_nothing_stored(client, writer, paper):
    client.force_login(writer)
    for data in (
        {"target": f"paper:{paper.pk}", "body": "   ", "key": "a"},
        {"target": f"paper:{paper.pk}", "body": "x" * 10_001, "key": "b"},
        {"target": "paper:abc", "body": "hi", "key": "c"},
        {"target": "paper:999999999", "body": "hi", "key": "d"},
        {"target": f"paper:{paper.pk}", "body": "hi", "key": "e", "parent": "99999999"},
    ):
        response = client.post("/discussion/post/", {**data, "next": "/"}, follow=True)
        assert response.status_code == 200
        assert (
            "Nothing was posted" in page_text(response) or "nothing" in page_text(response).lower()
        )
    assert not Comment.objects.exists()
    assert client.get("/discussion/post/").status_code == 405


def test_a_comment_on_a_later_page_changes_only_the_count_on_the_first(
    client, writer, other, paper, monkeypatch
):
    # The first page is kept under what it shows (its comments' stamps), not under the whole
    # thread's: a new comment sorts after the page's (fewer votes, later), so the first page
    # renders nothing again, for any reader, and shows the new count.
    from discussion import writing
    from discussion.targets import Target
    from peerrevenue import freshness, keep

    target = Target("paper", paper.pk)
    for n in range(PER_PAGE + 1):  # two pages: a third comment moves no page's number of pages
        writing.post(user=writer, target=target, body=f"Point {n}", key=str(n))
    url = paper.get_absolute_url()
    client.force_login(other)
    anonymous = client.__class__()
    for reader in (client, anonymous):
        assert len(texts(reader, url)) == PER_PAGE
    made: list[str] = []
    render = keep.render_piece

    def counted(template_name, context, *, facts):
        if template_name.startswith("discussion/") and not freshness.checking():
            made.append(template_name)
        return render(template_name, context, facts=facts)

    monkeypatch.setattr(keep, "render_piece", counted)
    writing.post(user=writer, target=target, body="On the next page", key="later")
    for reader in (client, anonymous):
        page = Page.of(reader.get(url))
        assert f"{PER_PAGE + 2} comments" in page.one("h2", id="discussion-heading").text
        assert "On the next page" not in page_text(reader.get(url))
    assert made == []
    assert texts(client, url + "?comments=2") == [f"Point {PER_PAGE}", "On the next page"]


def comment_renders(monkeypatch) -> list[str]:
    """The comments whose HTML the site renders from here on (not the freshness check's
    renders, which make every kept value afresh to compare)."""
    from peerrevenue import freshness, keep

    made: list[str] = []
    render = keep.render_piece

    def counted(template_name, context, *, facts):
        if template_name == "discussion/_comment.html" and not freshness.checking():
            made.append(f"comment-{context['comment'].pk}")
        return render(template_name, context, facts=facts)

    monkeypatch.setattr(keep, "render_piece", counted)
    return made


@pytest.mark.django_db(transaction=True)  # each write commits, and its hook runs, as live
def test_every_write_keeps_the_comments_html_before_the_next_reader_comes(
    client, writer, other, paper, monkeypatch
):
    # A comment's HTML is made as its write commits (threads.keep_comment_html), so the
    # thread's next reader joins kept HTML and renders no comment; the suite's freshness check
    # (KEEP_VERIFY) holds what they get to a fresh render after every kind of write.
    from discussion import moderation, threads

    url, target = paper.get_absolute_url(), f"paper:{paper.pk}"
    reader = client.__class__()
    made = comment_renders(monkeypatch)
    client.force_login(writer)
    with monkeypatch.context() as before:
        before.setattr(threads, "keep_comment_html", lambda comment_id: None)
        post(client, target=target, body="Before the commit hook ran: rendered by its reader.")
    first = Comment.objects.get()
    comments_on(reader, url)
    assert made == [f"comment-{first.pk}"]  # what each reader paid before

    def written(write) -> list[str]:
        write()
        made.clear()
        shown = [article.text for article in comments_on(reader, url)]
        shown += [article.text for article in comments_on(client, url)]
        assert made == [], "the next page rendered a comment again"
        return shown

    assert any(
        "$x$" in text for text in written(lambda: post(client, target=target, body="On $x$."))
    )
    mine = Comment.objects.get(body="On $x$.")
    client.force_login(other)
    shown = written(lambda: post(client, target=target, body="A reply.", parent=mine.pk))
    assert any("A reply." in text for text in shown)
    reply = Comment.objects.get(body="A reply.")
    vote = f"/discussion/comment/{mine.pk}/vote/"
    assert any("1 vote" in t for t in written(lambda: client.post(vote, {"up": "1", "next": url})))
    assert not any(
        "1 vote" in t for t in written(lambda: client.post(vote, {"up": "0", "next": url}))
    )
    edit = f"/discussion/comment/{reply.pk}/edit/"
    assert any(
        "edited" in t
        for t in written(lambda: client.post(edit, {"body": "Now this.", "next": url}))
    )
    hidden = written(lambda: moderation.hide(comment_id=mine.pk, reason="off topic"))
    assert any("Hidden by a curator: off topic" in text for text in hidden)
    assert not any("Hidden" in t for t in written(lambda: moderation.restore(comment_id=mine.pk)))
    delete = f"/discussion/comment/{reply.pk}/delete/"
    assert any(
        "deleted by its writer" in t for t in written(lambda: client.post(delete, {"next": url}))
    )


@pytest.mark.django_db(transaction=True)  # the hook runs after a real commit
def test_a_comment_is_posted_even_when_its_html_cannot_be_kept_after_the_commit(
    client, writer, paper, monkeypatch
):
    from django.db import OperationalError

    from discussion import threads

    def gone(comment_id: int) -> None:
        raise OperationalError("the server closed the connection unexpectedly")

    monkeypatch.setattr(threads, "keep_comment_html", gone)
    client.force_login(writer)
    url = paper.get_absolute_url()
    response = post(client, target=f"paper:{paper.pk}", body="Committed all the same.", next_=url)
    assert response.status_code == 303  # the write committed: it is never reported as failed
    assert texts(client, url) == ["Committed all the same."]
