"""One signed-in user scripting changes: watch and follow toggles, saved searches and term
proposals stop at a per-user limit with a page that says how long to wait, and nothing past the
limit is changed. Others are unaffected."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.urls import reverse

from accounts.saved_searches import SavedSearch, save_search
from market.models import TermProposal
from papers.models import Watch
from peerrevenue import ratelimit
from peerrevenue.ratelimit import seconds_until_reset, wait_text
from tests.html import page_text

ROOT = Path(__file__).resolve().parents[2]
WAIT = re.compile(r"try again in (\d+ seconds?|a minute|\d+ minutes)\.")


# 210.25 s into a five-minute window (and a whole number of days, for the daily limit): the
# window ends in 89.75 s, which a reader is told as 90 s, "2 minutes".
PINNED_NOW = 20_000 * 86_400 + 210.25
SECONDS_LEFT = 90


@pytest.fixture(autouse=True)
def pinned_clock(monkeypatch):
    """The limits' clock stands still, so a test knows which window it is in and how long it
    has left (and never straddles two windows)."""
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: PINNED_NOW))


@pytest.fixture
def reader_client(client, reader):
    client.force_login(reader)
    return client


def assert_refused(response, *, done: str, limit: int) -> None:
    assert response.status_code == 429
    text = page_text(response)
    assert f"You have {done} {limit} times in the last 5 minutes, the most we take." in text
    assert f"Nothing was changed; try again in {wait_text(SECONDS_LEFT)}." in text, text
    assert WAIT.search(text), text
    assert response["Retry-After"] == str(SECONDS_LEFT)


@pytest.mark.django_db
def test_watch_toggles_stop_at_the_limit(reader_client, reader, rival, cs_dc, client, settings):
    settings.RATELIMIT_WATCHES_PER_WINDOW = 5
    url = reverse("papers:watch", args=["cs.DC"])
    answers = [reader_client.post(url) for _ in range(8)]
    assert [answer.status_code for answer in answers[:5]] == [302] * 5
    for answer in answers[5:]:
        assert_refused(answer, done="watched or unwatched a category", limit=5)
    # Five toggles happened (watching), the three refused ones changed nothing.
    assert Watch.objects.filter(user=reader, category=cs_dc).exists()
    # The page links back to the category; another reader still toggles freely.
    assert f'href="{cs_dc.get_absolute_url()}"' in answers[-1].content.decode()
    client.force_login(rival)
    assert client.post(url).status_code == 302


@pytest.mark.django_db
def test_follow_toggles_stop_at_the_watch_limit(reader_client, reader, settings):
    from market.models import Follow, Term

    settings.RATELIMIT_WATCHES_PER_WINDOW = 4
    term = Term.objects.create(phrase="quorum")
    url = reverse("market:follow", args=[term.slug])
    answers = [
        reader_client.post(url, {"action": "unfollow" if n % 2 else "follow"}) for n in range(7)
    ]
    assert [answer.status_code for answer in answers[:4]] == [302] * 4
    for answer in answers[4:]:
        assert_refused(answer, done="followed or unfollowed a term", limit=4)
    # Follow, unfollow, follow, unfollow went through; the refused follows changed nothing.
    assert not Follow.objects.filter(user=reader, term=term).exists()
    assert f'href="{term.get_absolute_url()}"' in answers[-1].content.decode()


@pytest.mark.django_db
def test_saving_and_deleting_searches_share_one_limit(reader_client, reader, settings):
    settings.RATELIMIT_SAVED_SEARCHES_PER_WINDOW = 3
    kept = save_search(user=reader, text="consensus")[0]
    save = reverse("saved_searches")
    delete = reverse("delete_saved_search")
    assert reader_client.post(save, {"query": "gossip"}).status_code == 302
    assert reader_client.post(save, {"query": "quorum"}).status_code == 302
    assert reader_client.post(delete, {"search": kept.pk}).status_code == 302
    refused_save = reader_client.post(save, {"query": "byzantine"})
    refused_delete = reader_client.post(delete, {"search": kept.pk})
    for answer in (refused_save, refused_delete):
        assert_refused(answer, done="saved or deleted a search", limit=3)
    assert sorted(SavedSearch.objects.values_list("query", flat=True)) == ["gossip", "quorum"]
    # Reading the page is not a change: it is never refused.
    assert reader_client.get(save).status_code == 200


@pytest.mark.django_db
def test_proposals_stop_at_the_daily_limit_and_say_when_to_come_back(client, trader, settings):
    settings.RATELIMIT_PROPOSALS_PER_DAY = 2
    client.force_login(trader)
    reason = "Papers name it more every month, so it would trade."
    for phrase in ("first idea", "second idea"):
        assert (
            client.post("/market/propose/", {"phrase": phrase, "reason": reason}).status_code == 302
        )
    response = client.post("/market/propose/", {"phrase": "third idea", "reason": reason})
    assert response.status_code == 429
    wait = wait_text(seconds_until_reset(window_seconds=86_400))
    assert f"Nothing was saved; you can propose again in {wait}." in page_text(response)
    assert TermProposal.objects.count() == 2


def test_wait_texts_read_as_a_person_says_them():
    assert [wait_text(s) for s in (1, 40, 60, 61, 299, 3600, 5 * 3600 + 1)] == [
        "1 second",
        "40 seconds",
        "a minute",
        "2 minutes",
        "5 minutes",
        "60 minutes",
        "6 hours",
    ]
    assert seconds_until_reset(window_seconds=300, now=3_200.5) == 100


@pytest.mark.slow
def test_each_limit_is_set_by_the_environment_variable_of_its_name_and_documented():
    names = [
        "RATELIMIT_WATCHES_PER_WINDOW",
        "RATELIMIT_SAVED_SEARCHES_PER_WINDOW",
        "RATELIMIT_PROPOSALS_PER_DAY",
    ]
    env = os.environ | {name: str(number) for number, name in enumerate(names, start=7)}
    script = (
        "from django.conf import settings; print("
        + ", ".join(f"settings.{name}" for name in names)
        + ")"
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--verbosity", "0", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stdout.split() == ["7", "8", "9"], result.stderr[-2000:]
    readme = (ROOT / "README.md").read_text()
    configuration = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    for name in names:
        assert f"`{name}`" in configuration, name
