"""Paper search as a reader uses it: /search/?q=… from the box in the header."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from papers import search as search_module
from papers.models import Category, Listing
from papers.search import pages as search_pages
from papers.search import query as search_query
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text
from tests.market.pages import market_terms

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 2)


def search(client, q: str = "", **params):
    return client.get(reverse("papers:search"), {"q": q, **params})


def result_ids(response) -> list[str]:
    """arXiv ids of the results, in page order."""
    return Page.of(response).ids("li", cls="paper")


def marked(response) -> list[str]:
    """The words the page marks as matching the search, in page order."""
    return Page.of(response).texts("mark")


def hrefs(response) -> list[str]:
    return [href for href, _ in Page.of(response).links()]


def test_every_page_has_the_search_box(client, cs_dc):
    page = Page.of(client.get(reverse("papers:category", args=["cs.DC"])))
    assert page.select("form", role="search", action=reverse("papers:search"))


def test_a_title_match_ranks_above_an_abstract_only_match(client):
    abstract_only = make_paper(
        arxiv_id="2611.00001",
        title="Notes on distributed systems",
        abstract="Gossip protocols spread rumours. Gossip is cheap, and gossip is robust.",
    )
    in_title = make_paper(
        arxiv_id="2611.00002",
        title="Gossip in dynamic networks",
        abstract="We study how rumours spread.",
    )
    make_paper(arxiv_id="2611.00003", title="Consensus", abstract="Nothing about rumours.")

    response = search(client, "gossip")

    assert response.status_code == 200
    assert result_ids(response) == [in_title.arxiv_id, abstract_only.arxiv_id]
    page = Page.of(response)
    title = page.one("li", id=in_title.arxiv_id).one(cls="paper__title")
    assert title.text == "Gossip in dynamic networks" and title.texts("mark") == ["Gossip"]
    assert "2 papers match" in page.text


def test_phrases_and_exclusion(client):
    phrase = make_paper(arxiv_id="2611.00011", title="Byzantine agreement in practice")
    scattered = make_paper(
        arxiv_id="2611.00012",
        title="Agreement on Byzantine generals",
        abstract="Agreement is hard.",
    )
    blockchain = make_paper(
        arxiv_id="2611.00013",
        title="Byzantine agreement for blockchain ledgers",
    )

    assert result_ids(search(client, '"byzantine agreement"')) == [
        blockchain.arxiv_id,
        phrase.arxiv_id,
    ]
    assert set(result_ids(search(client, "byzantine agreement"))) == {
        phrase.arxiv_id,
        scattered.arxiv_id,
        blockchain.arxiv_id,
    }
    assert result_ids(search(client, '"byzantine agreement" -blockchain')) == [phrase.arxiv_id]
    assert set(result_ids(search(client, "ledgers or generals"))) == {
        scattered.arxiv_id,
        blockchain.arxiv_id,
    }


def test_a_quoted_phrase_ranks_its_exact_words_first(client):
    # Both match 'agent' <-> 'system'; only one has the words as typed, in that order.
    exact = make_paper(
        arxiv_id="2611.00014",
        title="LOCAA: An Agentic System for Automated Lossy Compressor Tuning",
        abstract="Compressor settings are tuned for each data set.",
    )
    by_stems = make_paper(
        arxiv_id="2611.00015",
        title="EdgeAgent: Scheduling Multi-Agent Systems on the Edge",
        abstract="Multi-agent systems, and the agent systems within them, share edge devices.",
    )

    assert result_ids(search(client, '"An Agentic System for"')) == [
        exact.arxiv_id,
        by_stems.arxiv_id,
    ]
    # Case and spacing as typed do not matter; the phrase's words must be whole words.
    assert result_ids(search(client, '"an  AGENTIC system"')) == [
        exact.arxiv_id,
        by_stems.arxiv_id,
    ]
    assert result_ids(search(client, 'ti:"agentic system"')) == [
        exact.arxiv_id,
        by_stems.arxiv_id,
    ]
    # Unquoted words rank by stems alone: the paper saying them most comes first.
    assert result_ids(search(client, "agentic system")) == [by_stems.arxiv_id, exact.arxiv_id]


def test_author_title_and_abstract_prefixes(client):
    by_lamport = make_paper(
        arxiv_id="2611.00021",
        title="Time, clocks and ordering",
        authors=["Leslie Lamport"],
    )
    about_lamport = make_paper(
        arxiv_id="2611.00022",
        title="Lamport clocks revisited",
        abstract="We revisit logical time.",
        authors=["Nancy Lynch"],
    )
    in_abstract = make_paper(
        arxiv_id="2611.00023",
        title="Vector time",
        abstract="Unlike Lamport clocks, vector clocks capture causality.",
        authors=["Colin Fidge"],
    )

    assert result_ids(search(client, "au:lamport")) == [by_lamport.arxiv_id]
    assert result_ids(search(client, 'au:"leslie lamport"')) == [by_lamport.arxiv_id]
    assert result_ids(search(client, "ti:lamport")) == [about_lamport.arxiv_id]
    assert result_ids(search(client, "abs:lamport")) == [in_abstract.arxiv_id]
    assert result_ids(search(client, "clocks au:fidge")) == [in_abstract.arxiv_id]
    assert result_ids(search(client, "au:lamport au:leslie")) == [by_lamport.arxiv_id]
    assert result_ids(search(client, "ti:lamport revisit")) == [about_lamport.arxiv_id]
    assert "Lamport" in marked(search(client, "au:lamport"))


def test_category_filter_includes_cross_lists(client):
    primary = make_paper(arxiv_id="2611.00031", title="Sharded ledgers", primary="cs.DC")
    cross = make_paper(
        arxiv_id="2611.00032",
        title="Learning sharded ledgers",
        primary="cs.LG",
        categories=["cs.LG", "cs.DC"],
    )
    elsewhere = make_paper(
        arxiv_id="2611.00033",
        title="Sharded ledgers for databases",
        primary="cs.DB",
        categories=["cs.DB"],
    )

    assert set(result_ids(search(client, "ledgers", category="cs.DC"))) == {
        primary.arxiv_id,
        cross.arxiv_id,
    }
    assert result_ids(search(client, "ledgers cat:cs.DB")) == [elsewhere.arxiv_id]
    assert set(result_ids(search(client, "cat:cs.LG"))) == {cross.arxiv_id}


def index_conditions(query) -> str:
    """What the search index's scan checks for the query's matches (EXPLAIN), as text."""
    from django.db import connection

    sql, params = search_module.matching(query).order_by().values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (COSTS OFF) " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on paper_search" in plan, plan
    return plan.split("Bitmap Index Scan on paper_search", 1)[1]


@pytest.mark.parametrize(
    ("typed", "categories", "checked"),
    [
        (
            "ledgers",
            ["cs.DC", "cs.DB"],
            ["paper_category_codes(categories) &&", "search_vector @@"],
        ),
        ("ti:sharded ledgers", [], ["to_tsvector(", "search_vector @@"]),
    ],
)
def test_words_categories_and_titles_are_found_by_one_index_scan(typed, categories, checked):
    # At a million papers a category's search took 80-180 ms when PostgreSQL intersected a
    # bitmap of every paper with the word with the category's, and ti: with another word read
    # the search vector of every paper with the title word; the one index answers both parts
    # at once (bench/README.md). Written another way, a condition stops matching it.
    make_paper(arxiv_id="2611.00034", title="Sharded ledgers", categories=["cs.DC", "cs.LG"])
    make_paper(
        arxiv_id="2611.00035",
        title="Vector clocks",
        abstract="Sharded ledgers.",
        primary="cs.LO",
        categories=["cs.LO"],
    )
    query = search_module.parse(typed, categories=categories)
    scan = index_conditions(query)
    assert all(part in scan for part in checked), scan
    assert list(search_module.matching(query).values_list("arxiv_id", flat=True)) == ["2611.00034"]


def test_date_range_filter_uses_announcement_dates(client, cs_dc):
    early = make_paper(arxiv_id="2611.00041", title="Early consensus")
    late = make_paper(arxiv_id="2611.00042", title="Late consensus")
    list_paper(early, category=cs_dc, date=DAY)
    list_paper(late, category=cs_dc, date=DAY + dt.timedelta(days=7))

    assert result_ids(search(client, "consensus", since="2026-11-05")) == [late.arxiv_id]
    assert result_ids(search(client, "consensus", until="2026-11-05")) == [early.arxiv_id]
    both = search(client, "consensus", since="2026-11-01", until="2026-11-30")
    assert set(result_ids(both)) == {early.arxiv_id, late.arxiv_id}


def test_a_date_range_keeps_papers_known_only_by_a_replacement(client, cs_dc):
    fresh = make_paper(arxiv_id="2611.00043", title="Fresh consensus")
    revised = make_paper(arxiv_id="2401.00044", title="Revised consensus")
    list_paper(fresh, category=cs_dc, date=DAY)
    list_paper(revised, category=cs_dc, date=DAY, announce_type=Listing.AnnounceType.REPLACE)

    everything = {fresh.arxiv_id, revised.arxiv_id}
    assert set(result_ids(search(client, "consensus"))) == everything
    wide = search(client, "consensus", since="0001-01-01", until="9999-12-31")
    assert set(result_ids(wide)) == everything
    assert result_ids(search(client, "consensus", since="2026-11-05")) == []


def test_accents_are_optional_and_misspelled_authors_are_found(client):
    dagli = make_paper(
        arxiv_id="2611.00051", title="Quorum systems", authors=[r"Ahmet Da{\u g}l{\i}"]
    )
    lamport = make_paper(
        arxiv_id="2611.00052", title="Paxos made simple", authors=["Leslie Lamport"]
    )

    response = search(client, "Dagli")
    assert result_ids(response) == [dagli.arxiv_id]
    assert "Dağlı" in marked(response)
    assert result_ids(search(client, "au:dagli")) == [dagli.arxiv_id]
    assert result_ids(search(client, "lamport")) == [lamport.arxiv_id]

    misspelled = search(client, "Lamprt")
    assert result_ids(misspelled) == [lamport.arxiv_id]
    assert "similar names" in page_text(misspelled)
    assert "Lamport" in marked(misspelled)
    assert result_ids(search(client, "au:Daglu")) == [dagli.arxiv_id]


def test_misspelled_names_are_found_after_the_authors_change(client):
    paper = make_paper(arxiv_id="2611.00053", title="Quorum systems", authors=["Ada Lovelace"])
    assert result_ids(search(client, "Ranal")) == []

    paper.authors = [{"name": "Michel Raynal", "affiliation": ""}]
    paper.save()

    misspelled = search(client, "Ranal")
    assert result_ids(misspelled) == [paper.arxiv_id]
    assert "Raynal" in marked(misspelled)


def test_an_arxiv_id_or_address_goes_straight_to_the_paper(client):
    paper = make_paper(arxiv_id="2611.00061")
    old = make_paper(arxiv_id="math.GT/0309136")

    for q in (
        "2611.00061",
        " arXiv:2611.00061v2 ",
        "https://arxiv.org/abs/2611.00061v3",
        "arxiv.org/pdf/2611.00061.pdf",
    ):
        response = search(client, q)
        assert response.status_code == 302, q
        assert response.url == paper.get_absolute_url()
    assert search(client, "math.gt/0309136").url == old.get_absolute_url()

    missing = search(client, "2611.99999")
    assert missing.status_code == 200
    assert "https://arxiv.org/abs/2611.99999" in hrefs(missing)


def test_tex_is_indexed_as_the_text_it_typesets_to(client):
    paper = make_paper(
        arxiv_id="2611.00071",
        title=r"Sorting in $O(n\log n)$ with \emph{Schr\"odinger} heaps",
        abstract=r"A \textbf{fast} bound $\mathcal{O}(\sqrt{n})$ for \texttt{merge}.",
    )

    assert result_ids(search(client, "Schrödinger")) == [paper.arxiv_id]
    assert result_ids(search(client, "schrodinger heaps")) == [paper.arxiv_id]
    assert result_ids(search(client, "fast merge")) == [paper.arxiv_id]
    # TeX commands and the pieces a raw source would leave are not words of the paper.
    for q in ("emph", "textbf", "mathcal", "sqrt", "texttt"):
        assert result_ids(search(client, q)) == [], q
    for q in ("odinger", "nlog"):  # the trigram fallback may suggest it, but no word matches
        assert not search_module.matching(search_module.parse(q)).exists(), q
    # The typeset title keeps its formula, and the match is marked outside it.
    page = Page.of(search(client, "heaps"))
    assert page.select("math") and "heaps" in page.texts("mark")


def test_hidden_papers_never_appear(client):
    make_paper(
        arxiv_id="2611.00081", title="Hidden consensus", authors=["Leslie Lamport"], hidden=True
    )
    shown = make_paper(arxiv_id="2611.00082", title="Visible consensus")

    assert result_ids(search(client, "consensus")) == [shown.arxiv_id]
    assert result_ids(search(client, "au:lamport")) == []
    assert result_ids(search(client, "Lamprt")) == []  # nor through the fallback
    assert search(client, "2611.00081").status_code == 200  # no jump to a hidden paper


def test_results_are_paged_by_25_keeping_the_query(client):
    for number in range(1, 28):
        make_paper(arxiv_id=f"2611.{number:05d}", title=f"Consensus paper {number}")

    first = search(client, "consensus", category="cs.DC")
    assert len(result_ids(first)) == 25
    assert "27 papers match" in page_text(first)
    assert "?q=consensus&category=cs.DC&page=2" in hrefs(first)

    second = search(client, "consensus", category="cs.DC", page=2)
    assert len(result_ids(second)) == 2
    assert not set(result_ids(first)) & set(result_ids(second))
    assert len(result_ids(search(client, "consensus", page="zzz"))) == 25


def test_no_results_suggest_what_to_try(client):
    make_paper(title="Consensus")

    nothing = search(client, "zyxwvut qqqq")
    assert "No papers match" in page_text(nothing)
    assert "Check the spelling" in page_text(nothing)
    assert "/list/cs.DC/" in hrefs(nothing)

    assert "too common" in page_text(search(client, "the of and"))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"q": "consensus " * 100}, "searches can be at most 300"),
        ({"q": "au:"}, "needs something right after it"),
        ({"q": "x", "category": "cs/DC"}, "not an arXiv category code"),
        ({"q": "x", "since": "yesterday"}, "YYYY-MM-DD"),
        ({"q": "x", "since": "2026-12-01", "until": "2026-11-01"}, "swap them"),
        ({"q": "x " + "au:x " * 11}, "at most 10"),
    ],
)
def test_bad_input_gets_a_clear_message(client, params, message):
    response = client.get(reverse("papers:search"), params)
    assert response.status_code == 400
    assert message in page_text(response)


@pytest.mark.parametrize(
    "q",
    [
        '"unclosed',
        "-",
        "or or or",
        "!!! && || :* <->",
        "a:b",
        "'; drop table",
        "\\frac{",
        "(((",
        # Quoted phrases become regular expressions for ranking: their syntax is only text.
        '"consensus (a+)+$ [x \\m\\1 ***:"',
        '"***=consensus" "(?i)x" ""',
        '"consensus(?i)" "(consensus"',
    ],
)
def test_odd_syntax_never_fails(client, q):
    make_paper(title="Consensus")
    assert search(client, q).status_code == 200


def test_nul_in_the_query_is_refused_clearly(client):
    response = search(client, "conse\x00nsus")
    assert response.status_code == 400
    assert "NUL" in page_text(response)


def test_a_page_of_results_writes_nothing_to_the_shared_cache(client, monkeypatch):
    # Each result is marked with the search's words, so no other search shows the same piece:
    # locally, where the shared cache is a table, 25 results cost some 250 queries when each
    # result's pieces were written to it.
    from peerrevenue import keep

    for number in range(1, 6):
        make_paper(arxiv_id=f"2611.{number:05d}", title=f"Consensus paper {number}")
    writes: list[str] = []
    shared = keep.cache

    class Watched:
        def __getattr__(self, name):
            return getattr(shared, name)

        def set(self, key, *args, **kwargs):
            writes.append(key)
            return shared.set(key, *args, **kwargs)

    monkeypatch.setattr(keep, "cache", Watched())
    assert len(result_ids(search(client, "consensus"))) == 5
    assert writes == []
    assert "Consensus" in marked(search(client, "consensus"))


@contextlib.contextmanager
def at_most_queries(limit: int) -> Iterator[None]:
    """At most ``limit`` statements, savepoints aside: the search runs in one so that a query
    the database refuses leaves a transaction usable, and tests run in one (a request, in
    autocommit, sends none)."""
    with CaptureQueriesContext(connection) as captured:
        yield
    sent = [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(sent) <= limit, "\n".join(sent)


def test_the_page_costs_the_same_number_of_queries_however_many_results(client):
    Category.objects.get_or_create(
        code="cs.DC", defaults={"name": "Distributed Computing", "archive_code": "cs"}
    )
    for number in range(1, 41):
        make_paper(
            arxiv_id=f"2611.{number:05d}",
            title=f"Consensus paper {number}",
            authors=["Ada Lovelace", "Leslie Lamport", "Nancy Lynch", "Barbara Liskov"],
        )
    # The count, the page, the page's categories, the market terms the words name, the terms
    # each result mentions, the page's facts (term set and prices, for the highlighting and
    # its hover prices), the market's term matcher until it is cached, and the stars of the
    # results (the library's "saved" holes: one query for the page) and their comment counts
    # (discussion's "comments" holes: one query for the page).
    with at_most_queries(9):
        assert len(result_ids(search(client, "consensus"))) == 25
    with at_most_queries(8):
        assert len(result_ids(search(client, "consensus", page=2))) == 15
    # Nothing matches exactly: the fallback adds its look-up of the words like the typed one
    # and its count; and the market's term matcher may be reloaded once, whatever the number
    # of results.
    with at_most_queries(12):
        assert len(result_ids(search(client, "Lamprt"))) == 25


def test_results_show_the_market_terms_they_mention(client):
    from market.models import Mention, Term

    paper = make_paper(title="Gossip protocols", abstract="Gossip spreads rumours.")
    term = Term.objects.create(phrase="gossip", aliases=["epidemic protocol"])
    Mention.objects.create(term=term, paper=paper, date=DAY)

    rumours = search(client, "rumours")
    assert "Mentions" in page_text(rumours) and term.get_absolute_url() in hrefs(rumours)
    assert "On the market" in page_text(search(client, "gossip"))


def test_the_market_finds_terms_by_phrase_or_alias(client):
    from market.models import Term

    Term.objects.create(phrase="gossip", aliases=["epidemic protocol"])
    Term.objects.create(phrase="consensus")

    by_alias = market_terms(client.get(reverse("market:index"), {"q": "epidemic"}))
    assert "gossip" in by_alias and "consensus" not in by_alias
    by_phrase = market_terms(client.get(reverse("market:index"), {"q": "Gossip"}))
    assert "gossip" in by_phrase


def test_matches_are_marked_in_any_form_of_the_word_and_a_long_abstract_shows_where(client):
    filler = " ".join(["Nodes exchange messages in rounds and keep local state."] * 12)
    paper = make_paper(
        arxiv_id="2611.00091",
        title="Federation of clusters",
        abstract=f"{filler} Federated training then converges without any blockchain.",
    )

    response = search(client, "federated -ledger")

    assert result_ids(response) == [paper.arxiv_id]
    entry = Page.of(response).one("li", id=paper.arxiv_id)
    title = entry.one(cls="paper__title")
    assert title.text == "Federation of clusters" and title.texts("mark") == ["Federation"]
    snippet = entry.one("p", cls="paper__snippet")
    assert "Federated training then converges" in snippet.text
    assert snippet.texts("mark") == ["Federated"]
    # A word the query excludes is not marked, where the paper matches all the same.
    either = search(client, "federated or -blockchain")
    assert result_ids(either) == [paper.arxiv_id]
    assert "blockchain" in page_text(either)
    assert "blockchain" not in marked(either)


def test_a_snippet_reads_formulas_as_they_are_written(client):
    filler = " ".join(["Nodes exchange messages in rounds and keep local state."] * 12)
    make_paper(
        title="Constant-time lookups",
        abstract=f"{filler} A lookup in our hashing scheme takes $O(1)$ time and "
        r"$O(n \log n)$ space, with $n = 10^{6}$ keys and $x_i$-th entries.",
    )

    snippet = Page.of(search(client, "hashing")).one("p", cls="paper__snippet").text

    assert "takes O(1) time and O(n log n) space, with n = 10⁶ keys and x_i-th entries" in snippet


def test_past_the_counted_limit_a_past_date_range_still_shows_its_newest_matches(
    client, monkeypatch, cs_dc
):
    monkeypatch.setattr(search_pages, "MAX_COUNTED", 2)
    monkeypatch.setattr(search_query, "RECENT_PAPERS", 2)
    in_range = []
    for number in range(1, 5):
        paper = make_paper(arxiv_id=f"2601.{number:05d}", title=f"Gossip {number}")
        list_paper(paper, category=cs_dc, date=dt.date(2026, 1, number))
        in_range.append(paper)
    for number in range(1, 4):  # the newest papers of all, after the range
        later = make_paper(arxiv_id=f"2611.{number:05d}", title=f"Gossip later {number}")
        list_paper(later, category=cs_dc, date=DAY)

    response = search(client, "gossip", since="2026-01-01", until="2026-01-31")

    ids = result_ids(response)
    # The range's two newest announcements, not an empty page.
    assert set(ids) == {in_range[3].arxiv_id, in_range[2].arxiv_id}
    assert "More than 2 papers match" in page_text(response)


def test_past_the_counted_limit_the_newest_matches_are_ranked(client, monkeypatch):
    monkeypatch.setattr(search_pages, "MAX_COUNTED", 3)
    monkeypatch.setattr(search_query, "RECENT_PAPERS", 5)
    old_title_match = make_paper(arxiv_id="2601.00001", title="Gossip first")
    for number in range(2, 6):
        make_paper(arxiv_id=f"2611.{number:05d}", title=f"Paper {number}", abstract="On gossip.")
    newest_title_match = make_paper(arxiv_id="2612.00001", title="Gossip again")

    response = search(client, "gossip")

    ids = result_ids(response)
    assert ids[0] == newest_title_match.arxiv_id  # ranked first among the newest four
    assert old_title_match.arxiv_id not in ids
    assert "More than 3 papers match" in page_text(response)
