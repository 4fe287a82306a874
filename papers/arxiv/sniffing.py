"""What a document is, before anyone parses all of it, and the strict XML parse.

One sniffer, ``detect_format``: it refuses what is plainly not a feed (nothing, HTML, non-XML)
from the first bytes, then reads only as far as the root element. The format then decides which
parser reads the whole document, once: feedparser for RSS, ElementTree for the API's Atom. Both
are strict (expat), so broken XML past the root still fails, with the same message.

What stands where a feed should be is most often an error page (arXiv's, or a proxy's on the
way, served even with status 200, or saved into a file): its refusal quotes the page's title or
first text, so whoever reads the failed run sees what the server said, not only that it was
not a feed.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from papers.arxiv.errors import FetchError, IngestError
from papers.arxiv.fields import clean

ATOM = "{http://www.w3.org/2005/Atom}"

_TITLE_RE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
# What an error page's reader would not see: scripts, styles, comments, declarations, tags.
_UNSEEN_RE = re.compile(
    r"<(script|style)\b.*?</\1\s*>|<!--.*?(?:-->|$)|<[!?][^>]*>|<[^>]*>", re.IGNORECASE | re.DOTALL
)
# Elements that only an HTML page starts with: a proxy's page is often a bare fragment.
_HTML_ROOTS = frozenset({"html", "head", "body", "title", "h1", "h2", "p", "div", "center", "pre"})
_DECLARATIONS_RE = re.compile(rb"<!--.*?-->|<[!?][^>]*>", re.DOTALL)
_FIRST_TAG_RE = re.compile(rb"<([A-Za-z][\w.:-]*)")
_SNIFF_CHUNK = 4096
_PEEK = 8192
# Enough of an error page to recognise it, short enough for a log line and the admin's list.
QUOTE_LIMIT = 160


def quoted(text: str, *, limit: int = QUOTE_LIMIT) -> str:
    """`text` on one line, cut to `limit` characters, in quotation marks."""
    text = clean(text)
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return f"“{text}”"


def _readable(content: bytes) -> str:
    """The start of `content` as text, or "" when it is binary rather than a message."""
    text = content[:_PEEK].decode("utf-8", "replace")
    if len(content) > _PEEK:
        text = text.rstrip("\ufffd")  # a character cut in two at the edge of the peek
    if "\ufffd" in text or any(char < " " and char not in "\t\r\n" for char in text):
        return ""
    return text.lstrip("\ufeff")


def _page_text(content: bytes) -> str:
    """What a browser would show of an HTML page first: its title, else its first text."""
    match = _TITLE_RE.search(content[:_PEEK])
    if match and clean(match.group(1).decode("utf-8", "replace")):
        return clean(match.group(1).decode("utf-8", "replace"))
    return clean(_UNSEEN_RE.sub(" ", content[:_PEEK].decode("utf-8", "replace")))


def html_error(content: bytes) -> FetchError:
    """A FetchError, so the Celery task retries later: an HTML page where a feed should be is
    arXiv's maintenance or rate-limit page, or a proxy's error page, served even with status
    200. The message quotes the page's title (or, without one, its first text)."""
    text = _page_text(content)
    detail = f" ({quoted(text)})" if text else ""
    return FetchError(
        f"Received an HTML page{detail} instead of an arXiv feed: arXiv is probably down or "
        "rate-limiting us; try again later."
    )


def _text_error(content: bytes) -> IngestError:
    """Content that is not XML: quoted when it is text (a proxy's "Service Unavailable", an
    HTTP response saved with its headers, a JSON error), which, like an HTML page, is a
    FetchError worth retrying; binary garbage is not."""
    first_line = next((line for line in _readable(content).splitlines() if line.strip()), "")
    if not first_line:
        return IngestError("Not an arXiv feed: the content is not XML, nor even text.")
    return FetchError(
        f"Not an arXiv feed: the content is not XML but text ({quoted(first_line)}): an error "
        "from arXiv or a proxy on the way, probably; try again later."
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


def _first_element(content: bytes) -> str:
    """The local name of the first element, lowercased, found without an XML parser."""
    match = _FIRST_TAG_RE.search(_DECLARATIONS_RE.sub(b"", content[:_PEEK]))
    return match.group(1).decode("ascii", "replace").rsplit(":", 1)[-1].lower() if match else ""


def _parse_error(content: bytes, exc: ET.ParseError) -> IngestError:
    # HTML is seldom well-formed XML: a page that expat rejects (a comment, then
    # `<html lang=en>`) is still recognisably a page, and is refused as one. Judged by the
    # first element only: a broken feed's text may well mention <body> further on.
    if _first_element(content) in _HTML_ROOTS:
        return html_error(content)
    return _et_error(exc)


def _check_prologue(content: bytes) -> None:
    """Refuse, before any XML parsing, what is plainly not a feed: nothing, HTML, non-XML."""
    stripped = content.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        # A FetchError: an empty answer is a download that failed, which a retry may mend.
        raise FetchError("The feed is empty (no content at all): the download probably failed.")
    head = stripped[:1024].lower()
    if head.startswith((b"<!doctype html", b"<html")):
        raise html_error(content)
    if not stripped.startswith(b"<"):
        raise _text_error(stripped)


def parse_xml(content: bytes) -> ET.Element:
    """Parse, strictly: a truncated download or broken XML must fail, never half-succeed.

    The standard library parser neither fetches external entities nor expands entities without
    limit (expat ≥ 2.4 guards against "billion laughs"), so it is safe on what arXiv sends.
    """
    _check_prologue(content)
    try:
        root = ET.fromstring(content)
    except ET.ParseError as exc:
        raise _parse_error(content, exc) from exc
    if root.tag.rsplit("}", 1)[-1].lower() in _HTML_ROOTS:
        raise html_error(content)
    return root


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
        raise _parse_error(content, exc) from exc
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
    if local.lower() in _HTML_ROOTS:
        raise html_error(content)
    raise IngestError(
        f"Not an arXiv feed: the document's root element is <{local}>, expected an RSS 2.0 <rss> "
        "or an Atom <feed>."
    )
