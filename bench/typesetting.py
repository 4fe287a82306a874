"""Throughput of papers.typesetting on synthetic, maths-heavy arXiv abstracts.

Run from the project root:  .venv/bin/python bench/typesetting.py [--count N] [--seed S]

Generates deterministic abstracts of about 150 words, each with several formulas (numbers with
units, scripts, fractions, Greek), TeX accents, percent signs and \\emph, then times
tex_to_html over all of them with a cold formula cache (the headline figure), and a slice of
them again with a warm one.  No Django needed.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from papers import typesetting  # noqa: E402  (needs the sys.path entry above)
from papers.typesetting import mathml  # noqa: E402

WORDS = [
    "we", "study", "the", "of", "a", "and", "in", "for", "model", "data", "results", "show",
    "that", "this", "method", "network", "quantum", "field", "theory", "energy", "spectrum",
    "learning", "graph", "algorithm", "bound", "optimal", "random", "matrix", "galaxy",
    "cluster", "mass", "observations", "simulations", "temperature", "phase", "transition",
    "density", "propose", "novel", "approach", "performance", "improves", "significantly",
    "compared", "baseline", "state", "art", "prove", "theorem", "lemma", "estimate", "error",
    "convergence", "rate", "dimension", "large", "scale",
]  # fmt: skip
NAMES = [r"Schr\"odinger", r"Poincar\'e", r"Erd\H{o}s", r"Ces\`aro", r"{\L}ojasiewicz",
         r"G\"{o}del", r"Fran\c{c}ois", r"\v{S}ilov", r"Dağl{\i}", r"Stra\ss e"]  # fmt: skip
UNITS = [r"\mathrm{GeV}", r"\mu\mathrm{m}", r"\mathrm{K}", r"\mathrm{M}_\odot", r"\,\mathrm{Hz}"]


def formula(rng: random.Random) -> str:
    a, b = rng.randint(1, 99), rng.randint(-9, 12)
    x, y = rng.choice("xyznkNT"), rng.choice(["\\alpha", "\\beta", "\\gamma", "\\lambda", "t"])
    choices = [
        f"${a}\\times 10^{{{b}}}$",
        f"${a}\\,{rng.choice(UNITS)}$",
        f"${x}_{{{a}}}^{{{abs(b)}}}$",
        f"$\\frac{{{x}}}{{\\sqrt{{{a} + {y}}}}}$",
        f"$\\mathcal{{O}}({x}^{{{abs(b) % 4 + 1}}}\\log {x})$",
        f"${y} \\sim {a}.{abs(b)}$",
        f"$\\left( {x} \\le {a}{{,}}000 \\right)$",
        f"${{}}^{{{a + 100}}}\\mathrm{{U}}$",
        f"$$\\sum_{{i=1}}^{{{x}}} {y}_i = {a}$$",
        f"$\\mathbb{{R}}^{{{a}}}$",
    ]
    return rng.choice(choices)


def abstract(rng: random.Random) -> str:
    parts: list[str] = []
    for i in range(150):
        roll = rng.random()
        if roll < 0.05:
            parts.append(formula(rng))
        elif roll < 0.07:
            parts.append(rng.choice(NAMES))
        elif roll < 0.085:
            parts.append(f"{rng.randint(1, 99)}%")
        elif roll < 0.095:
            parts.append(f"\\emph{{{rng.choice(WORDS)}}}")
        else:
            parts.append(rng.choice(WORDS))
        if i % 30 == 29:
            parts.append(rng.choice([".", ".\n ", ";"]))
    return " ".join(parts)


def run(texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        typesetting.tex_to_html(text)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=20240611)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    texts = [abstract(rng) for _ in range(args.count)]
    formulas = sum(t.count("$") // 2 for t in texts)  # approximate ($$ counts double)

    mathml.convert_math.cache_clear()
    cold = run(texts)
    # Warm: re-typeset a slice whose formulas all fit in the (bounded) formula cache, as when
    # a batch is re-rendered after a version bump.
    subset = texts[:500]
    run(subset)
    warm = run(subset)
    cold_rate, warm_rate = args.count / cold, len(subset) / warm
    print(f"abstracts:   {args.count} (~{formulas / args.count:.1f} formulas each)")
    print(f"cold cache:  {cold:.2f} s, {cold_rate:,.0f} abstracts/s")
    print(f"warm cache:  {warm_rate:,.0f} abstracts/s (first {len(subset)}, formulas cached)")
    print(
        f"summary: typesetter v{typesetting.TYPESETTER_VERSION} typeset {args.count} abstracts "
        f"at {cold_rate:,.0f} abstracts/s ({1000 * cold / args.count:.2f} ms each, cold cache)"
    )


if __name__ == "__main__":
    main()
