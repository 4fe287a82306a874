"""Bring arXiv listings into the database.

The module has three layers, kept apart so each can be tested on its own:

- parsing (pure, no I/O): ``parse_rss``, ``parse_api``, ``parse_feed`` turn the bytes of an arXiv
  RSS 2.0 feed or an arXiv API Atom response into a ``ParsedFeed``; ``split_authors`` and
  ``announcement_date_for`` are the fiddly bits of that;
- the network: ``fetch`` (retries with bounded exponential backoff), ``enrich`` (arXiv API, by id)
  and ``backfill`` (arXiv API, by search);
- the write: ``ingest_feed`` stores one parsed feed in one transaction and records an
  ``IngestRun``; ``ingest_category`` chains fetch → parse → enrich → write for one category.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import logging
import re
import threading
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from xml.sax import SAXParseException
from zoneinfo import ZoneInfo

import feedparser
import requests
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from papers.identifiers import ARXIV_ID
from papers.models import Category, IngestRun, Listing, Paper, PaperVersion
from peerrevenue.pagecache import invalidate_pages

logger = logging.getLogger(__name__)

NEW_YORK = ZoneInfo("America/New_York")

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"

# `oai:arXiv.org:2411.01234v2`, `http://arxiv.org/abs/2411.01234v2`, `arXiv:2411.01234v2` and
# old-style ids such as `cs/0112017v1`. The id is the pattern the paper URL and the admin's
# validator use, so every id stored here has a page.
ARXIV_ID_RE = re.compile(
    r"(?:oai:arXiv\.org:|arxiv\.org/abs/|^arXiv:)"
    rf"(?P<id>{ARXIV_ID})v(?P<version>\d+)$",
    re.IGNORECASE,
)
ANNOUNCE_TYPES = frozenset(Listing.AnnounceType.values)


class IngestError(Exception):
    """A feed could not be fetched, parsed or stored. The message says why, for a person."""


class FetchError(IngestError):
    """The network failed even after retrying: worth trying again later (the Celery task does)."""


# --------------------------------------------------------------------------------------------
# Parsed data
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedAuthor:
    name: str  # raw TeX, exactly as arXiv sends it
    affiliation: str = ""


@dataclass
class ParsedEntry:
    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: list[ParsedAuthor]
    categories: list[str]  # primary first
    announce_type: str = ""  # "" when the source does not say (API): derived at write time
    announced_on: dt.date | None = None  # None: the feed's date
    listing_version: int | None = None  # the version the listing announces; None: `version`
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    license: str = ""
    submitted_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None

    @property
    def primary_category(self) -> str:
        return self.categories[0] if self.categories else ""


@dataclass
class ParsedFeed:
    format: str  # "rss" or "api"
    date: dt.date | None  # announcement date; None for an API response spanning several days
    entries: list[ParsedEntry] = field(default_factory=list)
    category: str = ""  # the category the feed is for, when the feed says so (RSS)
    total_results: int | None = None  # API only: opensearch:totalResults
    start_index: int = 0  # API only


# --------------------------------------------------------------------------------------------
# Parsing helpers
# --------------------------------------------------------------------------------------------


def _clean(text: str | None) -> str:
    """Collapse the line breaks and indentation that arXiv wraps titles and names in.

    Abstracts are not cleaned this way: their line structure marks paragraphs.
    """
    return " ".join((text or "").split())


def _split_id(text: str) -> tuple[str, int] | None:
    match = ARXIV_ID_RE.search(text.strip())
    if not match:
        return None
    return match["id"], int(match["version"])


def _split_top_level(text: str, separator: str) -> list[str]:
    """Split on `separator` only where it is outside parentheses and TeX braces."""
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char in "({":
            depth += 1
        elif char in ")}":
            depth = max(0, depth - 1)
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def _author_from(part: str) -> ParsedAuthor:
    """`Name (Affiliation, City)` → name and affiliation; several groups join with `; `."""
    name_chars: list[str] = []
    groups: list[str] = []
    current: list[str] = []
    depth = 0
    brace = 0
    for char in part:
        if char == "{" and depth == 0:
            brace += 1
        elif char == "}" and depth == 0 and brace:
            brace -= 1
        if char == "(" and brace == 0:
            if depth > 0:
                current.append(char)
            depth += 1
            continue
        if char == ")" and depth > 0 and brace == 0:
            depth -= 1
            if depth == 0:
                groups.append("".join(current))
                current = []
            else:
                current.append(char)
            continue
        (current if depth > 0 else name_chars).append(char)
    if current:  # an unclosed parenthesis: keep its text rather than drop it
        groups.append("".join(current))
    affiliation = "; ".join(_clean(group) for group in groups if _clean(group))
    return ParsedAuthor(name=_clean("".join(name_chars)), affiliation=affiliation)


def split_authors(creator: str) -> list[ParsedAuthor]:
    """Split arXiv's one-string author list into authors with affiliations.

    `Ana Pérez (Univ. of X, Madrid, Spain), Bo Li, Dağl{\\i} Ahmet (ETH Z\\"urich)`: commas split
    authors only at parenthesis (and brace) depth 0, because affiliations contain commas; an
    ` and ` before the last author (with or without an Oxford comma) splits too.
    """
    parts = [part.strip() for part in _split_top_level(_clean(creator), ",")]
    parts = [part for part in parts if part]
    if parts:
        last = parts.pop()
        if last.lower().startswith("and "):  # "A, B, and C"
            last = last[4:]
        parts.extend(piece.strip() for piece in _split_top_level(last, " and ") if piece.strip())
    return [author for author in map(_author_from, parts) if author.name]


def announcement_date_for(submitted_at: dt.datetime) -> dt.date:
    """The date of the listing that announces a submission made at `submitted_at`.

    arXiv's schedule (New York time): submissions close at 14:00 Monday to Friday; what came in
    before a deadline is announced at 20:00 that day, except that Friday's batch is announced on
    Sunday at 20:00; the feed built from an announcement is dated the next day. So a submission
    is listed on the weekday after its deadline day: Monday 10:00 → Tuesday, Thursday 13:00 →
    Friday, Friday 10:00 → Monday, Friday 15:00 → (Monday's deadline) → Tuesday.

    Holidays (when arXiv skips or shifts an announcement) are ignored: the few listings around
    them get a date a day or two early, which is good enough for a backfill.
    """
    if submitted_at.tzinfo is None:
        raise ValueError("submitted_at must be timezone-aware")
    local = submitted_at.astimezone(NEW_YORK)
    deadline_day = local.date()
    if local.weekday() < 5 and local.time() >= dt.time(14, 0):
        deadline_day += dt.timedelta(days=1)
    while deadline_day.weekday() >= 5:  # weekend submissions wait for Monday's deadline
        deadline_day += dt.timedelta(days=1)
    listing_day = deadline_day + dt.timedelta(days=1)
    while listing_day.weekday() >= 5:  # Friday's batch (announced Sunday) is dated Monday
        listing_day += dt.timedelta(days=1)
    return listing_day


def _parse_rfc822_date(value: str | None) -> dt.date | None:
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


def _parse_iso(value: str | None) -> dt.datetime | None:
    if not value or not value.strip():
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


# --------------------------------------------------------------------------------------------
# Format detection
# --------------------------------------------------------------------------------------------

_TITLE_RE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _html_title(content: bytes) -> str:
    match = _TITLE_RE.search(content[:8192])
    return _clean(match.group(1).decode("utf-8", "replace")) if match else ""


def _html_error(content: bytes) -> FetchError:
    # A FetchError, so the Celery task retries later: an HTML page where a feed should be is
    # arXiv's maintenance or rate-limit page, served even with status 200.
    title = _html_title(content)
    detail = f" (“{title}”)" if title else ""
    return FetchError(
        f"Received an HTML page{detail} instead of an arXiv feed: arXiv is probably down or "
        "rate-limiting us; try again later."
    )


def _xml_error(reason: str, line: int, column: int) -> IngestError:
    """The error for XML that expat rejected, from ElementTree's or feedparser's report."""
    if reason in ("no element found", "unclosed token"):
        return IngestError(
            f"The feed is truncated (XML ends early at line {line}, column {column}): the "
            "download was probably cut off."
        )
    return IngestError(
        f"The feed is not well-formed XML ({reason} at line {line}, column {column})."
    )


def _et_error(exc: ET.ParseError) -> IngestError:
    line, column = exc.position
    return _xml_error(str(exc).split(":")[0], line, column)


def _check_prologue(content: bytes) -> None:
    """Refuse, before any XML parsing, what is plainly not a feed: nothing, HTML, non-XML."""
    stripped = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise IngestError("The feed is empty (no content at all): the download probably failed.")
    head = stripped[:1024].lower()
    if head.startswith((b"<!doctype html", b"<html")):
        raise _html_error(content)
    if not stripped.startswith(b"<"):
        raise IngestError("Not an arXiv feed: the content is not XML.")


def _parse_xml(content: bytes) -> ET.Element:
    """Parse, strictly: a truncated download or broken XML must fail, never half-succeed.

    The standard library parser neither fetches external entities nor expands entities without
    limit (expat ≥ 2.4 guards against "billion laughs"), so it is safe on what arXiv sends.
    """
    _check_prologue(content)
    try:
        return ET.fromstring(content)
    except ET.ParseError as exc:
        raise _et_error(exc) from exc


_SNIFF_CHUNK = 4096


def _root_tag(content: bytes) -> str:
    """The root element's tag, reading only as far into the document as it takes.

    The format decides which parser reads the whole document, once: feedparser for RSS,
    ElementTree for the API's Atom. Both are strict (expat), so broken XML past this point
    still fails, with the same message.
    """
    _check_prologue(content)
    parser = ET.XMLPullParser(events=("start",))
    try:
        for offset in range(0, len(content), _SNIFF_CHUNK):
            parser.feed(content[offset : offset + _SNIFF_CHUNK])
            for _event, element in parser.read_events():
                return element.tag
        parser.close()  # no root element at all: raises "no element found"
    except ET.ParseError as exc:
        raise _et_error(exc) from exc
    raise IngestError("Not an arXiv feed: the document has no root element.")


def _kind(tag: str, content: bytes) -> str:
    if tag == "rss":
        return "rss"
    if tag == f"{ATOM}feed":
        return "api"
    local = tag.rsplit("}", 1)[-1]
    if local.lower() == "html":
        raise _html_error(content)
    raise IngestError(
        f"Not an arXiv feed: the document's root element is <{local}>, expected an RSS 2.0 <rss> "
        "or an Atom <feed>."
    )


def detect_format(content: bytes) -> str:
    """`"rss"` or `"api"`; an HTML page, garbage or broken XML raises `IngestError`."""
    return _detect(content)[0]


def _detect(content: bytes) -> tuple[str, ET.Element]:
    """The format and the whole parsed tree (a full strict parse: for the API's Atom)."""
    root = _parse_xml(content)
    return _kind(root.tag, content), root


def parse_feed(content: bytes, *, date: dt.date | None = None) -> ParsedFeed:
    """Parse an arXiv RSS feed or API response, whichever `content` is.

    `date` is the announcement date: for an API response it dates every entry; an RSS feed
    carries its own date, which must then agree (a mismatch means the wrong file or a stale feed).
    """
    # Sniffed from the root element, so that an RSS feed is parsed once, by feedparser, rather
    # than by ElementTree first and then again by feedparser.
    if _kind(_root_tag(content), content) == "api":
        return _parse_api_tree(_parse_xml(content), date=date)
    parsed = _parse_rss_checked(content)
    if date is not None:
        if parsed.date is None:
            parsed.date = date
        elif parsed.date != date:
            raise IngestError(
                f"The feed is dated {parsed.date.isoformat()}, not {date.isoformat()}: arXiv "
                "serves only the latest announcement as RSS."
            )
    return parsed


# --------------------------------------------------------------------------------------------
# RSS
# --------------------------------------------------------------------------------------------

_DESCRIPTION_RE = re.compile(
    r"^\s*arXiv:(?P<id>\S+)\s+Announce Type:\s*(?P<type>[\w-]+)\s*"
    r"(?:Abstract:\s*)?(?P<abstract>.*)$",
    re.DOTALL,
)
_CHANNEL_CATEGORY_RE = re.compile(r"^(?P<code>[a-z-]+(?:\.[A-Za-z-]+)?) updates on arXiv")


def parse_rss(content: bytes) -> ParsedFeed:
    """Parse an rss.arxiv.org RSS 2.0 feed (one category, one announcement day)."""
    if _kind(_root_tag(content), content) != "rss":
        raise IngestError("Expected an arXiv RSS feed, got an Atom document.")
    return _parse_rss_checked(content)


def _parse_rss_checked(content: bytes) -> ParsedFeed:
    # Bytes, never str: feedparser treats a str as a URL or a file name to open.
    # sanitize_html=False because titles and descriptions are TeX, not HTML: the sanitiser would
    # read `$a<b$` as the start of a tag and silently drop text. The typesetter sanitises its
    # own output, so nothing unsafe reaches a page.
    document = feedparser.parse(content, sanitize_html=False, resolve_relative_uris=False)
    problem = document.get("bozo_exception") if document.get("bozo") else None
    if isinstance(problem, SAXParseException):
        # feedparser's strict parser is expat, like ElementTree's: the same report, and the
        # same message, as when ElementTree checked the document before feedparser read it.
        raise _xml_error(problem.getMessage(), problem.getLineNumber(), problem.getColumnNumber())
    if isinstance(problem, feedparser.CharacterEncodingOverride):
        # feedparser fell back to another encoding and read on; whether the document is
        # well-formed as it declares itself only a strict parse can tell (rare: worth a 2nd one).
        _parse_xml(content)
    elif problem is not None:
        raise IngestError(f"The feed could not be parsed: {problem}")
    channel = document.feed
    date = _parse_rfc822_date(channel.get("published"))
    match = _CHANNEL_CATEGORY_RE.match(_clean(channel.get("title")))
    entries: list[ParsedEntry] = []
    seen: set[str] = set()
    for position, item in enumerate(document.entries, start=1):
        entry = _rss_entry(item, position)
        if entry.arxiv_id in seen:  # never seen in practice; keep the first, like arXiv's page
            continue
        seen.add(entry.arxiv_id)
        entries.append(entry)
    if date is None and entries:
        date = _parse_rfc822_date(document.entries[0].get("published"))
    return ParsedFeed(
        format="rss", date=date, entries=entries, category=match["code"] if match else ""
    )


def _rss_entry(item: Mapping[str, Any], position: int) -> ParsedEntry:
    description = item.get("summary") or ""
    described = _DESCRIPTION_RE.match(description)
    ids = _split_id(item.get("id") or "") or (
        _split_id(f"arXiv:{described['id']}") if described else None
    )
    if ids is None:
        raise IngestError(f"Item {position} has no arXiv identifier (guid {item.get('id')!r}).")
    arxiv_id, version = ids
    announce_type = _clean(item.get("arxiv_announce_type")) or (
        described["type"] if described else ""
    )
    if announce_type not in ANNOUNCE_TYPES:
        raise IngestError(
            f"Item {position} ({arxiv_id}) has an unknown announce type {announce_type!r}."
        )
    abstract = described["abstract"] if described else description.split("Abstract:", 1)[-1]
    return ParsedEntry(
        arxiv_id=arxiv_id,
        version=version,
        title=_clean(item.get("title")),
        abstract=abstract.strip(),
        authors=split_authors(item.get("author") or ""),
        categories=[tag["term"] for tag in item.get("tags", []) if tag.get("term")],
        announce_type=announce_type,
        license=_clean(item.get("rights")),
        doi=_clean(item.get("arxiv_doi")),
        journal_ref=_clean(item.get("arxiv_journal_reference")),
    )


# --------------------------------------------------------------------------------------------
# arXiv API (Atom)
# --------------------------------------------------------------------------------------------


def parse_api(content: bytes, *, date: dt.date | None = None) -> ParsedFeed:
    """Parse an export.arxiv.org/api/query Atom response.

    With `date`, every entry is listed on that date at its current version (new/cross for v1,
    replace/replace-cross after). Without it, each entry is dated by arXiv's schedule from its
    first submission (`announcement_date_for`) and announces version 1.
    """
    kind, root = _detect(content)
    if kind != "api":
        raise IngestError("Expected an arXiv API Atom response, got an RSS feed.")
    return _parse_api_tree(root, date=date)


def _text(element: ET.Element, path: str) -> str:
    found = element.find(path)
    return _clean(found.text) if found is not None and found.text else ""


def _raw_text(element: ET.Element, path: str) -> str:
    """Abstracts keep their line structure: an indented line starts a new paragraph."""
    found = element.find(path)
    return found.text.strip() if found is not None and found.text else ""


def _parse_api_tree(root: ET.Element, *, date: dt.date | None) -> ParsedFeed:
    def number(path: str) -> int | None:
        text = _text(root, path)
        return int(text) if text.isdigit() else None

    entries: list[ParsedEntry] = []
    for element in root.iterfind(f"{ATOM}entry"):
        raw_id = _text(element, f"{ATOM}id")
        if "/api/errors" in raw_id:
            # The API reports a bad query as a single entry titled "Error".
            reason = _text(element, f"{ATOM}summary")
            raise IngestError(f"The arXiv API refused the query: {reason}")
        ids = _split_id(raw_id)
        if ids is None:
            raise IngestError(f"An API entry has an unrecognised id {raw_id!r}.")
        arxiv_id, version = ids
        primary = element.find(f"{ARXIV}primary_category")
        categories = [
            term for cat in element.iterfind(f"{ATOM}category") if (term := cat.get("term"))
        ]
        primary_term = primary.get("term", "") if primary is not None else ""
        if primary_term:
            categories = [primary_term, *[c for c in categories if c != primary_term]]
        authors = [
            ParsedAuthor(
                name=_text(author, f"{ATOM}name"),
                affiliation="; ".join(
                    _clean(aff.text) for aff in author.iterfind(f"{ARXIV}affiliation") if aff.text
                ),
            )
            for author in element.iterfind(f"{ATOM}author")
        ]
        doi = _text(element, f"{ARXIV}doi")
        if not doi:
            for link in element.iterfind(f"{ATOM}link"):
                if link.get("title") == "doi" and link.get("href"):
                    doi = re.sub(r"^https?://(dx\.)?doi\.org/", "", link.get("href", ""))
        submitted_at = _parse_iso(_text(element, f"{ATOM}published"))
        if date is None and submitted_at is None:
            raise IngestError(f"API entry {arxiv_id} has no submission date to date it by.")
        entries.append(
            ParsedEntry(
                arxiv_id=arxiv_id,
                version=version,
                title=_text(element, f"{ATOM}title"),
                abstract=_raw_text(element, f"{ATOM}summary"),
                authors=[author for author in authors if author.name],
                categories=categories,
                announced_on=date or announcement_date_for(submitted_at),  # type: ignore[arg-type]
                listing_version=None if date is not None else 1,
                comment=_text(element, f"{ARXIV}comment"),
                journal_ref=_text(element, f"{ARXIV}journal_ref"),
                doi=doi,
                submitted_at=submitted_at,
                updated_at=_parse_iso(_text(element, f"{ATOM}updated")),
            )
        )
    dates = {entry.announced_on for entry in entries}
    feed_date = date if date is not None else (dates.pop() if len(dates) == 1 else None)
    return ParsedFeed(
        format="api",
        date=feed_date,
        entries=entries,
        total_results=number(f"{OPENSEARCH}totalResults"),
        start_index=number(f"{OPENSEARCH}startIndex") or 0,
    )


def is_empty_page(parsed: ParsedFeed) -> bool:
    """The API's known glitch: a page with no entries although more results exist."""
    return (
        parsed.format == "api"
        and not parsed.entries
        and parsed.total_results is not None
        and parsed.total_results > parsed.start_index
    )


# --------------------------------------------------------------------------------------------
# Network
# --------------------------------------------------------------------------------------------


def _setting(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def _sleep(seconds: float) -> None:
    """Indirection so tests can observe (and skip) the waits."""
    time.sleep(seconds)


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return max(0.0, (moment - timezone.now()).total_seconds())


_RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,  # a body cut off mid-transfer
    requests.exceptions.ContentDecodingError,
)


def fetch(
    url: str,
    *,
    params: Mapping[str, str] | None = None,
    retries: int | None = None,
    backoff: float | None = None,
    max_delay: float | None = None,
) -> bytes:
    """GET `url` and return the body, retrying what is worth retrying.

    Connection errors, timeouts, HTTP 429 and 5xx are retried up to `retries` times, waiting
    `backoff · 2^attempt` seconds (capped at `max_delay`), or what a 429/503 `Retry-After` asks
    for (also capped: a misbehaving server must not park the worker for hours). Other 4xx fail
    at once. Defaults come from settings (ARXIV_HTTP_RETRIES, ARXIV_HTTP_BACKOFF_SECONDS,
    ARXIV_HTTP_MAX_DELAY_SECONDS) so tests can make them tiny.
    """
    retries = int(_setting("ARXIV_HTTP_RETRIES", 4) if retries is None else retries)
    backoff = _setting("ARXIV_HTTP_BACKOFF_SECONDS", 2.0) if backoff is None else backoff
    max_delay = _setting("ARXIV_HTTP_MAX_DELAY_SECONDS", 120.0) if max_delay is None else max_delay
    headers = {"User-Agent": settings.INGEST_USER_AGENT}
    timeout = settings.ARXIV_HTTP_TIMEOUT_SECONDS
    problem = ""
    for attempt in range(retries + 1):
        wait = min(max_delay, backoff * 2**attempt)
        try:
            response = requests.get(url, params=params, headers=headers, timeout=timeout)
        except _RETRYABLE_ERRORS as exc:
            problem = f"{type(exc).__name__}: {exc}"
        except requests.RequestException as exc:  # a bad URL and the like: retrying won't help
            raise IngestError(f"Could not fetch {url}: {exc}") from exc
        else:
            status = response.status_code
            if status < 400:
                return response.content
            if status != 429 and status < 500:
                raise IngestError(f"Could not fetch {url}: HTTP {status} {response.reason}")
            problem = f"HTTP {status} {response.reason}"
            asked = _retry_after(response)
            if asked is not None:
                wait = min(max_delay, asked)
        if attempt < retries:
            logger.warning(
                "Fetching %s failed (%s); retry %d of %d in %.1f s",
                url,
                problem,
                attempt + 1,
                retries,
                wait,
            )
            _sleep(wait)
    raise FetchError(f"Could not fetch {url} after {retries + 1} attempts: {problem}")


class _Throttle:
    """At most one arXiv API request per ARXIV_API_DELAY_SECONDS in this process.

    arXiv's API terms ask for one request every three seconds; the ingest queue runs at
    concurrency 1, so a per-process clock is enough.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: float | None = None

    def wait(self) -> None:
        with self._lock:
            delay = float(settings.ARXIV_API_DELAY_SECONDS)
            if self._last is not None:
                remaining = self._last + delay - time.monotonic()
                if remaining > 0:
                    _sleep(remaining)
            self._last = time.monotonic()


_api_throttle = _Throttle()


def fetch_api(params: Mapping[str, str], *, date: dt.date | None = None) -> ParsedFeed:
    """One throttled API request, parsed; the API's empty-page glitch is retried like a 503."""
    retries = int(_setting("ARXIV_HTTP_RETRIES", 4))
    backoff = _setting("ARXIV_HTTP_BACKOFF_SECONDS", 2.0)
    max_delay = _setting("ARXIV_HTTP_MAX_DELAY_SECONDS", 120.0)
    for attempt in range(retries + 1):
        _api_throttle.wait()
        parsed = parse_api(fetch(settings.ARXIV_API_URL, params=params), date=date)
        if not is_empty_page(parsed):
            return parsed
        if attempt < retries:
            logger.warning(
                "arXiv API returned an empty page (%s results expected); retry %d of %d",
                parsed.total_results,
                attempt + 1,
                retries,
            )
            _sleep(min(max_delay, backoff * 2**attempt))
    raise FetchError(
        f"The arXiv API kept returning empty pages ({retries + 1} attempts) for {dict(params)}."
    )


# --------------------------------------------------------------------------------------------
# Enrichment
# --------------------------------------------------------------------------------------------


def enrich(parsed: ParsedFeed, *, batch_size: int = 100) -> int:
    """Complete RSS entries from the arXiv API, by id, in batches; returns how many matched.

    The RSS feed lacks the true primary category, comments, affiliations and dates; the API has
    them. We ask the API ourselves rather than through `arxiv.Client`, which has no request
    timeout, ignores Retry-After and does not retry an empty first page; one throttled request
    per batch of ≤100 ids.
    """
    enriched = 0
    by_id = {entry.arxiv_id: index for index, entry in enumerate(parsed.entries)}
    ids = list(by_id)
    for start in range(0, len(ids), batch_size):
        batch = ids[start : start + batch_size]
        params = {"id_list": ",".join(batch), "start": "0", "max_results": str(len(batch))}
        for found in fetch_api(params).entries:
            index = by_id.get(found.arxiv_id)
            if index is None:
                continue
            parsed.entries[index] = _merge(parsed.entries[index], found)
            enriched += 1
    return enriched


def _merge(entry: ParsedEntry, found: ParsedEntry) -> ParsedEntry:
    """The feed's entry, completed with what the API knows (the feed wins on the text)."""
    authors = entry.authors
    if len(found.authors) == len(entry.authors):
        # The API spells names in Unicode where the feed may have TeX, so match by position.
        authors = [
            replace(mine, affiliation=mine.affiliation or theirs.affiliation)
            for mine, theirs in zip(entry.authors, found.authors, strict=True)
        ]
    same_version = found.version == entry.version
    categories = entry.categories
    if found.categories:
        # The API names the primary; keep the feed's other categories after the API's.
        extra = [code for code in entry.categories if code not in found.categories]
        categories = [*found.categories, *extra]
    return replace(
        entry,
        authors=authors,
        categories=categories,
        comment=entry.comment or (found.comment if same_version else ""),
        journal_ref=entry.journal_ref or found.journal_ref,
        doi=entry.doi or found.doi,
        submitted_at=entry.submitted_at or found.submitted_at,
        updated_at=entry.updated_at or (found.updated_at if same_version else None),
    )


def enrich_quietly(parsed: ParsedFeed) -> None:
    """Enrichment is a nicety: the listing works without it, so a failure only warns."""
    if not parsed.entries:
        return
    try:
        count = enrich(parsed)
    except Exception as exc:  # noqa: BLE001 - any failure here must not cost the day's listing
        logger.warning("arXiv API enrichment failed, ingesting the feed as it is: %s", exc)
    else:
        logger.info("Enriched %d of %d entries from the arXiv API", count, len(parsed.entries))


# --------------------------------------------------------------------------------------------
# Typesetting
# --------------------------------------------------------------------------------------------

TYPESET_FIELDS = ("title_html", "abstract_html", "authors", "authors_text", "typesetter_version")


def typeset_paper(paper: Paper) -> None:
    """Render the paper's TeX (title, abstract, author names) in memory; the caller saves.

    Shared by the ingest and the `retypeset` command, so both render the same way.
    """
    from papers import typesetting  # imported late: typesetting pulls in the MathML machinery

    # paragraphs=False: a title is one line even when arXiv wraps it.
    paper.title_html = typesetting.tex_to_html(paper.title, paragraphs=False)
    paper.abstract_html = typesetting.tex_to_html(paper.abstract)
    paper.authors = [
        {
            "name": author.get("name", ""),
            "name_text": typesetting.tex_to_text(author.get("name", "")),
            "affiliation": author.get("affiliation", ""),
        }
        for author in paper.authors
    ]
    paper.authors_text = ", ".join(author["name_text"] for author in paper.authors)
    paper.typesetter_version = typesetting.TYPESETTER_VERSION


def _typesetter_version() -> int:
    from papers import typesetting

    return int(typesetting.TYPESETTER_VERSION)


# --------------------------------------------------------------------------------------------
# The write
# --------------------------------------------------------------------------------------------

# The fields an ingest may change; anything else (hidden, created_at) belongs to people.
SOURCE_FIELDS = (
    "version",
    "title",
    "abstract",
    "authors",
    "primary_category",
    "categories",
    "comment",
    "journal_ref",
    "doi",
    "license",
    "submitted_at",
    "updated_at",
)
WRITTEN_FIELDS = (*SOURCE_FIELDS, *(name for name in TYPESET_FIELDS if name not in SOURCE_FIELDS))


@dataclass
class _Counts:
    papers_created: int = 0
    papers_updated: int = 0
    listings_created: int = 0


def _authors_json(entry: ParsedEntry, previous: list[dict[str, str]]) -> list[dict[str, str]]:
    """Author dicts for the entry, keeping affiliations we knew when the feed omits them."""
    old = previous if [a.get("name") for a in previous] == [a.name for a in entry.authors] else []
    return [
        {
            "name": author.name,
            "name_text": old[i].get("name_text", "") if old else "",
            "affiliation": author.affiliation or (old[i].get("affiliation", "") if old else ""),
        }
        for i, author in enumerate(entry.authors)
    ]


def _apply(paper: Paper, entry: ParsedEntry) -> None:
    """Bring a paper up to date with an entry of the same or a newer version, in memory.

    Empty values in the entry never erase what we know (an unenriched re-run must not undo an
    enriched one); the text follows the entry, which is at least as new as what we have.
    """
    newer = entry.version > paper.version
    paper.version = entry.version
    paper.title = entry.title or paper.title
    # The feed and the API wrap the same abstract differently; for the same version only a real
    # change of words counts, so alternating sources cannot flip the row back and forth.
    if entry.abstract and (newer or _clean(entry.abstract) != _clean(paper.abstract)):
        paper.abstract = entry.abstract
    if entry.authors:
        paper.authors = _authors_json(entry, paper.authors)
    if entry.categories:
        paper.categories = list(entry.categories)
        paper.primary_category = entry.primary_category
    for name in ("comment", "journal_ref", "doi", "license", "submitted_at", "updated_at"):
        value = getattr(entry, name)
        if value:
            setattr(paper, name, value)
    paper.doi = paper.doi[:200]
    paper.license = paper.license[:300]


def _snapshot(paper: Paper) -> dict[str, Any]:
    return {name: getattr(paper, name) for name in WRITTEN_FIELDS}


def _announce_type(entry: ParsedEntry, category: Category) -> str:
    if entry.announce_type:
        return entry.announce_type
    own = entry.primary_category == category.code
    first = (entry.listing_version or entry.version) == 1
    if first:
        return Listing.AnnounceType.NEW if own else Listing.AnnounceType.CROSS
    return Listing.AnnounceType.REPLACE if own else Listing.AnnounceType.REPLACE_CROSS


@dataclass
class _Plan:
    """What one feed does to the database, worked out in memory before anything is written.

    Keyed by arXiv id rather than primary key: new papers have no key until they are inserted.
    """

    papers: dict[str, Paper] = field(default_factory=dict)  # every paper the feed touches
    new: dict[str, Paper] = field(default_factory=dict)  # to insert, in feed order
    changed: dict[str, Paper] = field(default_factory=dict)  # already stored, to update
    changed_fields: set[str] = field(default_factory=set)
    # (arxiv id, number) → (title, abstract); inserted unless the version is already stored.
    versions: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    # (arxiv id, date) → (announce type, version), for the listings not already stored.
    listings: dict[tuple[str, dt.date], tuple[str, int]] = field(default_factory=dict)
    counts: _Counts = field(default_factory=_Counts)
    dates: set[dt.date] = field(default_factory=set)


def _plan(*, category: Category, parsed: ParsedFeed, typesetter_version: int) -> _Plan:
    """Lock the feed's stored papers and work out every change, in memory, in feed order.

    A constant number of queries whatever the feed's size: the papers, their versions and this
    category's listings of them are each read in one query.
    """
    plan = _Plan()
    dates = {entry.announced_on or parsed.date for entry in parsed.entries}
    if None in dates:
        raise IngestError(
            "The feed has no announcement date (no pubDate): pass the date explicitly."
        )
    ids = sorted({entry.arxiv_id for entry in parsed.entries})
    # Lock the papers we are about to change, in a fixed order (by arxiv_id) so that two feeds
    # sharing cross-listed papers cannot deadlock on each other.
    stored = {
        paper.arxiv_id: paper
        for paper in Paper.objects.select_for_update().filter(arxiv_id__in=ids).order_by("arxiv_id")
    }
    plan.papers.update(stored)
    known_versions: set[tuple[str, int]] = set()
    listed: set[tuple[str, dt.date]] = set()
    if stored:
        arxiv_ids = {paper.pk: paper.arxiv_id for paper in stored.values()}
        known_versions = {
            (arxiv_ids[paper_id], number)
            for paper_id, number in PaperVersion.objects.filter(paper_id__in=arxiv_ids).values_list(
                "paper_id", "number"
            )
        }
        listed = {
            (arxiv_ids[paper_id], date)
            for paper_id, date in Listing.objects.filter(
                category=category, paper_id__in=arxiv_ids, date__in=dates
            ).values_list("paper_id", "date")
        }

    for entry in parsed.entries:
        listing_date: dt.date = entry.announced_on or parsed.date  # type: ignore[assignment]
        plan.dates.add(listing_date)
        arxiv_id = entry.arxiv_id
        paper = plan.papers.get(arxiv_id)
        if paper is None:
            paper = Paper(arxiv_id=arxiv_id)
            _apply(paper, entry)
            typeset_paper(paper)
            plan.papers[arxiv_id] = plan.new[arxiv_id] = paper
        elif entry.version >= paper.version:
            if entry.version > paper.version and (arxiv_id, paper.version) not in known_versions:
                # Keep the text being replaced, even for a paper whose versions we never recorded.
                plan.versions[(arxiv_id, paper.version)] = (paper.title, paper.abstract)
                known_versions.add((arxiv_id, paper.version))
            before = _snapshot(paper)
            _apply(paper, entry)
            source_changed = any(
                before[name] != getattr(paper, name) for name in ("title", "abstract", "authors")
            )
            if source_changed or paper.typesetter_version < typesetter_version:
                typeset_paper(paper)
            changed = [name for name in WRITTEN_FIELDS if before[name] != getattr(paper, name)]
            if changed and arxiv_id not in plan.new:
                plan.changed[arxiv_id] = paper
                plan.changed_fields.update(changed)
                plan.counts.papers_updated += 1
        # An older version than the current one (a backfill, an old feed) changes nothing on the
        # paper, but its text is still one of the versions we have seen.

        if (arxiv_id, entry.version) not in known_versions:
            plan.versions[(arxiv_id, entry.version)] = (
                entry.title or paper.title,
                entry.abstract,
            )
            known_versions.add((arxiv_id, entry.version))

        if (arxiv_id, listing_date) not in listed:
            plan.listings[(arxiv_id, listing_date)] = (
                _announce_type(entry, category),
                entry.listing_version or entry.version,
            )
            listed.add((arxiv_id, listing_date))
    plan.counts.papers_created = len(plan.new)
    plan.counts.listings_created = len(plan.listings)
    return plan


def _insert_papers(papers: list[Paper]) -> None:
    """Insert new papers, in the given order, and set their primary keys.

    On Postgres through COPY: a day's papers are megabytes of TeX and MathML, full of the
    backslashes and quotes that a bulk INSERT has psycopg escape in Python and the server parse
    back out of one huge statement; COPY streams the rows instead (about 3x faster on 2,000
    papers). The values are prepared by the fields themselves, exactly as for an INSERT
    (auto_now and JSON included); the keys are then read back in one query. A unique violation
    (the cross-list race) surfaces as an IntegrityError, as an INSERT's would. Elsewhere
    (SQLite) ``bulk_create``.
    """
    if connection.vendor != "postgresql":
        Paper.objects.bulk_create(papers)
        return
    quote = connection.ops.quote_name
    fields = [field for field in Paper._meta.concrete_fields if not field.primary_key]
    sql = (
        f"COPY {quote(Paper._meta.db_table)} "
        f"({', '.join(quote(field.column) for field in fields)}) FROM STDIN"
    )
    started = time.monotonic()
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(sql) as copy,
    ):
        for paper in papers:
            copy.write_row(
                [
                    field.get_db_prep_save(field.pre_save(paper, True), connection)
                    for field in fields
                ]
            )
    if connection.queries_logged:
        # COPY bypasses Django's cursor wrapper: log it like any query, so that DEBUG pages and
        # the tests' query budgets see it.
        connection.queries_log.append(
            {"sql": f"{sql} -- {len(papers)} rows", "time": f"{time.monotonic() - started:.3f}"}
        )
    keys = dict(
        Paper.objects.filter(arxiv_id__in=[paper.arxiv_id for paper in papers]).values_list(
            "arxiv_id", "pk"
        )
    )
    for paper in papers:
        paper.pk = keys[paper.arxiv_id]
        paper._state.adding = False
        paper._state.db = connection.alias


# A lost race on a new paper costs a re-plan; more than a couple in a row means something else.
_PLAN_ATTEMPTS = 3


def _write(*, category: Category, parsed: ParsedFeed) -> tuple[_Counts, set[dt.date]]:
    """Store the feed with a constant number of queries: plan in memory, then write in bulk."""
    if not parsed.entries:
        return _Counts(), set()
    typesetter_version = _typesetter_version()
    for attempt in range(1, _PLAN_ATTEMPTS + 1):
        plan = _plan(category=category, parsed=parsed, typesetter_version=typesetter_version)
        if not plan.new:
            break
        try:
            # One savepoint for the whole feed (not one per paper): if another category's
            # ingest has just created one of our new papers (a cross-list), the insert fails
            # without poisoning the feed's transaction, and the next plan locks that paper and
            # updates it like any stored one. Inserted in arxiv_id order, like the locks: two
            # feeds inserting the same new papers then queue on the first one they share
            # instead of each holding one the other needs.
            with transaction.atomic():
                _insert_papers(sorted(plan.new.values(), key=lambda p: p.arxiv_id))
            break
        except IntegrityError:
            raced = Paper.objects.filter(arxiv_id__in=list(plan.new)).exists()
            if attempt == _PLAN_ATTEMPTS or not raced:
                raise

    if plan.changed:
        # Only the fields that changed (in any of the papers), like save(update_fields=...):
        # people's fields (hidden) are never written, and a re-run of the same feed, which
        # changes nothing, writes nothing. bulk_update bypasses auto_now: set modified_at here.
        now = timezone.now()
        for paper in plan.changed.values():
            paper.modified_at = now
        fields = [name for name in WRITTEN_FIELDS if name in plan.changed_fields]
        Paper.objects.bulk_update(plan.changed.values(), [*fields, "modified_at"])
    if plan.versions:
        # ignore_conflicts: a version stored meanwhile (a concurrent ingest) is kept as it is,
        # exactly like get_or_create would.
        PaperVersion.objects.bulk_create(
            [
                PaperVersion(
                    paper_id=plan.papers[arxiv_id].pk, number=number, title=title, abstract=abstract
                )
                for (arxiv_id, number), (title, abstract) in plan.versions.items()
            ],
            ignore_conflicts=True,
        )
    if plan.listings:
        # The unique constraint (category, paper, date) keeps a re-run idempotent even against
        # a concurrent ingest of the same category (which the ingest lock normally prevents).
        Listing.objects.bulk_create(
            [
                Listing(
                    category=category,
                    paper_id=plan.papers[arxiv_id].pk,
                    date=date,
                    announce_type=announce_type,
                    version=version,
                )
                for (arxiv_id, date), (announce_type, version) in plan.listings.items()
            ],
            ignore_conflicts=True,
        )
    if plan.new or plan.changed or plan.listings:
        # Bulk writes send no post_save signals: invalidate the cached pages ourselves (once,
        # after commit) as saving a Paper or Listing one by one would.
        invalidate_pages()
    return plan.counts, plan.dates


def _after_ingest(category_id: int, date: dt.date) -> None:
    """Pay the day's dividends, then mail the digests (which report the terms' moves)."""
    # Imported when called: these are other apps, and ingest must not depend on them to load.
    from accounts.tasks import send_digests
    from market.tasks import pay_dividends

    pay_dividends.delay(category_id, date.isoformat())
    send_digests.delay(date.isoformat())


def _record_failure(run: IngestRun, exc: BaseException) -> None:
    run.status = IngestRun.Status.FAILED
    run.error = str(exc) or type(exc).__name__
    run.finished_at = timezone.now()
    run.items = run.papers_created = run.papers_updated = run.listings_created = 0
    run.save()


def ingest_feed(
    *,
    category: Category,
    parsed: ParsedFeed,
    source: str,
    run: IngestRun | None = None,
) -> IngestRun:
    """Store one parsed feed: papers, versions, listings, in ONE transaction.

    Returns the succeeded `IngestRun`. On any failure nothing of the feed is written, the run
    (created before the transaction, so it survives the rollback) is marked failed with the
    reason, and `IngestError` is raised. Re-running the same feed creates and changes nothing.
    After the commit, the day's dividends are paid and the daily digests go out.
    """
    if run is None:
        run = IngestRun.objects.create(category=category, source=source[:500], date=parsed.date)
    try:
        if parsed.category and parsed.category != category.code:
            raise IngestError(f"The feed is for {parsed.category}, not {category.code}.")
        with transaction.atomic():
            counts, dates = _write(category=category, parsed=parsed)
            run.date = parsed.date or (min(dates) if len(dates) == 1 else run.date)
            run.items = len(parsed.entries)
            run.papers_created = counts.papers_created
            run.papers_updated = counts.papers_updated
            run.listings_created = counts.listings_created
            run.status = IngestRun.Status.SUCCEEDED
            run.error = ""
            run.finished_at = timezone.now()
            # Saved inside the transaction: the data and "succeeded" commit together or not at all.
            run.save()
            for day in sorted(dates):
                # robust: the listing is committed by then; a dividend failure is logged, not
                # reported as a failed ingest (the payout is idempotent and can be re-run).
                transaction.on_commit(lambda day=day: _after_ingest(category.pk, day), robust=True)
    except Exception as exc:
        if isinstance(exc, IngestError):
            _record_failure(run, exc)
            raise
        error = IngestError(f"Storing the feed failed: {exc}")
        _record_failure(run, error)
        raise error from exc
    logger.info(
        "Ingested %s %s: %d items, %d papers created, %d updated, %d listings created",
        category.code,
        run.date,
        run.items,
        run.papers_created,
        run.papers_updated,
        run.listings_created,
    )
    return run


def ingest_category(
    *,
    category: Category,
    file: str | Path | None = None,
    date: dt.date | None = None,
    enrich: bool = True,
) -> IngestRun:
    """Fetch (or read `file`), parse, enrich and store a category's feed; returns the run.

    Every failure (network, parse, write) leaves a failed `IngestRun` and raises `IngestError`
    (`FetchError` when retrying later may help).
    """
    if file is not None:
        source = str(file)
    else:
        source = settings.ARXIV_RSS_URL.format(category=category.code)
    run = IngestRun.objects.create(category=category, source=source[:500], date=date)
    try:
        if file is not None:
            try:
                content = Path(file).read_bytes()
            except OSError as exc:
                raise IngestError(f"Cannot read {file}: {exc.strerror or exc}") from exc
        else:
            content = fetch(source)
        parsed = parse_feed(content, date=date)
    except Exception as exc:
        _record_failure(run, exc)
        raise
    if enrich and settings.ARXIV_ENRICH:
        enrich_quietly(parsed)
    return ingest_feed(category=category, parsed=parsed, source=source, run=run)


# --------------------------------------------------------------------------------------------
# Backfill
# --------------------------------------------------------------------------------------------


def backfill(
    *,
    category: Category,
    since: dt.date,
    until: dt.date | None = None,
    page_size: int = 100,
    on_page: Callable[[int, int], None] | None = None,
) -> list[IngestRun]:
    """Store a category's past listings from the arXiv API, one transaction per listing day.

    Pages through `cat:<code>` submissions from `since` to `until` (inclusive submission dates)
    in ascending submission order, dating each by `announcement_date_for`. Because that order
    makes announcement dates non-decreasing, a day is complete (and written) as soon as a later
    day shows up. `on_page(done, total)` reports progress. Re-running is harmless.
    """
    until = until or timezone.now().date()
    if until < since:
        raise IngestError(f"--until ({until}) is before --since ({since}).")
    query = f"cat:{category.code} AND submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d}2359]"
    runs: list[IngestRun] = []
    pending: dict[dt.date, list[ParsedEntry]] = {}

    def flush(days: list[dt.date]) -> None:
        for day in sorted(days):
            parsed = ParsedFeed(format="api", date=day, entries=pending.pop(day))
            source = f"{settings.ARXIV_API_URL}?search_query={query} (backfill {day})"
            runs.append(ingest_feed(category=category, parsed=parsed, source=source))

    start = 0
    total: int | None = None
    while total is None or start < total:
        params = {
            "search_query": query,
            "start": str(start),
            "max_results": str(page_size),
            "sortBy": "submittedDate",
            "sortOrder": "ascending",
        }
        try:
            page = fetch_api(params)
        except IngestError as exc:
            failed = IngestRun.objects.create(
                category=category, source=f"{settings.ARXIV_API_URL} (backfill from {since})"
            )
            _record_failure(failed, exc)
            raise
        total = page.total_results if page.total_results is not None else len(page.entries)
        if not page.entries:
            break
        for entry in page.entries:
            pending.setdefault(entry.announced_on, []).append(entry)  # type: ignore[arg-type]
        start += len(page.entries)
        latest = max(pending)
        flush([day for day in pending if day < latest])
        if on_page:
            on_page(min(start, total), total)
    flush(list(pending))
    return runs


# --------------------------------------------------------------------------------------------
# One ingest at a time per category
# --------------------------------------------------------------------------------------------

_LOCK_NAMESPACE = 0x50524947  # "PRIG": keeps our advisory locks apart from anyone else's


@contextmanager
def ingest_lock(category_id: int) -> Iterator[bool]:
    """Yield True if this process may ingest the category now, False if another one is.

    On Postgres a session-level advisory lock (not the `_xact_` kind: an ingest commits its own
    transactions and must not hold one open across minutes of network I/O); it dies with the
    connection if the worker does, so a crash cannot leave it stuck. Elsewhere (SQLite, the
    zero-setup local run) a cache entry with an expiry serves the same purpose.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_LOCK_NAMESPACE, category_id])
            acquired = bool(cursor.fetchone()[0])
        try:
            yield acquired
        finally:
            if acquired:
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT pg_advisory_unlock(%s, %s)", [_LOCK_NAMESPACE, category_id]
                    )
        return
    key = f"papers:ingest-lock:{category_id}"
    token = uuid.uuid4().hex
    acquired = cache.add(key, token, timeout=60 * 60)
    try:
        yield acquired
    finally:
        if acquired and cache.get(key) == token:
            cache.delete(key)
