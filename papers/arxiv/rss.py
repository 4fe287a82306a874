"""arXiv's RSS 2.0 feeds (rss.arxiv.org): one category, one announcement day."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any
from xml.sax import SAXParseException

import feedparser

from papers.arxiv.errors import IngestError
from papers.arxiv.fields import clean, parse_rfc822_date, split_id, without_et_al
from papers.arxiv.records import MAX_AUTHORS, ParsedAuthor, ParsedFeed, ParsedRecord
from papers.arxiv.sniffing import detect_format, parse_xml, quoted, xml_error
from papers.models import Listing

logger = logging.getLogger(__name__)

ANNOUNCE_TYPES = frozenset(Listing.AnnounceType.values)

_DESCRIPTION_RE = re.compile(
    r"^\s*arXiv:(?P<id>\S+)\s+Announce Type:\s*(?P<type>[\w-]+)\s*"
    r"(?:Abstract:\s*)?(?P<abstract>.*)$",
    re.DOTALL,
)
_CHANNEL_CATEGORY_RE = re.compile(r"^(?P<code>[a-z-]+(?:\.[A-Za-z-]+)?) updates on arXiv")
# arXiv answers a query it cannot serve (a bad archive name) with a well-formed, dated, item-less
# feed, exactly like an empty day's but for its title ("Feed error for query: <url>") and its
# description (the reason): only the channel's own words tell the two apart.
_ERROR_TITLE_RE = re.compile(r"^\s*feed error\b", re.IGNORECASE)
_LISTING_TITLE_RE = re.compile(r"\bupdates on arXiv", re.IGNORECASE)


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


def _name_and_groups(part: str) -> tuple[str, list[str]]:
    """`Name (Affiliation, City) (Other)` → the name and each parenthesised group, cleaned."""
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
    return clean("".join(name_chars)), [clean(group) for group in groups if clean(group)]


# A numbered affiliation legend, `(1) University of Leicester, (2) Penn State`: a label of a
# few digits or one letter in parentheses, opening the group and each entry after it.
_LABEL = r"\(\s*(\d{1,3}|[a-zA-Z])\s*\)"
_LEGEND_RE = re.compile(rf"^{_LABEL}\s*\S")
_LEGEND_ENTRY_RE = re.compile(rf"(?:^|[,;]?\s+){_LABEL}\s*")
# The same with bare numbers, `1 Dip. Astro., Bologna; 2 INAF, Teramo` (0704.0139).
_BARE_LEGEND_RE = re.compile(r"^1\s+\D")
_BARE_ENTRY_RE = re.compile(r"(?:^|[,;]\s+)(\d{1,3})\s+(?=\D)")
# An author's own reference to it, `1` or `5,6` or `1 and 2`.
_LABEL_SEPARATOR = r"\s*(?:[,;&]|\band\b)\s*"
_LABELS_RE = re.compile(
    rf"^\s*(?:\d{{1,3}}|[a-zA-Z])(?:{_LABEL_SEPARATOR}(?:\d{{1,3}}|[a-zA-Z]))*\s*$"
)


def _labels(group: str) -> list[str]:
    """The labels a group refers to (`5,6` → 5 and 6), or [] if it is not only labels."""
    return re.split(_LABEL_SEPARATOR, group.strip()) if _LABELS_RE.match(group) else []


def _legend(group: str, *, referenced: set[str]) -> dict[str, str]:
    """The legend's label → affiliation, or {} when the group is an ordinary affiliation.

    Bare numbers are an address as often as a label, so they make a legend only when they
    run 1, 2, 3… and the authors' own numbers (``referenced``) are all among them.
    """
    if _LEGEND_RE.match(group):
        pieces = _LEGEND_ENTRY_RE.split(group)
    elif _BARE_LEGEND_RE.match(group):
        pieces = _BARE_ENTRY_RE.split(group)
        labels = pieces[1::2]
        if labels != [str(n) for n in range(1, len(labels) + 1)] or len(labels) < 2:
            return {}
        if not referenced or not referenced <= set(labels):
            return {}
    else:
        return {}
    # split() gives [text before the first label, label, its text, label, its text, ...].
    entries = {
        label: text.strip().rstrip(",;").strip()
        for label, text in zip(pieces[1::2], pieces[2::2], strict=True)
    }
    return {label: text for label, text in entries.items() if text}


def _resolved(groups: list[str], legend: dict[str, str]) -> list[str]:
    """An author's groups with each reference to the legend (`5,6`) replaced by its entries."""
    resolved: list[str] = []
    for group in groups:
        labels = _labels(group)
        if labels and all(label in legend for label in labels):
            resolved.extend(legend[label] for label in labels)
        else:
            resolved.append(group)
    return list(dict.fromkeys(resolved))


def split_authors(creator: str) -> list[ParsedAuthor]:
    """The authors of arXiv's one-string author list (``read_byline``)."""
    return read_byline(creator)[0]


def read_byline(creator: str) -> tuple[list[ParsedAuthor], bool]:
    """Split arXiv's one-string author list into authors with affiliations, and say whether
    it ends in "et al" (arXiv lists no more authors than these).

    `Ana Pérez (Univ. of X, Madrid, Spain), Bo Li, Dağl{\\i} Ahmet (ETH Z\\"urich)`: commas split
    authors only at parenthesis (and brace) depth 0, because affiliations contain commas; an
    ` and ` at depth 0 splits too, before the last author (with or without an Oxford comma) or
    between two who share the affiliation that follows them (`A, B and C (Uni X), D`).

    A numbered legend closing the list, `A (1), B (1,2) ((1) Leicester, (2) Brera)`, is not the
    last author's affiliation: each author's numbers are resolved to its entries. A closing
    `et al` is dropped, whether it stands alone or ends the last name.
    """
    parts: list[str] = []
    for part in _split_top_level(clean(creator), ","):
        part = part.strip()
        if part.lower().startswith("and "):  # "A, B, and C"
            part = part[4:]
        # Not only before the last author: a pair sharing an affiliation can stand anywhere
        # ("A, B and C (Uni X), D": 1511.01883), and arXiv's own listing splits it there too.
        parts.extend(piece.strip() for piece in _split_top_level(part, " and ") if piece.strip())
    authors = [_name_and_groups(part) for part in parts]
    legend: dict[str, str] = {}
    if authors and authors[-1][1]:
        name, groups = authors[-1]
        referenced = {
            label
            for _, others in [*authors[:-1], (name, groups[:-1])]
            for group in others
            for label in _labels(group)
        }
        if legend := _legend(groups[-1], referenced=referenced):
            authors[-1] = (name, groups[:-1])
    cut_short = False
    if authors:
        name, groups = authors[-1]
        name, cut_short = without_et_al(name)
        authors[-1] = (name, groups)
    parsed = [
        ParsedAuthor(name=name, affiliation="; ".join(_resolved(groups, legend)))
        for name, groups in authors
        if name
    ]
    return parsed, cut_short and bool(parsed)


def _bounded_creator(creator: str, arxiv_id: str) -> str:
    """The author string, cut before it is split character by character: 100 characters an
    author (names with affiliations) is room for MAX_AUTHORS of them."""
    limit = MAX_AUTHORS * 100
    if len(creator) <= limit:
        return creator
    logger.warning(
        "arXiv entry %s: author list cut from %d to %d characters", arxiv_id, len(creator), limit
    )
    return creator[:limit]


def parse_rss(content: bytes) -> ParsedFeed:
    """Parse an rss.arxiv.org RSS 2.0 feed (one category, one announcement day)."""
    if detect_format(content) != "rss":
        raise IngestError("Expected an arXiv RSS feed, got an Atom document.")
    # Bytes, never str: feedparser treats a str as a URL or a file name to open.
    # sanitize_html=False because titles and descriptions are TeX, not HTML: the sanitiser would
    # read `$a<b$` as the start of a tag and silently drop text. The typesetter sanitises its
    # own output, so nothing unsafe reaches a page.
    document = feedparser.parse(content, sanitize_html=False, resolve_relative_uris=False)
    problem = document.get("bozo_exception") if document.get("bozo") else None
    if isinstance(problem, SAXParseException):
        # feedparser's strict parser is expat, like ElementTree's: the same report, and the
        # same message, as when ElementTree checked the document before feedparser read it.
        raise xml_error(problem.getMessage(), problem.getLineNumber(), problem.getColumnNumber())
    if isinstance(problem, feedparser.CharacterEncodingOverride):
        # feedparser fell back to another encoding and read on; whether the document is
        # well-formed as it declares itself only a strict parse can tell (rare: worth a 2nd one).
        parse_xml(content)
    elif problem is not None:
        raise IngestError(f"The feed could not be parsed: {problem}")
    channel = document.feed
    _refuse_error_feed(channel, items=len(document.entries))
    date = parse_rfc822_date(channel.get("published"), what="The feed's date (pubDate)")
    match = _CHANNEL_CATEGORY_RE.match(clean(channel.get("title")))
    entries: list[ParsedRecord] = []
    seen: set[str] = set()
    for position, item in enumerate(document.entries, start=1):
        entry = _rss_entry(item, position)
        if entry.arxiv_id in seen:  # never seen in practice; keep the first, like arXiv's page
            continue
        seen.add(entry.arxiv_id)
        entries.append(entry)
    if date is None and entries:
        date = parse_rfc822_date(
            document.entries[0].get("published"), what="The first item's date (pubDate)"
        )
    return ParsedFeed(
        format="rss", date=date, entries=entries, category=match["code"] if match else ""
    )


def _refuse_error_feed(channel: Mapping[str, Any], *, items: int) -> None:
    """Refuse arXiv's error feed, in arXiv's own words, and an item-less feed that does not say
    it is a listing: taken for an empty day, either would mark the day done with nothing in it.

    An empty day's feed is titled "<category> updates on arXiv.org"; items prove a listing by
    themselves, so only an empty feed has to say what it is.
    """
    title = clean(channel.get("title"))
    # feedparser gives a channel's <description> as its subtitle.
    reason = clean(channel.get("subtitle") or channel.get("description"))
    if _ERROR_TITLE_RE.match(title):
        # The reason whole (arXiv's lists the valid archives): it is what the operator needs.
        said = f"{quoted(title)}: {quoted(reason, limit=1000)}" if reason else quoted(title)
        raise IngestError(f"arXiv answered with an error feed, not a listing: {said}.")
    if not items and not _LISTING_TITLE_RE.search(title):
        shown = quoted(title) if title else "no title"
        raise IngestError(
            f"The feed has no items and does not say it is an arXiv listing ({shown}): not "
            "taken for an empty day."
        )


def _rss_entry(item: Mapping[str, Any], position: int) -> ParsedRecord:
    description = item.get("summary") or ""
    described = _DESCRIPTION_RE.match(description)
    ids = split_id(item.get("id") or "") or (
        split_id(f"arXiv:{described['id']}") if described else None
    )
    if ids is None:
        raise IngestError(f"Item {position} has no arXiv identifier (guid {item.get('id')!r}).")
    arxiv_id, version = ids
    announce_type = clean(item.get("arxiv_announce_type")) or (
        described["type"] if described else ""
    )
    if announce_type not in ANNOUNCE_TYPES:
        raise IngestError(
            f"Item {position} ({arxiv_id}) has an unknown announce type {announce_type!r}."
        )
    abstract = described["abstract"] if described else description.split("Abstract:", 1)[-1]
    authors, more_authors = read_byline(_bounded_creator(item.get("author") or "", arxiv_id))
    return ParsedRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=clean(item.get("title")),
        abstract=abstract.strip(),
        authors=authors,
        more_authors=more_authors,
        categories=[tag["term"] for tag in item.get("tags", []) if tag.get("term")],
        announce_type=announce_type,
        license=clean(item.get("rights")),
        doi=clean(item.get("arxiv_doi")),
        journal_ref=clean(item.get("arxiv_journal_reference")),
    ).bounded()
