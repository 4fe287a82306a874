"""Kept pieces (peerrevenue.keep): keyed by what they show, never stale, never a reader's.

A change made any way at all — ``QuerySet.update()``, a trade, a watch, a dividend — shows on
the next render with no invalidation call at its site, because the page reads the stamps the
database moved. And a change moves only what it touched: a trade re-renders no category page,
a watch no kept piece at all.
"""

from __future__ import annotations

import datetime as dt
import re
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
import requests
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone

from market import dividends, tickers
from market.models import Term
from market.units import format_credits
from market.views import term as term_views
from papers import views as paper_views
from papers.models import Paper
from peerrevenue import freshness, keep
from tests.factories import announce, buy, list_paper, make_paper
from tests.html import Page, page_text
from tests.market.state import held_before_the_announcement
from tests.processes import clean_environment, free_port, start_gunicorn, stop_process, wait_for
from tests.test_local_site import anonymous_pages, workers_in

DAY = dt.date(2026, 11, 25)


@pytest.fixture
def paper(cs_dc):
    made = make_paper(title="Raft everywhere", abstract="Consensus on GPUs and a KV cache.")
    list_paper(made, category=cs_dc, date=DAY)
    return made


@pytest.fixture
def gpu(db):
    return Term.objects.create(phrase="GPU")


@pytest.fixture
def signed_in(client, trader, password):
    client.login(username=trader.username, password=password)
    return client


def term_links(client, url: str) -> list[str]:
    return [text for _, text in Page.of(client.get(url)).links() if text in ("GPUs", "KV cache")]


def renders_of(monkeypatch, module, name: str) -> list[object]:
    """Count the renders of a kept piece's maker, e.g. ``papers.views._category_piece``: those
    the site makes, not those the freshness check makes to compare with what was kept."""
    calls: list[object] = []
    real = getattr(module, name)

    def counting(*args, **kwargs):
        if not freshness.checking():
            calls.append(None)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


# Fresh after changes made with no call to remember -----------------------------------------


def test_a_paper_hidden_with_update_goes_from_its_pages_at_once(signed_in, client, paper):
    assert "Raft everywhere" in page_text(signed_in.get("/list/cs.DC/"))
    assert signed_in.get(f"/abs/{paper.arxiv_id}/").status_code == 200
    Paper.objects.filter(pk=paper.pk).update(hidden=True)
    assert "Raft everywhere" not in page_text(signed_in.get("/list/cs.DC/"))
    assert signed_in.get(f"/abs/{paper.arxiv_id}/").status_code == 404
    client.logout()
    assert "Raft everywhere" not in page_text(client.get("/list/cs.DC/"))


def test_a_term_halted_with_update_is_no_longer_highlighted(signed_in, paper, gpu):
    assert "GPUs" in term_links(signed_in, "/list/cs.DC/")
    assert "GPUs" in term_links(signed_in, f"/abs/{paper.arxiv_id}/")
    Term.objects.filter(pk=gpu.pk).update(status=Term.Status.HALTED)
    assert "GPUs" not in term_links(signed_in, "/list/cs.DC/")
    assert "GPUs" not in term_links(signed_in, f"/abs/{paper.arxiv_id}/")


def test_a_watch_changes_the_count_and_renders_no_kept_piece(
    signed_in, client, reader, paper, monkeypatch
):
    signed_in.get("/list/cs.DC/")
    renders = renders_of(monkeypatch, paper_views, "_category_piece")
    reader_client = client.__class__()
    reader_client.force_login(reader)
    assert reader_client.post("/list/cs.DC/watch/").status_code == 302
    page = Page.of(signed_in.get("/list/cs.DC/"))
    assert page.one(cls="watch-form__count").text == "1 watcher"
    assert renders == []  # the days of papers were not rendered again for one reader's watch


def test_a_trade_moves_hover_prices_and_renders_no_category_page(
    signed_in, rival, paper, gpu, monkeypatch
):
    def gpu_title() -> str:
        page = Page.of(signed_in.get("/list/cs.DC/"))
        return next(a.attrs["title"] for a in page.select("a", cls="term") if a.text == "GPUs")

    before = gpu_title()
    renders = renders_of(monkeypatch, paper_views, "_category_piece")
    buy(rival, gpu, 25)
    after = gpu_title()
    assert before.startswith("GPU: 1.00 credits") and after != before
    gpu.refresh_from_db()
    assert after.startswith(f"GPU: {format_credits(gpu.price)}")
    assert renders == []


def test_a_trade_refills_the_price_holes_and_reads_no_stars_again(
    signed_in, rival, paper, gpu, monkeypatch
):
    from library.fillers import StarFill

    signed_in.get("/list/cs.DC/")
    reads = renders_of(monkeypatch, StarFill, "prefetch")
    buy(rival, gpu, 3)
    page = Page.of(signed_in.get("/list/cs.DC/"))
    gpu.refresh_from_db()
    title = next(a.attrs["title"] for a in page.select("a", cls="term") if a.text == "GPUs")
    assert title.startswith(f"GPU: {format_credits(gpu.price)}")
    assert page.select("form", cls="star")  # the reader's stars are on the page, as they were
    assert reads == []  # and came from the stars kept for this reader, not another query


def test_a_trade_renders_its_term_page_again_and_no_other_terms(signed_in, rival, gpu, monkeypatch):
    other = Term.objects.create(phrase="consensus")
    for url in ("/market/gpu/", "/market/consensus/"):
        signed_in.get(url)
    renders = renders_of(monkeypatch, term_views, "_term_piece")
    papers = renders_of(monkeypatch, term_views, "_term_papers_piece")
    buy(rival, gpu, 5)
    assert "rhea" in page_text(signed_in.get("/market/gpu/"))  # a new holder
    signed_in.get(f"/market/{other.slug}/")
    assert len(renders) == 1
    assert papers == []  # the papers that mention it did not change with a trade


def test_a_dividend_shows_on_the_term_page(signed_in, trader, cs_dc, gpu):
    buy(trader, gpu, 4)
    signed_in.get("/market/gpu/")
    paper = announce(gpu, date=DAY, category=cs_dc)
    held_before_the_announcement(DAY)
    dividends.pay_dividend(term=gpu, paper_ids=[paper.pk], per_share=50_000, date=DAY)
    text = page_text(signed_in.get("/market/gpu/"))
    assert "1 mentioning paper" in text or "1 paper" in text


# Frames: kept around what changes faster -----------------------------------------------------


def test_a_trade_joins_the_market_table_in_its_kept_frame(signed_in, rival, gpu, monkeypatch):
    Term.objects.create(phrase="consensus")
    signed_in.get("/market/")
    frames = renders_of(monkeypatch, keep, "render_frame")
    buy(rival, gpu, 5)
    rows = Page.of(signed_in.get("/market/")).rows()
    gpu.refresh_from_db()
    gpu_row = next(row for row in rows if row and row[0] == "GPU")
    assert format_credits(gpu.price, unit=False) in gpu_row
    assert any(row and row[0] == "consensus" for row in rows)
    assert frames == []  # the search, headings and pages were not rendered again


def test_a_search_spelling_a_frames_place_is_only_text(signed_in, gpu):
    mark = f"<!--kept place {keep.TAG} rows-->"
    response = signed_in.get("/market/", {"q": mark})
    assert response.status_code == 200
    assert mark not in response.content.decode()
    assert "No term matches" in page_text(response)


def test_a_release_never_reads_what_another_release_kept(signed_in, gpu, monkeypatch):
    """What an older release kept under the same facts may have another shape (a field more,
    a template changed): the keys carry the code's digest, so a deploy starts afresh."""
    current = keep.CODE
    made: list[str] = []
    real_key = keep.key

    def recording_key(*args, **kwargs):
        made.append(real_key(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(keep, "key", recording_key)
    monkeypatch.setattr(keep, "CODE", "an-older-release")
    assert signed_in.get("/market/").status_code == 200
    assert made
    for name in made:  # in a shape this release does not know
        cache.set(name, ("an", "older", "shape"))
    keep.forget_local()
    monkeypatch.setattr(keep, "CODE", current)
    response = signed_in.get("/market/")
    assert response.status_code == 200
    assert "GPU" in page_text(response)


# Nothing of the reader is ever kept ------------------------------------------------------------


def kept_now() -> dict[object, str]:
    return {name: repr(value) for name, (value, _) in keep.in_process.entries.items()}


def test_no_kept_piece_holds_a_readers_name_token_or_holdings(
    signed_in, client, trader, paper, gpu, monkeypatch
):
    # The trader holds shares and watches the category: their pages show both.
    buy(trader, gpu, 7)
    signed_in.post("/list/cs.DC/watch/")
    # Charts end now: hold the clock still, so that two renders can be compared to the letter;
    # the market's 30 s clock bucket too (it reads time.time), or a bucket's end between the
    # two passes would key the term page's pieces apart.
    now = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: now)
    monkeypatch.setattr(tickers, "time", SimpleNamespace(time=now.timestamp))
    pages = ["/list/cs.DC/", f"/abs/{paper.arxiv_id}/", "/market/", "/market/gpu/"]
    for url in pages:
        text = page_text(signed_in.get(url))
        assert trader.username in text
    assert "You hold 7 shares" in page_text(signed_in.get("/market/gpu/"))
    token = signed_in.cookies[settings.CSRF_COOKIE_NAME].value
    for_trader = kept_now()
    assert for_trader, "the pages kept their pieces"
    for value in for_trader.values():
        assert token not in value
        assert "You hold" not in value and "Unwatch" not in value and "is-you" not in value

    # The same pieces, made again for nobody in particular, are the same to the letter: what
    # is kept cannot depend on who asked (the trader's name shows only as a public holder).
    keep.forget_local()
    cache.clear()
    client.logout()
    for url in pages:
        assert client.get(url).status_code == 200
    for_nobody = kept_now()
    shared = {name for name in for_trader if name in for_nobody}
    assert len(shared) >= len(pages)
    for name in shared:
        assert for_trader[name] == for_nobody[name], name
    for name in set(for_trader) - shared:  # e.g. the trade form for a signed-in holder of 7
        assert trader.username not in for_trader[name]


def watch_form_token(response) -> str:
    found = re.search(
        r'class="watch-form">\s*<input type="hidden" name="csrfmiddlewaretoken" value="([^"]+)"',
        response.content.decode(),
    )
    assert found, "the page has the reader's watch form"
    return found.group(1)


def test_a_readers_kept_render_is_theirs_carries_a_fresh_token_and_shows_their_watch(
    trader, rival, password, paper
):
    # A signed-in reader's category page is rendered once and kept for them alone
    # (peerrevenue.reader_frames): each page still carries a token of its own, which the watch form
    # posts with; their watch shows on their very next page; another reader gets their own.
    tobias = Client(enforce_csrf_checks=True)
    tobias.login(username=trader.username, password=password)
    first = watch_form_token(tobias.get("/list/cs.DC/"))
    second = tobias.get("/list/cs.DC/")
    token = watch_form_token(second)
    assert token != first  # masked afresh on each page, as Django does against BREACH
    assert "Unwatch" not in page_text(second)
    watched = tobias.post("/list/cs.DC/watch/", {"csrfmiddlewaretoken": token})
    assert watched.status_code == 302
    assert "Unwatch" in page_text(tobias.get("/list/cs.DC/"))

    rhea = Client()
    rhea.login(username=rival.username, password=password)
    text = page_text(rhea.get("/list/cs.DC/"))
    assert rival.username in text
    assert trader.username not in text and "Unwatch" not in text


def test_a_readers_whole_page_is_kept_with_a_fresh_token_and_key_in_every_form(
    trader, password, paper, monkeypatch
):
    # A signed-in reader's second look at a page renders nothing (reader_frames.page): the
    # bytes kept for them, with a token masked afresh and a one-time key of its own in each
    # form. So two tabs of the same page post two comments, not one taken for the other.
    from discussion.models import Comment

    tab = Client(enforce_csrf_checks=True)
    tab.login(username=trader.username, password=password)
    url = f"/abs/{paper.arxiv_id}/"
    tab.get(url)  # the first look asks for the paper's similar papers, and sets the CSRF cookie
    first = tab.get(url)
    made = renders_of(monkeypatch, paper_views, "_paper_response")
    second = tab.get(url)
    assert made == [], "the reader's page was rendered again"
    forms = [Page.of(response).form("/discussion/post/") for response in (first, second)]
    assert forms[0]["key"] != forms[1]["key"]
    assert forms[0]["csrfmiddlewaretoken"] != forms[1]["csrfmiddlewaretoken"]
    for form, body in zip(forms, ("From the first tab", "From the second tab"), strict=True):
        assert tab.post("/discussion/post/", {**form, "body": body}).status_code == 303
    assert sorted(Comment.objects.values_list("body", flat=True)) == [
        "From the first tab",
        "From the second tab",
    ]
    # Their comments moved the page's facts: the next look renders it, and shows both.
    text = page_text(tab.get(url))
    assert made == [None] and "From the first tab" in text and "From the second tab" in text


def test_every_masked_token_passes_djangos_check_and_the_masks_are_fair():
    # reader_frames.masked_token draws the mask its own (cheaper) way: each token it makes must
    # still pass Django's own check against the cookie's secret, and every character must be
    # as likely in each place of the mask (a biased mask would weaken the BREACH defence).
    from collections import Counter

    from django.http import HttpResponse
    from django.middleware.csrf import CSRF_ALLOWED_CHARS, CsrfViewMiddleware, get_token
    from django.test import RequestFactory

    from peerrevenue import reader_frames

    factory = RequestFactory()
    secret_holder = factory.get("/")
    get_token(secret_holder)
    secret = secret_holder.META["CSRF_COOKIE"]

    def view(request) -> HttpResponse:
        return HttpResponse()

    check = CsrfViewMiddleware(view)
    tokens = set()
    for _ in range(300):
        reader = factory.get("/")
        reader.META["CSRF_COOKIE"] = secret
        token = reader_frames.masked_token(reader)
        assert reader.META["CSRF_COOKIE_NEEDS_UPDATE"]  # the cookie is sent again, as Django does
        tokens.add(token)
        post = factory.post("/", {"csrfmiddlewaretoken": token})
        post.COOKIES[settings.CSRF_COOKIE_NAME] = secret
        assert check.process_view(post, view, (), {}) is None
    assert len(tokens) == 300
    seen: Counter[str] = Counter()
    for _ in range(20_000):
        reader = factory.get("/")
        reader.META["CSRF_COOKIE"] = secret
        seen.update(reader_frames.masked_token(reader)[:32])
    assert set(seen) == set(CSRF_ALLOWED_CHARS)
    # 640,000 draws: each character about 10,300 times, within a few hundred; a plain
    # ``byte % 62`` would draw eight of them a quarter more often than the rest.
    assert max(seen.values()) < 1.1 * min(seen.values())


# Across processes, with Redis as in production ------------------------------------------------


@contextmanager
def production_site(tmp_path):
    """The site under gunicorn with two workers on the test database and the tests' shared
    cache (Redis, as in production, when the suite has it)."""
    db = connection.settings_dict
    port = free_port()
    log = tmp_path / "access.log"
    shared = settings.CACHES["default"]
    redis = {"REDIS_URL": shared["LOCATION"]} if shared["BACKEND"].endswith("RedisCache") else {}
    env = clean_environment(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}", **redis
    )
    server = start_gunicorn(env=env, port=port, log=log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/market/rules/", timeout=60)
        yield base, log
    finally:
        stop_process(server)


def prices(page: str) -> set[str]:
    return {a.attrs.get("title", "") for a in Page.parse(page).select("a", cls="term")}


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_changes_from_another_process_show_on_both_workers_at_once(cs_dc, reader, rival, tmp_path):
    gpu = Term.objects.create(phrase="GPU")
    quorum = Term.objects.create(phrase="quorum")
    gossip = make_paper(title="Gossip protocols under churn", abstract="Gossip on GPUs.")
    list_paper(gossip, category=cs_dc, date=DAY)
    list_paper(
        make_paper(title="Byzantine quorums", abstract="A quorum of GPUs."),
        category=cs_dc,
        date=DAY,
    )
    with production_site(tmp_path) as (base, log):
        before = anonymous_pages(base + "/list/cs.DC/", 12)  # kept by both workers now
        assert all("Gossip protocols under churn" in page for page in before)
        old_prices = set.union(*(prices(page) for page in before))

        # This test process is a third one: plain updates, a trade and a watch, each with no
        # call to any cache.
        Paper.objects.filter(pk=gossip.pk).update(hidden=True)
        Term.objects.filter(pk=quorum.pk).update(status=Term.Status.HALTED)
        buy(rival, gpu, 30)
        cs_dc.toggle_watch(reader)

        log.write_text("")
        after: list[str] = []
        # Until both workers have answered some (which one accepts is the kernel's choice).
        while len(after) < 240 and len(workers_in(log, "/list/cs.DC/")) < 2:
            after += anonymous_pages(base + "/list/cs.DC/", 12)
        assert len(workers_in(log, "/list/cs.DC/")) == 2, "both workers answered"
        assert not any("Gossip protocols under churn" in page for page in after)
        assert not any(f'href="/market/{quorum.slug}/"' in page for page in after)
        assert all("1 watcher" in page_text_of(page) for page in after)
        new_prices = set.union(*(prices(page) for page in after))
        assert new_prices and not new_prices & old_prices
        term_page = requests.get(base + "/market/gpu/", timeout=10).text
        assert "rhea" in term_page
    cache.clear()


def page_text_of(markup: str) -> str:
    return Page.parse(markup).text


def test_the_worker_highlights_the_newest_papers_before_their_readers(client, paper, monkeypatch):
    from market import highlighted_html

    Term.objects.create(phrase="consensus")  # a new term set: every highlighted text is new
    assert highlighted_html.keep_recent_highlights() == 1
    matched: list[str] = []
    real = highlighted_html.link_terms

    def counting(markup, matcher):
        if not freshness.checking():
            matched.append(markup)
        return real(markup, matcher)

    monkeypatch.setattr(highlighted_html, "link_terms", counting)
    page = Page.of(client.get("/list/cs.DC/"))
    assert "Consensus" in [a.text for a in page.select("a", cls="term")]
    assert matched == []  # the reader's render found every text highlighted already


def test_a_page_filled_on_its_way_out_says_its_own_length(signed_in, paper, gpu):
    """Search results are rendered with render() and filled by the middleware, after
    CommonMiddleware set Content-Length: the header follows the filled body, or a browser cuts
    the page off (or waits for the rest)."""
    response = signed_in.get("/search/?q=raft")
    assert "Raft everywhere" in page_text(response)
    assert keep.hole("price", gpu.pk) not in response.content.decode()
    assert int(response["Content-Length"]) == len(response.content)
