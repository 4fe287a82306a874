"""Whichever arXiv document it is: a file, a download, an RSS feed or an API response."""

from __future__ import annotations

import datetime as dt

from papers.arxiv.api import parse_api
from papers.arxiv.errors import IngestError
from papers.arxiv.records import ParsedFeed
from papers.arxiv.rss import parse_rss
from papers.arxiv.sniffing import detect_format


def parse_feed(content: bytes, *, date: dt.date | None = None) -> ParsedFeed:
    """Parse an arXiv RSS feed or API response, whichever `content` is.

    `date` is the announcement date: for an API response it dates every entry; an RSS feed
    carries its own date, which must then agree (a mismatch means the wrong file or a stale feed).
    """
    if detect_format(content) == "api":
        return parse_api(content, date=date)
    parsed = parse_rss(content)
    if date is not None:
        if parsed.date is None:
            parsed.date = date
        elif parsed.date != date:
            raise IngestError(
                f"The feed is dated {parsed.date.isoformat()}, not {date.isoformat()}: arXiv "
                "serves only the latest announcement as RSS."
            )
    return parsed
