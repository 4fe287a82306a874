"""A library, or one tag of it, as BibTeX and as a plain list of arXiv ids.

Each paper's entry is papers.bibtex's, the same the paper page's Cite control shows, so a
paper cited from its page and exported with a library reads the same, but for the reader's own
note on it (library/notes.py), which only their export carries.
"""

from __future__ import annotations

from collections.abc import Iterable

from papers.bibtex import entry
from papers.models import Paper


def bibtex(papers: Iterable[Paper], *, notes: dict[int, str] | None = None) -> str:
    notes = notes or {}
    return "\n".join(entry(paper, note=notes.get(paper.pk, "")) for paper in papers)


def id_list(papers: Iterable[Paper]) -> str:
    return "".join(f"{paper.arxiv_id}\n" for paper in papers)
