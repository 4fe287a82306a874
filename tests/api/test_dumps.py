"""The nightly dumps: gzip JSON Lines of trades, prices and dividends, listed with sizes and
checksums a downloader can verify, made by the beat task or the command."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json

import pytest
from django.core.management import call_command

from accounts.models import Preferences
from api.tasks import nightly_dumps
from market.models import Term
from tests.factories import buy, sell

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 3)
AT = dt.datetime(2026, 11, 3, 15, tzinfo=dt.UTC)


@pytest.fixture
def dumps_dir(settings, tmp_path):
    settings.API_DUMPS_DIR = str(tmp_path)
    return tmp_path


def lines(content: bytes) -> list[dict]:
    return [json.loads(line) for line in gzip.decompress(content).splitlines()]


def test_the_nightly_task_dumps_each_kind_and_lists_sizes_and_checksums(
    client, dumps_dir, trader, rival
):
    kv = Term.objects.create(phrase="KV cache", slug="kv-cache")
    buy(trader, kv, 5, when=AT)
    sell(trader, kv, 2, when=AT + dt.timedelta(hours=1))
    buy(rival, kv, 1, when=AT + dt.timedelta(hours=2))
    buy(trader, kv, 7, when=AT + dt.timedelta(days=1))  # after the day: not in its dump
    Preferences.objects.update_or_create(user=rival, defaults={"public_trader_page": False})

    assert nightly_dumps(DAY.isoformat()) == [
        "trades-2026-11-03.jsonl.gz",
        "prices-2026-11-03.jsonl.gz",
        "dividends-2026-11-03.jsonl.gz",
    ]
    listed = {item["kind"]: item for item in client.get("/api/v1/dumps").json()["items"]}
    trades = listed["trades"]
    content = b"".join(client.get(trades["url"]).streaming_content)
    assert len(content) == trades["size"]
    assert hashlib.sha256(content).hexdigest() == trades["sha256"]
    rows = lines(content)
    assert [(row["side"], row["shares"], row["trader"]) for row in rows] == [
        ("buy", 5, "tobias"),
        ("sell", 2, "tobias"),
        ("buy", 1, None),
    ]
    assert trades["rows"] == 3
    prices = lines(b"".join(client.get(listed["prices"]["url"]).streaming_content))
    assert prices == [
        {"term": "kv-cache", "date": "2026-11-03", "close": rows[-1]["price_after"], "supply": 4}
    ]
    assert listed["dividends"]["rows"] == 0


def test_a_dump_made_again_is_the_same_file(dumps_dir, trader):
    kv = Term.objects.create(phrase="KV cache", slug="kv-cache")
    buy(trader, kv, 5, when=AT)
    call_command("dump_market", "--day", DAY.isoformat())
    first = (dumps_dir / "trades-2026-11-03.jsonl.gz").read_bytes()
    call_command("dump_market", "--day", DAY.isoformat())
    assert (dumps_dir / "trades-2026-11-03.jsonl.gz").read_bytes() == first
    assert not list(dumps_dir.glob(".*partial"))


def test_a_file_not_listed_is_not_served(client, dumps_dir):
    (dumps_dir / "secret.txt").write_text("no")
    answer = client.get("/api/v1/dumps/secret.txt")
    assert answer.status_code == 404
    assert answer["Content-Type"] == "application/problem+json"
    assert client.get("/api/v1/dumps/..%2f..%2fsettings.py").status_code == 404


def test_the_command_refuses_a_bad_day(dumps_dir):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--day must be a date"):
        call_command("dump_market", "--day", "yesterday")
