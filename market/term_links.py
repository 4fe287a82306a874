"""Highlighted terms in typeset HTML: each mention of a listed term becomes a link to its page.

The input is the stored, sanitised HTML of a title or abstract. Terms are looked for only in
text, never inside MathML, code or an existing link, with the same matcher that counts mentions
for dividends (``market.highlighting``).

Matching a whole abstract costs about a millisecond, and a category page shows thirty; yet the
result depends only on the HTML and the term set. So it is computed once per (term-set version,
HTML) and kept in the shared cache (every worker) and in each process's memory (no round trip
for a page seen before). An edited paper has new HTML, so a new key; a listed, halted or edited
term bumps the term-set version. The prices in the links' hover titles change with every trade,
so they are not stored: the stored form leaves a slot for each title, which ``PageTerms`` fills
from the price table, read once per page (and each process keeps its last fills until the next
trade).
"""

from __future__ import annotations

import hashlib
import html
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import cached_property
from typing import Generic, TypeVar

from django.core.cache import cache
from django.urls import reverse

from .highlighting import Matcher, current_matcher, terms_version
from .tickers import Ticker, current_price_table

_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Elements whose text is never highlighted: formulas, code and links (no link in a link).
_OPAQUE = {"math", "code", "a"}

SHARED_SECONDS = 7 * 24 * 3600  # entries of an old term set are never read again; let them go
LOCAL_CHARACTERS = 8_000_000  # per process and layer: a few thousand abstracts, ~20 MB

# HTML with a hole for each link's hover title: ``parts`` has one more item than ``slots``, and
# slot i, a (term id, phrase), goes between parts[i] and parts[i + 1].
Linked = tuple[tuple[str, ...], tuple[tuple[int, str], ...]]
T = TypeVar("T")


def link_terms(markup: str, matcher: Matcher) -> Linked:
    """``markup`` with its mentions as links whose titles are left open."""
    parts: list[str] = []
    slots: list[tuple[int, str]] = []
    out: list[str] = []
    opaque_depth = 0
    for token in _TOKEN.findall(markup):
        if token.startswith("<"):
            tag = _TAG.match(token)
            if tag and tag.group(2).lower() in _OPAQUE:
                opaque_depth += -1 if tag.group(1) else 1
            out.append(token)
            continue
        if opaque_depth > 0:
            out.append(token)
            continue
        text = html.unescape(token)
        matches = matcher.find_mentions(text)
        if not matches:
            out.append(token)
            continue
        position = 0
        for match in matches:
            out.append(html.escape(text[position : match.start], quote=False))
            out.append(f'<a class="term" href="{reverse("market:term", args=[match.term.slug])}"')
            out.append(' title="')
            parts.append("".join(out))
            out.clear()
            slots.append((match.term.id, match.term.phrase))
            out.append(f'">{html.escape(text[match.start : match.end], quote=False)}</a>')
            position = match.end
        out.append(html.escape(text[position:], quote=False))
    parts.append("".join(out))
    return tuple(parts), tuple(slots)


class _Recent(Generic[T]):
    """A small LRU for this process, bounded by the characters it holds (a hostile abstract of
    megabytes must not pin thousands of copies)."""

    def __init__(self, characters: int) -> None:
        self.budget = characters
        self.held = 0
        self.entries: OrderedDict[str, tuple[T, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str) -> T | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None:
                return None
            self.entries.move_to_end(key)
            return found[0]

    def put(self, key: str, value: T, size: int) -> None:
        with self.lock:
            old = self.entries.pop(key, None)
            if old is not None:
                self.held -= old[1]
            self.entries[key] = (value, size)
            self.held += size
            while self.held > self.budget and self.entries:
                self.held -= self.entries.popitem(last=False)[1][1]


_linked: _Recent[Linked] = _Recent(LOCAL_CHARACTERS)
_filled: _Recent[str] = _Recent(LOCAL_CHARACTERS)  # linked key and price table → final HTML
# Fragment key → (HTML, name of the price table it showed, or None if it showed no price).
_fragments: _Recent[tuple[str, str | None]] = _Recent(LOCAL_CHARACTERS)


class PageTerms:
    """What one page needs from the market, each read at most once and only if used: the
    term-set version (one cache read), its matcher, and the price table for hover titles."""

    def __init__(self) -> None:
        self._titles: dict[int, str] = {}
        self._priced = 0  # texts rendered with hover prices so far

    @cached_property
    def version(self) -> str:
        return terms_version()

    @cached_property
    def price_table(self) -> tuple[str, dict[int, Ticker]]:
        return current_price_table(version=self.version)

    def _key(self, markup: str) -> str:
        # The HTML's digest, not the paper: an edit or a retypeset is a new key by itself.
        digest = hashlib.blake2b(markup.encode(), digest_size=16).hexdigest()
        return f"market:linked:{self.version}:{digest}"

    def linked(self, markup: str, key: str | None = None) -> Linked:
        key = key or self._key(markup)
        linked = _linked.get(key)
        if linked is None:
            linked = cache.get(key)
            if linked is None:
                linked = link_terms(markup, current_matcher(self.version))
                cache.set(key, linked, SHARED_SECONDS)
            _linked.put(key, linked, len(markup))
        return linked

    def title(self, term_id: int, phrase: str) -> str:
        title = self._titles.get(term_id)
        if title is None:
            ticker = self.price_table[1].get(term_id)
            title = html.escape(ticker.hover_text if ticker else phrase)
            self._titles[term_id] = title
        return title

    def highlight(self, markup: str) -> str:
        """``markup`` (sanitised HTML) with every mention of a listed term as a link."""
        if not markup:
            return markup
        key = self._key(markup)
        parts, slots = self.linked(markup, key)
        if not slots:
            return parts[0]
        self._priced += 1
        key = f"{key}:{self.price_table[0]}"
        filled = _filled.get(key)
        if filled is None:
            out = [parts[0]]
            for (term_id, phrase), after in zip(slots, parts[1:], strict=True):
                out.append(self.title(term_id, phrase))
                out.append(after)
            filled = "".join(out)
            _filled.put(key, filled, len(filled))
        return filled

    def fragment(self, name: str, vary_on: list[object], render: Callable[[], str]) -> str:
        """A piece of a page that shows highlighted texts, rendered once per process for each
        ``vary_on`` (what else it shows, e.g. a paper's id and modification time) and term set,
        and, if it shows a price, each price table: ``render()`` is called only when no such
        piece is kept. A piece without prices costs no look-up of the price table."""
        vary = hashlib.blake2b(repr(vary_on).encode(), digest_size=16).hexdigest()
        key = f"{name}:{vary}:{self.version}"
        found = _fragments.get(key)
        if found is not None and (found[1] is None or found[1] == self.price_table[0]):
            return found[0]
        priced_before = self._priced
        markup = render()
        prices = self.price_table[0] if self._priced > priced_before else None
        _fragments.put(key, (markup, prices), len(markup))
        return markup


def highlight(markup: str) -> str:
    """``markup`` with its terms linked, reading the term set and prices afresh; a page should
    use one ``PageTerms`` for all its texts instead."""
    return PageTerms().highlight(markup)
