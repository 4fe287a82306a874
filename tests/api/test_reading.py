"""Reading without a token: what a digest bot or an RSS bridge sees, in the site's order,
paged by cursors, with ETags that turn a poller's repeat into a 304."""

from __future__ import annotations

import datetime as dt

import pytest

from accounts.models import Preferences
from market.models import Term
from tests.factories import announce, buy, list_paper, make_paper

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 3)


@pytest.fixture
def kv(db) -> Term:
    return Term.objects.create(phrase="KV cache", slug="kv-cache")


def test_categories_are_listed_with_their_names(client, cs_dc):
    answer = client.get("/api/v1/categories")
    assert answer.status_code == 200
    found = {item["code"]: item for item in answer.json()["items"]}
    assert found["cs.DC"]["name"] == "Distributed Computing"
    assert found["cs.DC"]["ingested"] is True


def test_a_days_listing_splits_new_cross_lists_and_replacements_in_arxiv_order(client, cs_dc):
    late = make_paper(arxiv_id="2611.00009", title="Later number")
    early = make_paper(arxiv_id="2611.00002", title="Earlier number")
    cross = make_paper(arxiv_id="2611.00005", primary="cs.LG")
    replaced = make_paper(arxiv_id="2610.00001", version=2)
    hidden = make_paper(arxiv_id="2611.00003", hidden=True)
    for paper in (late, early, hidden):
        list_paper(paper, category=cs_dc, date=DAY)
    list_paper(cross, category=cs_dc, date=DAY, announce_type="cross")
    list_paper(replaced, category=cs_dc, date=DAY, announce_type="replace")

    listing = client.get(f"/api/v1/categories/cs.DC/days/{DAY}").json()

    assert [entry["paper"]["arxiv_id"] for entry in listing["new"]] == ["2611.00002", "2611.00009"]
    assert listing["new"][0]["paper"]["title"] == "Earlier number"
    assert [entry["paper"]["arxiv_id"] for entry in listing["cross_lists"]] == ["2611.00005"]
    assert [entry["paper"]["arxiv_id"] for entry in listing["replacements"]] == ["2610.00001"]


def test_a_category_without_that_day_or_at_all_answers_a_problem(client, cs_dc):
    missing_day = client.get(f"/api/v1/categories/cs.DC/days/{DAY}")
    assert missing_day.status_code == 404
    assert missing_day["Content-Type"] == "application/problem+json"
    assert missing_day.json()["detail"] == f"cs.DC has no listing on {DAY}."
    assert client.get("/api/v1/categories/xx.YY/days").json()["detail"] == (
        "There is no category “xx.YY”."
    )
    bad_date = client.get("/api/v1/categories/cs.DC/days/2026-13-45")
    assert bad_date.status_code == 400
    assert bad_date["Content-Type"] == "application/problem+json"


def test_days_are_paged_newest_first_by_cursor(client, cs_dc):
    for offset in range(5):
        announce(None, date=DAY - dt.timedelta(days=offset), category=cs_dc)
    first = client.get("/api/v1/categories/cs.DC/days?limit=2").json()
    assert [item["date"] for item in first["items"]] == ["2026-11-03", "2026-11-02"]
    second = client.get(f"/api/v1/categories/cs.DC/days?limit=2&cursor={first['next_cursor']}")
    third = client.get(
        f"/api/v1/categories/cs.DC/days?limit=2&cursor={second.json()['next_cursor']}"
    ).json()
    assert [item["date"] for item in second.json()["items"]] == ["2026-11-01", "2026-10-31"]
    assert [item["date"] for item in third["items"]] == ["2026-10-30"]
    assert third["next_cursor"] is None
    forged = client.get("/api/v1/categories/cs.DC/days?cursor=not-ours")
    assert forged.status_code == 400
    assert "cursor" in forged.json()["detail"]


def test_a_paper_has_its_versions_authors_subjects_and_highlighted_terms(client, cs_dc, kv):
    paper = announce(
        None,
        date=DAY,
        category=cs_dc,
        title="Paging the KV cache",
        authors=["Ada Lovelace", "Charles Babbage"],
        version=2,
    )
    found = client.get(f"/api/v1/papers/{paper.arxiv_id}").json()
    assert found["title"] == "Paging the KV cache"
    assert [author["name"] for author in found["authors"]] == ["Ada Lovelace", "Charles Babbage"]
    assert [version["number"] for version in found["versions"]] == [1, 2]
    assert found["subjects"][0] == {
        "code": "cs.DC",
        "name": "Distributed Computing",
        "primary": True,
    }
    assert found["terms"] == [{"slug": "kv-cache", "phrase": "KV cache"}]
    assert client.get("/api/v1/papers/2611.99999").status_code == 404
    hidden = make_paper(hidden=True)
    assert client.get(f"/api/v1/papers/{hidden.arxiv_id}").status_code == 404


def test_search_takes_the_sites_syntax_and_its_refusals(client, cs_dc):
    announce(
        None, date=DAY, category=cs_dc, title="Byzantine agreement", authors=["Leslie Lamport"]
    )
    announce(None, date=DAY, category=cs_dc, title="Gossip", authors=["Ada Lovelace"])
    found = client.get("/api/v1/search", {"q": "au:lamport"}).json()
    assert [item["title"] for item in found["items"]] == ["Byzantine agreement"]
    too_long = client.get("/api/v1/search", {"q": "x" * 2000})
    assert too_long.status_code == 400
    assert "characters long" in too_long.json()["detail"]


def test_an_authors_papers_are_newest_first_whatever_the_accents(client, cs_dc):
    older = announce(None, date=DAY, category=cs_dc, authors=["Dağlı Ayşe"], title="Older")
    newer = announce(None, date=DAY, category=cs_dc, authors=["Dagli Ayse"], title="Newer")
    type(older).objects.filter(pk=older.pk).update(
        submitted_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    )
    type(newer).objects.filter(pk=newer.pk).update(
        submitted_at=dt.datetime(2026, 2, 1, tzinfo=dt.UTC)
    )
    first = client.get("/api/v1/authors/Dagli Ayse/papers?limit=1").json()
    assert [item["title"] for item in first["items"]] == ["Newer"]
    rest = client.get(f"/api/v1/authors/Dagli Ayse/papers?limit=1&cursor={first['next_cursor']}")
    assert [item["title"] for item in rest.json()["items"]] == ["Older"]


def test_terms_carry_price_supply_changes_and_mentions(client, cs_dc, kv, trader):
    announce(kv, date=dt.date.today(), category=cs_dc)
    buy(trader, kv, 10)
    Term.objects.create(phrase="attention", slug="attention")
    items = client.get("/api/v1/terms").json()["items"]
    assert [item["slug"] for item in items] == ["attention", "kv-cache"]
    kv_row = items[1]
    kv.refresh_from_db()
    assert kv_row["price"] == kv.price
    assert kv_row["supply"] == 10
    assert kv_row["holders"] == 1
    assert kv_row["change_1d_bp"] > 0


def test_private_traders_never_appear_among_holders_or_by_name_in_trades(client, kv, trader, rival):
    buy(trader, kv, 5)
    buy(rival, kv, 3)
    Preferences.objects.update_or_create(user=rival, defaults={"public_trader_page": False})
    holders = client.get("/api/v1/terms/kv-cache/holders").json()["items"]
    assert holders == [{"trader": "tobias", "shares": 5}]
    trades = client.get("/api/v1/terms/kv-cache/trades").json()["items"]
    assert [trade["trader"] for trade in trades] == [None, "tobias"]
    body = client.get("/api/v1/terms/kv-cache/trades").content.decode()
    assert "rhea" not in body
    assert "account" not in body and "user" not in body  # no ids of traders either


def test_price_history_follows_every_trade_oldest_first(client, kv, trader):
    for shares in (1, 2, 3):
        buy(trader, kv, shares)
    page = client.get("/api/v1/terms/kv-cache/prices?limit=2").json()
    rest = client.get(f"/api/v1/terms/kv-cache/prices?limit=2&cursor={page['next_cursor']}")
    supplies = [item["supply"] for item in page["items"] + rest.json()["items"]]
    assert supplies == [1, 3, 6]
    assert client.get("/api/v1/terms/nothing/prices").status_code == 404


def test_a_poller_gets_304_until_the_term_trades(client, kv, trader):
    first = client.get("/api/v1/terms/kv-cache/trades")
    etag, modified = first["ETag"], first["Last-Modified"]
    again = client.get("/api/v1/terms/kv-cache/trades", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert again["ETag"] == etag
    since = client.get("/api/v1/terms/kv-cache/trades", HTTP_IF_MODIFIED_SINCE=modified)
    assert since.status_code == 304
    buy(trader, kv, 2)
    moved = client.get("/api/v1/terms/kv-cache/trades", HTTP_IF_NONE_MATCH=etag)
    assert moved.status_code == 200
    assert moved["ETag"] != etag
    assert [trade["shares"] for trade in moved.json()["items"]] == [2]


def test_a_listing_changes_its_etag_when_a_paper_is_edited(client, cs_dc):
    paper = announce(None, date=DAY, category=cs_dc, title="First title")
    first = client.get(f"/api/v1/categories/cs.DC/days/{DAY}")
    type(paper).objects.filter(pk=paper.pk).update(title="Second title")
    second = client.get(f"/api/v1/categories/cs.DC/days/{DAY}", HTTP_IF_NONE_MATCH=first["ETag"])
    assert second.status_code == 200
    assert second.json()["new"][0]["paper"]["title"] == "Second title"


def test_dividends_list_their_papers(client, cs_dc, kv, trader):
    from market.dividends import pay_dividends_for_day

    buy(trader, kv, 4)
    paper = announce(None, date=DAY, category=cs_dc, title="More on the KV cache")
    pay_dividends_for_day(category=cs_dc, date=DAY)
    items = client.get("/api/v1/dividends").json()["items"]
    assert [(item["term"]["slug"], item["paper"]["arxiv_id"]) for item in items] == [
        ("kv-cache", paper.arxiv_id)
    ]
    assert items[0]["per_share"] > 0  # held at the announcement: before this trade, none


def test_the_leaderboard_hides_private_traders_names(client, kv, trader, rival):
    buy(trader, kv, 5)
    buy(rival, kv, 1)
    Preferences.objects.update_or_create(user=trader, defaults={"public_trader_page": False})
    board = client.get("/api/v1/leaderboard").json()["items"]
    assert sorted(str(row["trader"]) for row in board) == ["None", "rhea"]
    assert client.get("/api/v1/leaderboard?period=decade").status_code == 400


def test_anonymous_reads_are_open_to_any_origin_but_tokens_are_not(client, cs_dc):
    read = client.get("/api/v1/categories", HTTP_ORIGIN="https://elsewhere.example")
    assert read["Access-Control-Allow-Origin"] == "*"
    preflight = client.options(
        "/api/v1/categories",
        HTTP_ORIGIN="https://elsewhere.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
    )
    assert preflight["Access-Control-Allow-Origin"] == "*"
    with_token = client.options(
        "/api/v1/me",
        HTTP_ORIGIN="https://elsewhere.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
        HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization",
    )
    assert "Access-Control-Allow-Origin" not in with_token
    trade = client.options(
        "/api/v1/terms/x/trades",
        HTTP_ORIGIN="https://elsewhere.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
    )
    assert "Access-Control-Allow-Origin" not in trade
