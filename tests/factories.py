"""Small builders for papers and listings, so page tests read like the pages they check."""

from __future__ import annotations

import datetime as dt
import itertools

from papers.models import Category, Listing, Paper
from papers.typesetting import TYPESETTER_VERSION, tex_to_html, tex_to_text

_numbers = itertools.count(1)


def make_paper(
    *,
    arxiv_id: str | None = None,
    title: str = "A study of consensus",
    abstract: str = "We study consensus in asynchronous networks.",
    authors: list[str] | tuple[str, ...] = ("Ada Lovelace",),
    primary: str = "cs.DC",
    categories: list[str] | None = None,
    hidden: bool = False,
    version: int = 1,
) -> Paper:
    names = [tex_to_text(name) for name in authors]
    return Paper.objects.create(
        arxiv_id=arxiv_id or f"2611.{next(_numbers):05d}",
        version=version,
        title=title,
        title_html=tex_to_html(title, paragraphs=False),
        abstract=abstract,
        abstract_html=tex_to_html(abstract),
        authors=[
            {"name": raw, "name_text": text, "affiliation": ""}
            for raw, text in zip(authors, names, strict=True)
        ],
        authors_text=", ".join(names),
        typesetter_version=TYPESETTER_VERSION,
        primary_category=primary,
        categories=categories or [primary] + ([] if primary == "cs.DC" else ["cs.DC"]),
        hidden=hidden,
    )


def list_paper(
    paper: Paper,
    *,
    category: Category,
    date: dt.date,
    announce_type: str = Listing.AnnounceType.NEW,
) -> Listing:
    return Listing.objects.create(
        category=category, paper=paper, date=date, announce_type=announce_type
    )


def make_listed_papers(
    count: int, *, category: Category, date: dt.date, first_number: int = 1
) -> list[Paper]:
    papers = []
    for offset in range(count):
        paper = make_paper(
            arxiv_id=f"{date:%y%m}.{first_number + offset:05d}",
            title=f"Paper number {first_number + offset}",
        )
        list_paper(paper, category=category, date=date)
        papers.append(paper)
    return papers
