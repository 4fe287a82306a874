"""Single fields as arXiv spells them: whitespace, identifiers, dates."""

from __future__ import annotations

import datetime as dt
import email.utils
import re

from papers.calendar import NEW_YORK
from papers.identifiers import ARXIV_ID

# `oai:arXiv.org:2411.01234v2`, `http://arxiv.org/abs/2411.01234v2`, `arXiv:2411.01234v2` and
# old-style ids such as `cs/0112017v1`. The id is the pattern the paper URL and the admin's
# validator use, so every id stored here has a page.
ARXIV_ID_RE = re.compile(
    r"(?:oai:arXiv\.org:|arxiv\.org/abs/|^arXiv:)"
    rf"(?P<id>{ARXIV_ID})v(?P<version>\d+)$",
    re.IGNORECASE,
)


def clean(text: str | None) -> str:
    """Collapse the line breaks and indentation that arXiv wraps titles and names in.

    Abstracts are not cleaned this way: their line structure marks paragraphs.
    """
    return " ".join((text or "").split())


def split_id(text: str) -> tuple[str, int] | None:
    """`http://arxiv.org/abs/2411.01234v2` → ("2411.01234", 2); None if it is not an arXiv id."""
    match = ARXIV_ID_RE.search(text.strip())
    if not match:
        return None
    return match["id"], int(match["version"])


def parse_rfc822_date(value: str | None) -> dt.date | None:
    """`Tue, 24 Nov 2026 00:00:00 -0500` → the New York calendar date."""
    if not value:
        return None
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(NEW_YORK).date()


def parse_iso(value: str | None) -> dt.datetime | None:
    if not value or not value.strip():
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
