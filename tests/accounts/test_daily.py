"""The daily pipeline, run as beat runs it (tasks eager, feeds from a local arXiv stand-in):
someone watching two categories gets one digest with both, once, and only when both are in."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.core import mail

from accounts.daily import run_daily
from accounts.models import Preferences
from papers.models import Category, IngestRun
from tests.papers.helpers import FakeArxiv, Reply, fixture_bytes

pytestmark = pytest.mark.django_db

DC_FEED = fixture_bytes("rss_new.xml")  # Tuesday 24 November: two papers
# The same day in cs.NI, with its own two papers.
NI_FEED = (
    DC_FEED.replace(b"cs.DC", b"cs.NI")
    .replace(b"2611.182", b"2611.192")
    .replace(b"Straggler-Aware Gradient Coding", b"Congestion Control")
    .replace(b"Raft with Leases", b"Routing with Leases")
)
NI_FEED_OF_MONDAY = NI_FEED.replace(b"Tue, 24 Nov 2026", b"Mon, 23 Nov 2026")


@pytest.fixture
def arxiv(settings) -> Iterator[FakeArxiv]:
    server = FakeArxiv()
    settings.ARXIV_RSS_URL = server.url + "/rss/{category}"
    settings.ARXIV_ENRICH = False
    settings.ARXIV_HTTP_RETRIES = 0
    yield server
    server.close()


@pytest.fixture
def eager(settings):
    from peerrevenue.celery import app

    before = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = before


@pytest.fixture
def subscriber(reader, cs_dc):
    """Rosalind watches cs.DC and cs.NI, both ingested daily, and asked for the digest."""
    # Made here too: a transactional test's flush takes the data migration's categories away.
    cs_ni, _ = Category.objects.update_or_create(
        code="cs.NI",
        defaults={
            "name": "Networking and Internet Architecture",
            "archive_code": "cs",
            "archive_name": "Computer Science",
            "ingest_enabled": True,
        },
    )
    cs_dc.toggle_watch(reader)
    cs_ni.toggle_watch(reader)
    Preferences.objects.create(user=reader, daily_digest=True)
    return reader


def test_one_digest_covers_every_watched_category_and_a_rerun_sends_nothing(
    arxiv, eager, subscriber
):
    arxiv.route("/rss/cs.DC", Reply(200, DC_FEED))
    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED))

    run_daily.delay()

    [digest] = mail.outbox
    assert digest.to == [subscriber.email]
    assert digest.subject == "Peer Revenue digest for Tuesday 24 November"
    for title in (
        "Straggler-Aware Gradient Coding",
        "Raft with Leases",
        "Congestion Control",
        "Routing with Leases",
    ):
        assert title in digest.body

    run_daily.delay(last_attempt=True)

    assert len(mail.outbox) == 1
    # The same feeds again: each day keeps its one run.
    assert IngestRun.objects.filter(status="succeeded").count() == 2


def test_a_second_beat_firing_the_same_slot_starts_nothing(arxiv, eager, subscriber):
    """Two beats running by mistake: the slot's run happens once, then the 23:30 one."""
    arxiv.route("/rss/cs.DC", Reply(200, DC_FEED))
    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED))

    assert run_daily.delay(slot="21:30").get()
    assert run_daily.delay(slot="21:30").get() == []

    assert IngestRun.objects.count() == 2 and len(mail.outbox) == 1
    assert len(arxiv.hits("/rss/cs.DC")) == 1
    assert run_daily.delay(last_attempt=True, slot="23:30").get()
    # The feeds fetched again at 23:30 are the days stored at 21:30: one run a day each.
    assert len(arxiv.hits("/rss/cs.DC")) == 2
    assert IngestRun.objects.count() == 2 and len(mail.outbox) == 1


def test_the_digest_waits_for_a_category_whose_day_is_not_in_yet(arxiv, eager, subscriber):
    arxiv.route("/rss/cs.DC", Reply(200, DC_FEED))
    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED_OF_MONDAY))  # not rebuilt yet at 21:30

    run_daily.delay()
    assert mail.outbox == []

    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED))  # rebuilt by 23:30
    run_daily.delay(last_attempt=True)

    [digest] = mail.outbox
    assert "Raft with Leases" in digest.body and "Routing with Leases" in digest.body


def test_the_last_attempt_sends_what_is_in(arxiv, eager, subscriber):
    arxiv.route("/rss/cs.DC", Reply(200, DC_FEED))
    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED_OF_MONDAY))  # never rebuilt tonight

    run_daily.delay(last_attempt=True)

    subjects = sorted(message.subject for message in mail.outbox)
    assert subjects == [
        "Peer Revenue digest for Monday 23 November",
        "Peer Revenue digest for Tuesday 24 November",
    ]
    tuesday = next(message for message in mail.outbox if "Tuesday" in message.subject)
    assert "Raft with Leases" in tuesday.body and "Routing with Leases" not in tuesday.body


def test_the_last_attempt_sends_what_is_in_when_no_feed_changed_since_the_first(
    arxiv, eager, subscriber
):
    """At 23:30 every feed is the one stored at 21:30: no new run, and the day's subscribers
    still get what is in."""
    arxiv.route("/rss/cs.DC", Reply(200, DC_FEED))
    arxiv.route("/rss/cs.NI", Reply(200, NI_FEED_OF_MONDAY))  # never rebuilt tonight

    run_daily.delay()
    assert mail.outbox == []
    run_daily.delay(last_attempt=True)

    assert IngestRun.objects.count() == 2
    subjects = sorted(message.subject for message in mail.outbox)
    assert subjects == [
        "Peer Revenue digest for Monday 23 November",
        "Peer Revenue digest for Tuesday 24 November",
    ]


def test_beat_starts_the_pipeline_twice_an_announcement_evening():
    schedule = {
        entry["task"]: entry
        for entry in django_settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"].startswith("accounts.daily.")
    }
    assert set(schedule) == {"accounts.daily.run_daily"}
    runs = sorted(
        (sorted(entry["schedule"].hour), entry["kwargs"])
        for entry in django_settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"] == "accounts.daily.run_daily"
    )
    assert runs == [
        ([21], {"last_attempt": False, "slot": "21:30"}),
        ([23], {"last_attempt": True, "slot": "23:30"}),
    ]
    assert "papers.tasks.ingest_enabled_categories" not in {
        entry["task"] for entry in django_settings.CELERY_BEAT_SCHEDULE.values()
    }
