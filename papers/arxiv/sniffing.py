"""What a document is, before anyone parses all of it, and the strict XML parse.

One sniffer, ``detect_format``: it refuses what is plainly not a feed (nothing, HTML, non-XML)
from the first bytes, then reads only as far as the root element. The format then decides which
parser reads the whole document, once: feedparser for RSS, ElementTree for the API's Atom. Both
are strict (expat), so broken XML past the root still fails, with the same message.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from papers.arxiv.errors import FetchError, IngestError
from papers.arxiv.fields import clean

ATOM = "{http://www.w3.org/2005/Atom}"

_TITLE_RE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_SNIFF_CHUNK = 4096


def html_error(content: bytes) -> FetchError:
    """A FetchError, so the Celery task retries later: an HTML page where a feed should be is
    arXiv's maintenance or rate-limit page, served even with status 200."""
    match = _TITLE_RE.search(content[:8192])
    title = clean(match.group(1).decode("utf-8", "replace")) if match else ""
    detail = f" (“{title}”)" if title else ""
    return FetchError(
        f"Received an HTML page{detail} instead of an arXiv feed: arXiv is probably down or "
        "rate-limiting us; try again later."
    )


def xml_error(reason: str, line: int | None, column: int | None) -> IngestError:
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
    return xml_error(str(exc).split(":")[0], line, column)


def _check_prologue(content: bytes) -> None:
    """Refuse, before any XML parsing, what is plainly not a feed: nothing, HTML, non-XML."""
    stripped = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise IngestError("The feed is empty (no content at all): the download probably failed.")
    head = stripped[:1024].lower()
    if head.startswith((b"<!doctype html", b"<html")):
        raise html_error(content)
    if not stripped.startswith(b"<"):
        raise IngestError("Not an arXiv feed: the content is not XML.")


def parse_xml(content: bytes) -> ET.Element:
    """Parse, strictly: a truncated download or broken XML must fail, never half-succeed.

    The standard library parser neither fetches external entities nor expands entities without
    limit (expat ≥ 2.4 guards against "billion laughs"), so it is safe on what arXiv sends.
    """
    _check_prologue(content)
    try:
        return ET.fromstring(content)
    except ET.ParseError as exc:
        raise _et_error(exc) from exc


def _root_tag(content: bytes) -> str:
    """The root element's tag, reading only as far into the document as it takes."""
    parser = ET.XMLPullParser(events=("start",))
    try:
        for offset in range(0, len(content), _SNIFF_CHUNK):
            parser.feed(content[offset : offset + _SNIFF_CHUNK])
            for event in parser.read_events():
                # A start event carries its element (other kinds carry namespaces or text).
                element = event[-1]
                if isinstance(element, ET.Element):
                    return element.tag
        parser.close()  # no root element at all: raises "no element found"
    except ET.ParseError as exc:
        raise _et_error(exc) from exc
    raise IngestError("Not an arXiv feed: the document has no root element.")


def detect_format(content: bytes) -> str:
    """`"rss"` or `"api"`; an HTML page, garbage or broken XML raises `IngestError`."""
    _check_prologue(content)
    tag = _root_tag(content)
    if tag == "rss":
        return "rss"
    if tag == f"{ATOM}feed":
        return "api"
    local = tag.rsplit("}", 1)[-1]
    if local.lower() == "html":
        raise html_error(content)
    raise IngestError(
        f"Not an arXiv feed: the document's root element is <{local}>, expected an RSS 2.0 <rss> "
        "or an Atom <feed>."
    )
