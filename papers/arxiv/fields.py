"""Single fields as arXiv spells them: whitespace, identifiers, dates."""

from __future__ import annotations

import datetime as dt
import email.utils
import re

from papers.arxiv.errors import IngestError
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


# "et al", "et al.", "et. al." (any case) closing a byline: a list cut short, never an author.
_ET_AL_RE = re.compile(r"(?:^|[\s,]+)et\.?\s*al\.?$", re.IGNORECASE)


def without_et_al(name: str) -> tuple[str, bool]:
    """A byline's last name without a closing "et al" (`B. Aubert et al` → `B. Aubert`; `et al`
    alone → ""), and whether it had one."""
    kept = _ET_AL_RE.sub("", name).strip()
    return kept, kept != name.strip()


# arXiv began in August 1991; an announcement more than a year ahead of today is a broken clock
# or a hostile feed. Either way nothing is written: dividends are paid by these dates.
EARLIEST_DATE = dt.date(1991, 8, 1)
LATEST_AHEAD = dt.timedelta(days=366)

_RFC822_YEAR_RE = re.compile(r"\b\d{1,2}\s+[A-Za-z]{3,}\s+(?P<year>\d+)\s+\d{1,2}:\d{2}")


def _impossible(what: str, value: str) -> IngestError:
    shown = value if len(value) <= 60 else f"{value[:60]}…"
    return IngestError(f"{what} is not a possible date: {shown!r}.")


def _check_range(moment: dt.datetime, *, what: str) -> dt.datetime:
    """Refuse dates outside arXiv's lifetime, before any time zone arithmetic can overflow."""
    latest = dt.date.today() + LATEST_AHEAD
    if not EARLIEST_DATE <= moment.date() <= latest:
        raise IngestError(
            f"{what} is out of range: {moment.date().isoformat()} is not between "
            f"{EARLIEST_DATE.isoformat()} and {latest.isoformat()}."
        )
    return moment


def parse_rfc822_date(value: str | None, *, what: str = "The feed's date") -> dt.date | None:
    """`Tue, 24 Nov 2026 00:00:00 -0500` → the New York calendar date; None if absent.

    A date that is present but impossible (31 February, year 0000, 9999) raises `IngestError`
    rather than being skipped or silently replaced by another date.
    """
    if not value or not value.strip():
        return None
    # email.utils reads a four-digit year 0000 or 0001 as 2000 or 2001: check the year as written.
    written = _RFC822_YEAR_RE.search(value)
    if written is None or len(written["year"]) not in (2, 4):
        raise _impossible(what, value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _impossible(what, value) from exc
    if len(written["year"]) == 4 and int(written["year"]) != moment.year:
        raise _impossible(what, value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return _check_range(moment, what=what).astimezone(NEW_YORK).date()


def parse_iso(value: str | None, *, what: str = "A date") -> dt.datetime | None:
    """`2026-11-24T15:00:00Z` → an aware datetime; None if absent, `IngestError` if impossible."""
    if not value or not value.strip():
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise _impossible(what, value) from exc
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    return _check_range(moment, what=what)
