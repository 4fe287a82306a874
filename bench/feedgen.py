"""Synthetic arXiv RSS feeds in the rss.arxiv.org format, for the benchmarks.

Deterministic for a seed: math-heavy abstracts, TeX accents in author names, affiliations with
commas in parentheses, a mix of new, cross-list and replacement entries.
"""

from __future__ import annotations

import datetime as dt
import random
from xml.sax.saxutils import escape

VOCABULARY = (
    "we propose a scalable protocol for consensus among replicas in geo-distributed data "
    "centers and show that the KV cache of large language model serving can be sharded across "
    "GPUs with RDMA while stragglers are mitigated by erasure coding and speculative decoding "
    "our evaluation on a Kubernetes cluster with serverless functions reduces tail latency and "
    "cold start overheads compared with the state of the art for federated learning and "
    "stream processing workloads under Byzantine faults with linearizable reads"
)
WORDS = tuple(VOCABULARY.split())
# Abstracts mix formulas that recur across papers ($n$, $O(\log n)$, $\epsilon$) with ones
# particular to a paper. COMMON_FORMULAS are the first kind; FORMULAS are templates whose
# numbers are filled in per use, so a feed also has thousands of distinct formulas and the
# typesetter's formula cache does not flatter it.
COMMON_FORMULAS = (
    "$n$",
    "$k$",
    r"$\epsilon$",
    r"$O(\log n)$",
    r"$O(n \log n)$",
    "$f < n/3$",
    r"$\Omega(n^2)$",
    r"$2\times$",
)
FORMULAS = (
    r"$O(n^{{{a}}} \log n)$",
    r"$10^{{{a}}}$",
    r"${a}\epsilon$-approximation",
    r"$f < n/{a}$",
    r"$\frac{{{a}}}{{\sqrt{{n + {b}}}}}$",
    r"$\mathcal{{O}}(\log^{{{a}}} n)$",
    r"${a}.{b}\times$",
    r"$p_{{{a}{b}}}$",
    r"$\Theta\left(\frac{{n}}{{k + {a}}}\right)$",
    r"$\sum_{{i=1}}^{{{a}}} x_i^{{{b}}}$",
)
AUTHORS = (
    r"Ay\c{s}e Da\u{g}l{\i}",
    r"J\"urgen M\"uller (ETH Z\"urich, Switzerland)",
    r"Zs\'ofia Sz\"oll\H{o}si",
    "Chen Wei (Tsinghua University, Beijing, China)",
    r"Ana P\'erez",
    "Priya Raman",
    "Tomasz Nowak (AGH, Krak\\'ow, Poland)",
    "Mei Tanaka",
    "Jonas Lindqvist",
    r"Fran\c{c}ois Dupont",
)
OTHER_CATEGORIES = ("cs.LG", "cs.NI", "cs.OS", "cs.PF", "cs.CR")


def formula(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(COMMON_FORMULAS)
    return rng.choice(FORMULAS).format(a=rng.randint(2, 99), b=rng.randint(1, 9))


def abstract(rng: random.Random, words: int = 150) -> str:
    parts = []
    for n in range(words):
        parts.append(rng.choice(WORDS))
        if n % 18 == 9:
            parts.append(formula(rng))
        if n % 40 == 20:
            parts.append(r"\emph{" + rng.choice(WORDS) + "}")
        if n % 50 == 30:
            parts.append(f"{rng.randint(2, 95)}\\%")
    return " ".join(parts).capitalize() + "."


def rss(
    *, date: dt.date, items: int, seed: int = 0, category: str = "cs.DC", first_number: int = 1
) -> bytes:
    rng = random.Random(seed)
    pub = f"{date:%a, %d %b %Y} 00:00:00 -0500"
    out = [
        "<?xml version='1.0' encoding='UTF-8'?>",
        '<rss xmlns:arxiv="http://arxiv.org/schemas/atom" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" version="2.0">',
        "<channel>",
        f"<title>{category} updates on arXiv.org</title>",
        f"<link>http://rss.arxiv.org/rss/{category}</link>",
        f"<description>{category} updates on the arXiv.org e-print archive.</description>",
        f"<pubDate>{pub}</pubDate>",
    ]
    for n in range(items):
        number = f"{date:%y%m}.{first_number + n:05d}"
        kind = rng.choices(["new", "cross", "replace"], weights=[7, 2, 1])[0]
        categories = [category] if kind != "cross" else [rng.choice(OTHER_CATEGORIES), category]
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 11))).title()
        if rng.random() < 0.3:
            title += " in " + formula(rng)
        authors = ", ".join(rng.sample(AUTHORS, rng.randint(1, 7)))
        description = f"arXiv:{number}v1 Announce Type: {kind} \nAbstract: {abstract(rng)}"
        out += [
            "<item>",
            f"<title>{escape(title)}</title>",
            f"<link>https://arxiv.org/abs/{number}</link>",
            f"<description>{escape(description)}</description>",
            f'<guid isPermaLink="false">oai:arXiv.org:{number}v1</guid>',
            *(f"<category>{code}</category>" for code in categories),
            f"<pubDate>{pub}</pubDate>",
            f"<arxiv:announce_type>{kind}</arxiv:announce_type>",
            "<dc:rights>http://creativecommons.org/licenses/by/4.0/</dc:rights>",
            f"<dc:creator>{escape(authors)}</dc:creator>",
            "</item>",
        ]
    out += ["</channel>", "</rss>"]
    return "\n".join(out).encode()
