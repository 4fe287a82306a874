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

A piece of page kept longer than one price table (``peerrevenue.fragments``) is rendered with its
titles still open (``PageTerms(defer_prices=True)``): each title is a marker, which ``fill_prices``
replaces with the current price on every request.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import re
from collections.abc import Callable
from functools import cached_property

from django.conf import settings
from django.core.cache import cache
from django.urls import reverse

from peerrevenue.lru import SizedLRU

from .highlighting import Matcher, current_matcher
from .tickers import Ticker, current_price_table
from .versions import market_versions

_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Elements whose text is never highlighted: formulas, code and links (no link in a link).
_OPAQUE = {"math", "code", "a"}

SHARED_SECONDS = 7 * 24 * 3600  # entries of an old term set are never read again; let them go
LOCAL_CHARACTERS = 8_000_000  # per process and layer: a few thousand abstracts, ~20 MB

# HTML with a hole for each link's hover title: ``parts`` has one more item than ``slots``, and
# slot i, a (term id, phrase), goes between parts[i] and parts[i + 1].
Linked = tuple[tuple[str, ...], tuple[tuple[int, str], ...]]

# An open title: private-use code points around a tag derived from the secret key, so that no
# text from arXiv can forge one (abstracts are stored as given), then the term's id and phrase.
_SLOT_TAG = hmac.new(settings.SECRET_KEY.encode(), b"price-slot", "sha256").hexdigest()[:12]
_OPEN_SLOT = re.compile(f"\ue000{_SLOT_TAG}(\\d+)\ue001([^\ue002]*)\ue002")


def open_title(term_id: int, phrase: str) -> str:
    """A marker for a link title that ``PageTerms.fill_prices`` fills in later."""
    escaped = html.escape(phrase).replace("\ue002", "")
    return f"\ue000{_SLOT_TAG}{term_id}\ue001{escaped}\ue002"


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


_linked: SizedLRU[Linked] = SizedLRU(LOCAL_CHARACTERS)
_filled: SizedLRU[str] = SizedLRU(LOCAL_CHARACTERS)  # linked key and price table → final HTML
# Kept pieces of page (``fill_prices``): their text split at the open titles, and filled.
_split_pieces: SizedLRU[Linked] = SizedLRU(LOCAL_CHARACTERS)
_filled_pieces: SizedLRU[bytes] = SizedLRU(LOCAL_CHARACTERS)
# Fragment key → (HTML, name of the price table it showed, or None if it showed no price).
_fragments: SizedLRU[tuple[str, str | None]] = SizedLRU(LOCAL_CHARACTERS)


class PageTerms:
    """What one page needs from the market, each read at most once and only if used: the
    term-set version (one cache read), its matcher, and the price table for hover titles."""

    def __init__(self, *, defer_prices: bool = False) -> None:
        self._titles: dict[int, str] = {}
        self._priced = 0  # texts rendered with hover prices so far
        # Titles are left as markers (open_title) for fill_prices, in a piece of page that is
        # kept across trades; the page that shows it fills them.
        self.defer_prices = defer_prices

    @cached_property
    def _versions(self) -> tuple[str, str]:
        # Both at once: a page that highlights anything almost always shows prices too.
        return market_versions()

    @property
    def version(self) -> str:
        return self._versions[0]

    @cached_property
    def price_table(self) -> tuple[str, dict[int, Ticker]]:
        return current_price_table(*self._versions)

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
        if self.defer_prices:
            return open_title(term_id, phrase)
        title = self._titles.get(term_id)
        if title is None:
            ticker = self.price_table[1].get(term_id)
            title = html.escape(ticker.hover_text if ticker else phrase)
            self._titles[term_id] = title
        return title

    def fill_prices(self, markup: str) -> str:
        """``markup`` with every open title (``open_title``) showing the current price. Reads
        the price table only if there is one."""
        if "\ue000" not in markup:
            return markup
        return self.filled_piece(markup).decode()

    def filled_piece(self, markup: str) -> bytes:
        """``fill_prices(markup)`` as UTF-8, ready for a response.

        A kept piece of page (``peerrevenue.fragments``) is the same string object on every
        request of this process, and a string keeps its hash: so looking it up here costs
        nothing like its length. It is split at its open titles once, and filled and encoded
        once per price table (encoding 170 kB on each request cost a tenth of the page)."""
        key = (markup, self.price_table[0])
        filled = _filled_pieces.get(key)
        if filled is None:
            split = _split_pieces.get(markup)
            if split is None:
                pieces = _OPEN_SLOT.split(markup)  # text, id, phrase, text, id, phrase, …, text
                split = (
                    tuple(pieces[::3]),
                    tuple(
                        zip(map(int, pieces[1::3]), map(html.unescape, pieces[2::3]), strict=True)
                    ),
                )
                _split_pieces.put(markup, split, len(markup))
            parts, slots = split
            out = [parts[0]]
            for (term_id, phrase), after in zip(slots, parts[1:], strict=True):
                out.append(self.title(term_id, phrase))
                out.append(after)
            filled = "".join(out).encode()
            _filled_pieces.put(key, filled, len(filled))
        return filled

    @property
    def _prices_key(self) -> str:
        """What the texts rendered so far showed of prices: the price table, or open titles."""
        return "open" if self.defer_prices else self.price_table[0]

    def highlight(self, markup: str) -> str:
        """``markup`` (sanitised HTML) with every mention of a listed term as a link."""
        if not markup:
            return markup
        key = self._key(markup)
        parts, slots = self.linked(markup, key)
        if not slots:
            return parts[0]
        self._priced += 1
        key = f"{key}:{self._prices_key}"
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
        key = f"{name}:{vary}:{self.version}:{'open' if self.defer_prices else 'priced'}"
        found = _fragments.get(key)
        if found is not None and (found[1] is None or found[1] == self._prices_key):
            return found[0]
        priced_before = self._priced
        markup = render()
        prices = self._prices_key if self._priced > priced_before else None
        _fragments.put(key, (markup, prices), len(markup))
        return markup


def highlight(markup: str) -> str:
    """``markup`` with its terms linked, reading the term set and prices afresh; a page should
    use one ``PageTerms`` for all its texts instead."""
    return PageTerms().highlight(markup)
