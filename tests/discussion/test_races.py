"""Racing writes on real Postgres connections, from real threads started together: a form
sent twice at once stores one comment, a double vote one vote, and the counts stay exact."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from discussion import writing
from discussion.models import Comment, Thread, Vote
from discussion.targets import Target
from market.models.notices import Notice
from tests.factories import make_paper
from tests.threads import run_threads

pytestmark = pytest.mark.django_db(transaction=True)


def people(django_user_model, count: int) -> list:
    joined = timezone.now() - dt.timedelta(days=30)
    return [
        django_user_model.objects.create_user(f"racer{i}", date_joined=joined) for i in range(count)
    ]


def test_a_form_sent_twice_at_once_stores_one_comment(django_user_model):
    paper = make_paper()
    (writer,) = people(django_user_model, 1)
    target = Target("paper", paper.pk)
    made = run_threads(
        6, lambda i: writing.post(user=writer, target=target, body="Same form", key="k1").pk
    )
    assert len(set(made)) == 1
    assert Comment.objects.count() == 1
    assert Thread.objects.get().comment_count == 1


def test_a_double_vote_is_one_vote_and_many_voters_count_exactly(django_user_model):
    paper = make_paper()
    writer, *voters = people(django_user_model, 7)
    comment = writing.post(user=writer, target=Target("paper", paper.pk), body="Vote", key="v")
    run_threads(8, lambda i: writing.vote(user=voters[0], comment_id=comment.pk, up=True))
    assert Vote.objects.count() == 1
    run_threads(6, lambda i: writing.vote(user=voters[i], comment_id=comment.pk, up=True))
    assert Comment.objects.get().score == Vote.objects.count() == 6


def test_comments_at_once_on_one_thread_are_all_counted_and_told_once(django_user_model):
    paper = make_paper()
    follower, *writers = people(django_user_model, 7)
    target = Target("paper", paper.pk)
    writing.follow(user=follower, target=target, on=True)
    run_threads(
        6,
        lambda i: writing.post(user=writers[i], target=target, body=f"Point {i}", key=str(i)),
    )
    assert Thread.objects.get().comment_count == Comment.objects.count() == 6
    told = Notice.objects.filter(user=follower)
    assert told.count() == 1
    assert "6 new comments in discussions you follow" in told.get().text
