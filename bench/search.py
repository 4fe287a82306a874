#!/usr/bin/env python
"""Paper search latency at arXiv's scale: 300,000 synthetic papers, 1,000 mixed queries.

Loads 300,000 papers (titles, 2-9 authors with some accented names, abstracts of 80-320 words
from a Zipf-distributed vocabulary, a third with a formula, one to three categories, one
listing each over five years) into a scratch database with COPY, builds the search indexes,
then runs 1,000 queries mixing single words, several words, quoted phrases, exclusions, author
names (bare, ``au:``, misspelled), ``ti:`` and category and date filters. For each it times
``papers.search.results()`` (the count, the ranked page, the marks) and the whole /search/
page through Django's test client, and prints p50/p95/p99 for both, the sizes of the table and
indexes, EXPLAIN ANALYZE of the page query for a word and an author, and the page's query
count. Goal: p95 <= 50 ms.

    .venv/bin/python bench/search.py [--papers 300000] [--queries 1000] [--reuse]

``--reuse`` keeps the database of an earlier run with the same number of papers (loading takes
a few minutes).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import reused_or_scratch, setup_offline_django  # noqa: E402

DATABASE = "pr_search_bench"
FIRST_DAY = dt.date(2021, 11, 1)
GOAL_P95_MS = 50.0


def _words(text: str) -> list[str]:
    return text.split()


FUNCTION_WORDS = _words(
    "the of and a to in we is for that this on with by as are an be our from which it can "
    "these at their not has its have such or both than show also into between while over"
)
DOMAIN_WORDS = _words(
    "model learning network data algorithm system distributed graph training neural "
    "performance method approach problem results time paper framework optimization memory "
    "consensus protocol parallel cluster cache storage latency throughput scheduling gpu "
    "federated privacy security attack robust adversarial inference language transformer "
    "attention embedding retrieval generation reinforcement policy agent reward simulation "
    "quantum circuit compiler runtime kernel accelerator hardware energy power fault "
    "tolerance replication byzantine agreement blockchain ledger smart contract transaction "
    "database query index search ranking recommendation clustering classification regression "
    "estimation sampling stochastic gradient descent convergence bound lower upper complexity "
    "approximation randomized deterministic online streaming sparse dense matrix tensor "
    "decomposition spectral kernel bayesian probabilistic causal fairness interpretability "
    "explanation benchmark dataset evaluation empirical theoretical proof theorem lemma "
    "verification formal specification synthesis program analysis static dynamic testing "
    "fuzzing vulnerability malware network routing wireless edge cloud serverless container "
    "virtualization microservice workflow pipeline dataflow mapreduce spark gossip epidemic "
    "broadcast multicast peer overlay sensor vehicle robot control planning trajectory "
    "perception vision image video segmentation detection tracking speech audio text "
    "translation summarization dialogue question answering knowledge reasoning logic ontology "
    "semantic web social diffusion influence community heterogeneous homogeneous scalability "
    "elasticity availability consistency linearizability serializability isolation snapshot "
    "lock contention wait free lockfree concurrent shared message passing asynchronous "
    "synchronous partial failure detector leader election clock synchronization mutual "
    "exclusion quorum sharding partitioning load balancing migration checkpoint recovery "
    "logging compression coding erasure encryption homomorphic differential secure multiparty "
    "zero knowledge signature hashing bloom filter sketch heavy hitter cardinality "
    "percolation random walk markov chain monte carlo variational autoencoder diffusion "
    "generative contrastive selfsupervised pretraining finetuning prompt instruction "
    "alignment hallucination quantization pruning distillation lowrank adapter mixture "
    "experts sparse activation pipeline parallelism tensor parallelism zero offloading "
    "checkpointing throughput"
)
FIRST_NAMES = _words(
    "Ada Alan Ana Bo Chen Dana Elena Fatima Grace Hiro Ines Jun Karl Lena Li Maria Nora Olga "
    "Priya Ravi Sofia Tomasz Uma Vera Wei Xin Yusuf Zoe Ahmet Jürgen Søren Zoë Łukasz Renée "
    "José Émile Björn Ağca Çağla Dmitri Hana Kenji Mateo Nia Omar Pål"
)
SURNAMES = _words(
    "Lamport Lynch Liskov Dwork Shapiro Keidar Aguilera Raynal Herlihy Shavit Attiya Welch "
    "Guerraoui Castro Ongaro Ousterhout Dean Ghemawat Stoica Zaharia Franklin Hellerstein "
    "Abadi Stonebraker Pavlo Müller Pérez Dağlı Nowak Hoffmann Raman Nguyễn Øster Kowalski "
    "Schröder Sánchez García Martínez Yılmaz Şahin Özdemir Novák Dvořák Lévy Brontë Wang "
    "Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Lin Kumar Singh Sharma "
    "Patel Gupta Smith Johnson Brown Jones Miller Davis Wilson Taylor"
)
SYLLABLES = _words("ka lo mi ne ra tu si po ve da gri stel mor fin tal bex quo zan vir plo")
FORMULA = (
    '<math alttext="O(n\\log n)"><mi>O</mi><mo stretchy="false">(</mo><mi>n</mi><mspace '
    'width="0.1667em"></mspace><mi>log</mi><mspace width="0.1667em"></mspace><mi>n</mi>'
    '<mo stretchy="false">)</mo></math>'
)


def vocabulary(rng: random.Random, size: int = 30000) -> list[str]:
    """Function words first, then domain words, then made-up rare words: Zipf by rank."""
    words = list(dict.fromkeys(FUNCTION_WORDS + DOMAIN_WORDS))
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def surnames(rng: random.Random, count: int = 20000) -> list[str]:
    names = list(SURNAMES)
    while len(names) < count:
        names.append("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).title())
    return names


class Corpus:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        # Zipf, s = 1: the rank-r word is drawn with weight 1/r.
        self.cumulative = list(itertools.accumulate(1 / r for r in range(1, len(self.words) + 1)))
        self.surnames = surnames(self.rng)
        self.surname_cumulative = list(
            itertools.accumulate(1 / r**0.8 for r in range(1, len(self.surnames) + 1))
        )

    def text(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def author(self) -> str:
        first = self.rng.choice(FIRST_NAMES)
        last = self.rng.choices(self.surnames, cum_weights=self.surname_cumulative)[0]
        return f"{first} {last}"


def write_papers(cursor, corpus: Corpus, count: int, categories: list[str]) -> None:
    rng = corpus.rng
    columns = (
        "arxiv_id, version, title, title_html, abstract, abstract_html, authors, authors_text, "
        "typesetter_version, primary_category, categories, comment, journal_ref, doi, license, "
        "hidden, created_at, modified_at"
    )
    now = dt.datetime.now(dt.UTC)
    per_month = math.ceil(count / 60)
    started = time.monotonic()
    with cursor.copy(f"COPY papers_paper ({columns}) FROM STDIN") as copy:
        for n in range(count):
            month = n // per_month
            year, month_of_year = 21 + (month + 10) // 12, (month + 10) % 12 + 1
            arxiv_id = f"{year:02d}{month_of_year:02d}.{n % per_month + 1:05d}"
            title_words = corpus.text(rng.randint(5, 14))
            title = " ".join(title_words).capitalize()
            length = max(80, min(320, int(rng.gauss(180, 50))))
            sentences, words = [], corpus.text(length)
            for start in range(0, length, 18):
                sentences.append(" ".join(words[start : start + 18]).capitalize() + ".")
            abstract = " ".join(sentences)
            abstract_html = abstract
            if rng.random() < 0.33:
                abstract += " We sort in $O(n\\log n)$ time."
                abstract_html += f" We sort in {FORMULA} time."
            authors = [corpus.author() for _ in range(rng.choice((2, 2, 3, 3, 4, 5, 6, 9)))]
            primary = rng.choice(categories)
            cats = [primary] + rng.sample(categories, rng.choice((0, 0, 1, 2)))
            cats = list(dict.fromkeys(cats))
            copy.write_row(
                (
                    arxiv_id,
                    1,
                    title,
                    title,
                    abstract,
                    f"<p>{abstract_html}</p>",
                    json.dumps(
                        [{"name": a, "name_text": a, "affiliation": ""} for a in authors],
                        ensure_ascii=False,
                    ),
                    ", ".join(authors),
                    2,
                    primary,
                    json.dumps(cats),
                    "",
                    "",
                    "",
                    "",
                    n % 997 == 0,  # a few hidden papers
                    now,
                    now,
                )
            )
            if n and n % 50000 == 0:
                print(f"  {n:,} papers written ({time.monotonic() - started:.0f} s)", flush=True)


def load(count: int, seed: int) -> Corpus:
    from django.db import connection

    from papers.models import Category

    corpus = Corpus(seed)
    categories = list(Category.objects.values_list("code", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'papers_paper' "
            "AND indexname = 'paper_search'"
        )
        indexes = cursor.fetchall()
        # A bulk load: insert first, then build each index once, as a restore would.
        for name, _ in indexes:
            cursor.execute(f'DROP INDEX "{name}"')
        started = time.monotonic()
        write_papers(cursor.cursor, corpus, count, categories)
        print(f"  COPY of {count:,} papers: {time.monotonic() - started:.0f} s", flush=True)
        # The listings' statement trigger restamps every paper they list, which rewrites each
        # row (search vectors and all) and its name words again: at 1,000,000 papers it ran
        # for over half an hour. A scratch database has nothing kept to invalidate, so the
        # load writes them as a restore would, without firing triggers (the category pages'
        # day counts, which the triggers also keep, stay empty: search does not read them).
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            """
            INSERT INTO papers_listing (category_id, paper_id, date, announce_type, version)
            SELECT c.id, p.id, %s::date + ((p.id - first.id) * 1826 / %s)::int, 'new', 1
            FROM papers_paper p
            JOIN papers_category c ON c.code = p.primary_category
            CROSS JOIN (SELECT min(id) AS id FROM papers_paper) first
            """,
            [FIRST_DAY, count],
        )
        cursor.execute("SET session_replication_role = DEFAULT")
        for name, definition in indexes:
            started = time.monotonic()
            cursor.execute(definition)
            print(f"  index {name}: {time.monotonic() - started:.0f} s", flush=True)
        cursor.execute("VACUUM ANALYZE papers_paper")
        cursor.execute("VACUUM ANALYZE papers_listing")
    return corpus


def queries(corpus: Corpus, count: int, seed: int) -> list[dict[str, str]]:
    """What readers type: mostly topical words, some phrases and names, some filters."""
    from papers.models import Paper

    rng = random.Random(seed)
    content = [w for w in corpus.words[:3000] if w not in FUNCTION_WORDS]
    samples = list(
        Paper.objects.filter(pk__in=[rng.randint(1, 300000) for _ in range(400)]).values_list(
            "abstract", "authors_text"
        )
    )
    categories = ["cs.DC", "cs.LG", "cs.CR", "cs.DB", "cs.AI", "cs.NI"]

    def word() -> str:
        # Readers search topical words: mid-frequency more than the most common.
        return content[min(len(content) - 1, int(rng.paretovariate(0.6)) - 1 + rng.randint(0, 40))]

    def phrase() -> str:
        abstract, _ = rng.choice(samples)
        tokens = [t.strip(".").lower() for t in abstract.split()]
        start = rng.randrange(0, len(tokens) - 3)
        return '"' + " ".join(tokens[start : start + rng.choice((2, 2, 3))]) + '"'

    def surname() -> str:
        _, authors = rng.choice(samples)
        return rng.choice(authors.split(", ")).split()[-1]

    def typo(name: str) -> str:
        i = rng.randrange(1, len(name) - 1) if len(name) > 3 else 1
        return name[:i] + name[i + 1 :]

    made: list[dict[str, str]] = []
    kinds = (
        ["word"] * 30
        + ["words"] * 20
        + ["phrase"] * 12
        + ["exclude"] * 5
        + ["author"] * 8
        + ["au"] * 7
        + ["typo"] * 3
        + ["ti"] * 5
        + ["category"] * 6
        + ["dates"] * 4
    )
    for _ in range(count):
        kind = rng.choice(kinds)
        params: dict[str, str] = {}
        if kind == "word":
            q = word()
        elif kind == "words":
            q = " ".join(word() for _ in range(rng.choice((2, 2, 3))))
        elif kind == "phrase":
            q = phrase()
        elif kind == "exclude":
            q = f"{word()} {word()} -{word()}"
        elif kind == "author":
            q = surname()
        elif kind == "au":
            q = f"au:{surname()}" + (f" {word()}" if rng.random() < 0.5 else "")
        elif kind == "typo":
            q = typo(surname())
        elif kind == "ti":
            q = f"ti:{word()} {word()}"
        elif kind == "category":
            q = " ".join(word() for _ in range(rng.choice((1, 2))))
            params["category"] = rng.choice(categories)
        else:
            q = word()
            start = FIRST_DAY + dt.timedelta(days=rng.randint(0, 1700))
            params["since"] = start.isoformat()
            params["until"] = (start + dt.timedelta(days=rng.choice((7, 30, 90)))).isoformat()
        made.append({"q": q, **params, "_kind": kind})
    return made


def percentiles(values: list[float]) -> str:
    values = sorted(values)
    q = statistics.quantiles(values, n=100, method="inclusive")
    return f"p50 {q[49]:.1f} ms, p95 {q[94]:.1f} ms, p99 {q[98]:.1f} ms, max {values[-1]:.1f} ms"


def run_one(params: dict[str, str]) -> float:
    from papers import search

    started = time.perf_counter()
    query = search.parse(
        params["q"],
        categories=[params["category"]] if "category" in params else [],
        date_from=dt.date.fromisoformat(params["since"]) if "since" in params else None,
        date_to=dt.date.fromisoformat(params["until"]) if "until" in params else None,
    )
    search.results(query, page=1)
    return (time.perf_counter() - started) * 1000


def explain(sql_queryset) -> str:
    from django.db import connection

    sql, params = sql_queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql, params)
        return "\n".join("    " + row[0] for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=300_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()

    url, reuse = reused_or_scratch(DATABASE, papers=args.papers, reuse=args.reuse)
    setup_offline_django(url)
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from papers import search

    if reuse:
        print(f"Reusing {DATABASE} with {args.papers:,} papers")
        corpus = Corpus(args.seed)
    else:
        print(f"Loading {args.papers:,} papers into {DATABASE}")
        corpus = load(args.papers, args.seed)

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_pretty(pg_table_size('papers_paper')), "
            "pg_size_pretty(pg_relation_size('paper_search')), "
            "pg_size_pretty(pg_total_relation_size('papers_nameword')), "
            "(SELECT count(*) FROM papers_nameword), "
            "pg_size_pretty(sum(pg_column_size(search_vector))), "
            "avg(length(abstract))::int, "
            "avg(array_length(regexp_split_to_array(abstract, ' '), 1))::int "
            "FROM papers_paper"
        )
        (
            table,
            vector_index,
            name_words,
            name_word_count,
            vectors,
            chars,
            words,
        ) = cursor.fetchone()
    print(
        f"Sizes: table {table} (search vectors {vectors} of it); GIN index of categories, words "
        f"and title words {vector_index}; {name_word_count:,} words of names and "
        f"titles with their trigram index {name_words}. "
        f"Abstracts average {chars} characters, {words} words."
    )

    mix = queries(corpus, args.queries, args.seed)
    for params in mix[:100]:  # warm the connection and the OS cache a little
        run_one(params)
    timings: dict[str, list[float]] = {}
    domain: list[float] = []
    for params in mix:
        elapsed = run_one(params)
        domain.append(elapsed)
        timings.setdefault(params["_kind"], []).append(elapsed)
    client = Client()
    pages: list[float] = []
    for params in mix:
        started = time.perf_counter()
        response = client.get("/search/", {k: v for k, v in params.items() if k != "_kind"})
        pages.append((time.perf_counter() - started) * 1000)
        assert response.status_code in (200, 302), (params, response.status_code)

    print(f"\n{len(mix)} queries, search (count + ranked page + marks): {percentiles(domain)}")
    print(f"{len(mix)} queries, whole /search/ page (view + template): {percentiles(pages)}")
    for kind, values in sorted(timings.items()):
        print(
            f"  {kind:9} {len(values):4} queries: median {statistics.median(values):6.1f} ms, "
            f"max {max(values):6.1f} ms   e.g. {next(p['q'] for p in mix if p['_kind'] == kind)!r}"
        )

    with CaptureQueriesContext(connection) as captured:
        client.get("/search/", {"q": "consensus"})
    counted = len(captured.captured_queries)
    with CaptureQueriesContext(connection) as captured:
        client.get("/search/", {"q": "consensus protocol", "category": "cs.DC", "page": "3"})
    print(
        f"\nQueries per page: {counted} (a word), {len(captured.captured_queries)} "
        "(two words, a category, page 3)"
    )

    for label, q in (
        ("a common word", "learning"),
        ("an author and a word", "au:lamport consensus"),
        ("a title word and a word", "ti:policy cluster"),
        ("a phrase", '"gradient descent"'),
        ("rarer words", "quorum sharding"),
    ):
        # As search.results() reads it: the matches' ids (the count), then the page.
        query = search.parse(q)
        ids = list(
            search.matching(query).order_by().values_list("pk", flat=True)[: search.MAX_COUNTED + 1]
        )
        if len(ids) > search.MAX_COUNTED:
            page = search.ranked(query, recent=True)[:25]
        else:
            page = search.ranked(query, among=ids)[:25]
        heading = f"EXPLAIN ANALYZE, page query for {label} ({q!r}, {len(ids)} found)"
        print(f"\n{heading}:\n{explain(page)}")
    for q in ("learning", "ti:policy cluster"):
        matches = search.matching(search.parse(q)).order_by().values("pk")[: search.MAX_COUNTED + 1]
        print(f"\nEXPLAIN ANALYZE, the matches' ids (the count) for {q!r}:\n{explain(matches)}")

    p95 = statistics.quantiles(sorted(domain), n=100, method="inclusive")[94]
    verdict = "meets" if p95 <= GOAL_P95_MS else "misses"
    print(
        f"\nsummary: {args.papers:,} papers, {len(mix)} queries, search p95 {p95:.1f} ms "
        f"({verdict} the goal of {GOAL_P95_MS:.0f} ms), index {vector_index}"
    )


if __name__ == "__main__":
    main()
