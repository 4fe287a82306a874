"""One paper as a BibTeX entry: what the paper page's Cite control shows and its ``.bib``
download give, and what the library's export (library/bibtex.py) joins for many papers.

Entries follow arXiv's own export (``@misc`` with ``eprint``, ``archivePrefix``,
``primaryClass``); every value is braced with TeX's specials escaped, so a title or name
with braces, ``%`` or ``#`` cannot break the file. The key is the arXiv id (unique, and what a
reader searches for), with a slash made a colon for old-style ids.
"""

from __future__ import annotations

import re

from .models import Paper

_SPECIAL = re.compile(r"([{}%#&$_\\^~])")
_REPLACEMENTS = {
    "\\": r"\textbackslash{}",
    "^": r"\^{}",
    "~": r"\~{}",
}


def escape(text: str) -> str:
    """A value safe between braces: TeX's specials escaped, whitespace collapsed (a value
    spanning lines is fine, but a NUL or a stray line break is no use to anyone)."""
    text = " ".join(text.replace("\x00", "").split())
    return _SPECIAL.sub(lambda m: _REPLACEMENTS.get(m.group(1), "\\" + m.group(1)), text)


def cite_key(arxiv_id: str) -> str:
    return arxiv_id.replace("/", ":")


def file_name(arxiv_id: str) -> str:
    """The download's file name: a slash (old-style ids) is no part of a file's name."""
    return f"{arxiv_id.replace('/', '-')}.bib"


def entry(paper: Paper, *, note: str = "") -> str:
    """``note``: the reader's own note on the paper (their library's export), first in
    BibTeX's note field; the page's Cite control has none."""
    year = paper.submitted_at.year if paper.submitted_at else year_of(paper.arxiv_id)
    # BibTeX's doi field holds one DOI (styles make it one https://doi.org/ link); a paper
    # with several gives the others in a note, so none is lost.
    first, *others = paper.dois or [""]
    fields = [
        ("title", paper.title_text or paper.title),
        ("author", " and ".join(paper.author_names)),
        ("year", str(year) if year else ""),
        ("eprint", paper.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", paper.primary_category),
        ("doi", first),
        (
            "note",
            "; ".join(filter(None, [note, f"Also DOI {', '.join(others)}" if others else ""])),
        ),
        ("url", paper.arxiv_abs_url),
    ]
    body = ",\n".join(f"  {name} = {{{escape(value)}}}" for name, value in fields if value)
    return f"@misc{{{cite_key(paper.arxiv_id)},\n{body}\n}}\n"


def year_of(arxiv_id: str) -> int | None:
    """2411.01234 was submitted in 2024; cs/0101001 in 2001."""
    digits = arxiv_id.split("/")[-1]
    if len(digits) < 4 or not digits[:2].isdigit():
        return None
    yy = int(digits[:2])
    return 2000 + yy if yy < 91 else 1900 + yy
