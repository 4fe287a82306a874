"""Highlighted terms in typeset HTML: each mention of a listed term becomes a link to its page.

The input is the stored, sanitised HTML of a title or abstract. Terms are looked for only in
text, never inside MathML, code or an existing link, with the same matcher that counts mentions
for dividends (``market.highlighting``).

The result depends only on the HTML and the term set, so it is kept (``peerrevenue.keep``)
under the term-set stamp and the HTML's digest: an edited paper has new HTML, so a new key; a
listed, halted or edited term moves the term-set stamp in the database. Each link's hover
title shows the current price, which moves with every trade, so the kept form leaves it as a
hole (``keep.hole("price", term id)``) that every response fills from the price table
(``market.tickers``).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable

from django.http import HttpRequest
from django.urls import reverse

from peerrevenue import keep

from .highlighting import Matcher, current_matcher

_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Elements whose text is never highlighted: formulas, code and links (no link in a link).
_OPAQUE = {"math", "code", "a"}

SHARED_SECONDS = 7 * 24 * 3600  # entries of an old term set are never read again; let them go


# The most links one text gets, and the most characters of it searched for them. A real
# abstract has a few dozen mentions in under 2,000 characters; a hostile one (600 kB of nothing
# but terms) would have tens of thousands, a page of megabytes that takes seconds to build and
# slows every page it is listed on. Past either bound, the text stays plain.
MAX_LINKS = 200
MAX_SEARCHED = 20_000


def link_terms(
    markup: str, matcher: Matcher, *, limit: int = MAX_LINKS, searched: int = MAX_SEARCHED
) -> str:
    """``markup`` with its mentions as links whose titles are price holes: the first ``limit``
    of them, in its first ``searched`` characters of text (cut between words)."""
    out: list[str] = []
    opaque_depth = 0
    links = 0
    # A term's link opens the same way each time: its URL is reversed once a text.
    openings: dict[int, str] = {}
    for token in _TOKEN.findall(markup):
        if token.startswith("<"):
            tag = _TAG.match(token)
            if tag and tag.group(2).lower() in _OPAQUE:
                opaque_depth += -1 if tag.group(1) else 1
            out.append(token)
            continue
        if opaque_depth > 0 or links >= limit or searched <= 0:
            out.append(token)
            continue
        text = html.unescape(token)
        end = len(text)
        if end > searched:
            end = max(text.rfind(" ", 0, searched), 0)
        searched -= end
        matches = matcher.find_mentions(text[:end])[: limit - links]
        if not matches:
            out.append(token)
            continue
        position = 0
        for match in matches:
            term = match.term
            if term.id not in openings:
                openings[term.id] = (
                    f'<a class="term" href="{reverse("market:term", args=[term.slug])}"'
                    f' title="{keep.hole("price", term.id)}">'
                )
            out.append(html.escape(text[position : match.start], quote=False))
            out.append(
                f"{openings[term.id]}{html.escape(text[match.start : match.end], quote=False)}</a>"
            )
            position = match.end
        links += len(matches)
        out.append(html.escape(text[position:], quote=False))
    return "".join(out)


class PageTerms:
    """What one render needs from the market: the term-set stamp (read with the request's
    facts, or given by a kept render) and its matcher."""

    def __init__(self, *, request: HttpRequest | None = None, terms: object = None) -> None:
        self._request = request
        self._terms = terms

    @property
    def shared(self) -> bool:
        # Asked of the request at each text, not when this is made (at the start of the
        # render): the view may mark it afterwards (keep.keep_in_process).
        return keep.shares_pieces(self._request)

    @property
    def terms(self) -> object:
        if self._terms is None:
            if self._request is not None:
                self._terms = keep.facts_of(self._request)["terms"]
            else:
                self._terms = keep.read(None, "terms")["terms"]
        return self._terms

    def highlight(self, markup: str) -> str:
        """``markup`` (sanitised HTML) with every mention of a listed term as a link."""
        if not markup:
            return markup
        # The HTML's digest, not the paper: an edit or a retypeset is a new key by itself.
        digest = hashlib.blake2b(markup.encode(), digest_size=16).hexdigest()
        terms = self.terms
        return keep.get_or_make(
            keep.key("linked", terms, digest),
            lambda: link_terms(markup, current_matcher(str(terms))),
            size=len,
            seconds=SHARED_SECONDS,
            shared=self.shared,
        )

    def fragment(self, name: str, vary_on: list[object], render: Callable[[], str]) -> str:
        """A piece of a page that shows highlighted texts, kept for each ``vary_on`` (what
        else it shows, e.g. a paper's id and stamp) and term set: ``render()`` is called only
        when no such piece is kept."""
        return keep.get_or_make(
            keep.key(name, self.terms, *vary_on), render, size=len, shared=self.shared
        )


def highlight(markup: str) -> str:
    """``markup`` with its terms linked, reading the term set afresh; a page should use one
    ``PageTerms`` for all its texts instead."""
    return PageTerms().highlight(markup)


RECENT_PAPERS = 600  # about two weeks of a busy category: what readers open after a change


def keep_recent_highlights(*, limit: int = RECENT_PAPERS) -> int:
    """Highlight the newest papers' titles and abstracts for the current term set and keep
    them, so that the first reader after an ingest or a term change renders a page from kept
    texts instead of matching thirty abstracts. Run in the worker; returns how many papers."""
    from papers.models import Paper

    page = PageTerms()
    papers = (
        Paper.objects.visible().order_by("-arxiv_id").values_list("title_html", "abstract_html")
    )
    count = 0
    for title_html, abstract_html in papers[:limit]:
        page.highlight(title_html)
        page.highlight(abstract_html)
        count += 1
    return count
