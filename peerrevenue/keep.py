"""Kept things: pieces of pages stored under keys derived from the data they show.

One idea, used by every page that keeps anything:

- **Facts** are small values read from the database on every request, all in one statement:
  the stamps that triggers move whenever a row, or anything it shows, changes
  (``peerrevenue/facts.py`` says how; ``keep.read`` reads them).
- **Keys** are made of a piece's name and the facts it shows, declared once per piece
  (``Cached``: its name and its stamps; ``key`` underneath). A key is never
  invalidated: a write moves a fact, the next request reads the new fact, so it asks for a
  new key, and the old entry is never read again and ages out.
- **One two-level store** (``get_or_make``): this process's memory in front of the shared
  cache (Redis in production, the database cache locally). Because the key is read from the
  database on every request, two processes can never disagree about what is current: the
  memory level only saves the shared cache's round trip.
- **Holes** (``hole``/``fill``): a kept piece is rendered without the request, so it can
  contain nothing of the reader, not even a CSRF token. What changes faster than the piece
  (a hover price) or belongs to the reader (their own row in a table) is left as a hole that
  ``respond`` fills on every request, through the fillers apps register (``filler``).

Renders are fast without any kept piece; keeping is an optimisation, and with the shared
cache gone (Redis down) pages are slower, never wrong.

**Proven fresh**: with ``settings.KEEP_VERIFY`` (on for the test suite, off in production) every
kept value that is used is also made afresh, with nothing kept (nested pieces, fills, whole
pages), and a difference raises ``freshness.Stale`` (``peerrevenue/freshness.py``).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.template.loader import get_template
from django.utils.safestring import mark_safe

from . import freshness, reader_frames
from .facts import READER, Facts, arguments_of, fact, facts_of, read
from .lru import SizedLRU
from .middleware import replace_content

__all__ = ["READER", "Facts", "fact", "facts_of", "read"]  # the facts, for every page that keeps

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

SHARED_SECONDS = 3600  # an entry under an old key is never read again: let it go
LOCAL_CHARACTERS = 32_000_000  # per process: about two hundred category pages


# The code that made a kept value is part of what it shows: a deploy that changes a value's
# shape (a field added to a piece, a template edited) must not read what the release before
# kept under the same facts, and two releases side by side in a rolling deploy must not share.
# So every key carries a digest of the site's code and templates, read once a process (about
# three hundred files, a few milliseconds): nothing to remember to bump.
_SOURCE_DIRECTORIES = (
    "accounts",
    "api",
    "authorship",
    "discussion",
    "library",
    "market",
    "papers",
    "peerrevenue",
    "templates",
)


def _code_digest() -> str:
    digest = hashlib.blake2b(digest_size=8)
    for directory in _SOURCE_DIRECTORIES:
        for path in sorted(Path(settings.BASE_DIR, directory).rglob("*")):
            if path.suffix in (".py", ".html", ".txt", ".sql") and path.is_file():
                digest.update(str(path.relative_to(settings.BASE_DIR)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


CODE = _code_digest()


def key(name: str, *parts: object) -> str:
    """A cache key for ``name`` showing ``parts`` (facts, path, date…) as made by this release
    of the code: hashed, since a URL can be longer and stranger than a cache key may be."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()
    return f"kept:{CODE}:{name}:{digest}"


# The two-level store ------------------------------------------------------------------------


in_process: SizedLRU[Any] = SizedLRU(LOCAL_CHARACTERS)


def get_or_make(
    name: str,
    make: Callable[[], T],
    *,
    size: Callable[[T], int] = lambda value: 1,
    seconds: int = SHARED_SECONDS,
    shared: bool = True,
) -> T:
    """The value kept under ``name`` (a ``key``), made by ``make()`` only when neither this
    process nor the shared cache has it. ``shared=False`` keeps it in this process only
    (values cheaper to make than to unpickle)."""
    if freshness.checking():
        return make()
    found = in_process.get(name)
    if found is None and shared:
        found = cache.get(name)
        if found is not None:
            in_process.put(name, found, size(found))
    if found is None:
        found = make()
        if shared:
            cache.set(name, found, seconds)
        in_process.put(name, found, size(found))
    elif freshness.verifying():
        with freshness.made_afresh():
            freshness.check(name, found, make())
    return found


def get_or_make_many(
    names: Mapping[K, Hashable],
    make: Callable[[list[K]], Mapping[K, T]],
    *,
    size: Callable[[T], int] = lambda value: 1,
    seconds: int = SHARED_SECONDS,
    shared: bool = True,
) -> dict[K, T]:
    """``get_or_make`` for many values at once, each kept under its own name (``names``: item
    → ``key``): those kept nowhere are made together by one ``make(items)`` (a table's rows
    after a trade: one query for the missing ones). ``shared=False``: in this process only,
    where a name may be any hashable value (a tuple costs less to make than a hashed key)."""
    if freshness.checking():
        return dict(make(list(names)))
    found: dict[K, T] = {}
    wanted: dict[str, K] = {}
    for item, name in names.items():
        value = in_process.get(name)
        if value is not None:
            found[item] = value
        elif shared:
            assert isinstance(name, str), "a shared entry's name is a key()"
            wanted[name] = item
    if wanted:
        for name, value in cache.get_many(list(wanted)).items():
            in_process.put(name, value, size(value))
            found[wanted[name]] = value
    kept = list(found)
    missing = [item for item in names if item not in found]
    if missing:
        for item, value in make(missing).items():
            if shared:
                cache.set(names[item], value, seconds)  # a key(), as asserted above
            in_process.put(names[item], value, size(value))
            found[item] = value
    if kept and freshness.verifying():
        with freshness.made_afresh():
            fresh = make(kept)
        for item in kept:
            freshness.check(names[item], found[item], fresh.get(item))
    return found


@dataclass(frozen=True, slots=True)
class Cached(Generic[T]):
    """One cached thing, declared once beside the code that makes it: its ``name`` and the
    ``stamps`` its render reads (facts, by name), which make its version::

        TERM_PAPERS = keep.Cached("term-papers", stamps=("terms", "mentions", "papers"))
        piece = TERM_PAPERS.get(facts, slug, make=lambda: render(slug))

    The key is the name, the arguments ``get`` is given (a slug, a URL, a clock bucket: what
    else the value shows), and the stamps' values as this request read them. A stamp that
    takes arguments (``"term"``: one term's row) takes the first of ``get``'s arguments. With
    ``KEEP_VERIFY`` every value used is made again and compared: a stamp left out of the
    declaration fails the test that reads the page."""

    name: str
    stamps: tuple[str, ...]
    size: Callable[[Any], int] = lambda value: 1
    seconds: int = SHARED_SECONDS
    shared: bool = True  # False: in this process only (cheaper to make than to unpickle)

    def version(self, facts: Facts, arguments: tuple[object, ...]) -> tuple[object, ...]:
        taken = ((stamp, arguments_of(stamp)) for stamp in self.stamps)
        return tuple(facts[(stamp, *arguments[:count])] for stamp, count in taken)

    def key(self, facts: Facts, *arguments: object) -> str:
        return key(self.name, *arguments, self.version(facts, arguments))

    def get(self, facts: Facts, *arguments: object, make: Callable[[], T]) -> T:
        return get_or_make(
            self.key(facts, *arguments),
            make,
            size=self.size,
            seconds=self.seconds,
            shared=self.shared,
        )


_IN_PROCESS = "_kept_in_process"


def keep_in_process(request: HttpRequest) -> None:
    """Pieces this response makes stay in this process: for pages whose texts vary with what
    the reader typed (search results, marked with its words), which few readers would ever
    ask for again, so that a page of them writes nothing to the shared cache."""
    setattr(request, _IN_PROCESS, True)


def shares_pieces(request: HttpRequest | None) -> bool:
    return not getattr(request, _IN_PROCESS, False)


def forget_local() -> None:
    """Drop this process's entries (tests clear the shared cache between cases)."""
    in_process.clear()
    reader_frames.forget()
    _splits.clear()
    _filled.clear()
    _fills.clear()


# Pieces and holes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Piece:
    """Kept HTML and the few plain values the page around it needs (a title, a count),
    from the same render and so as current. Never model instances: those pickle large and
    would tempt a template to reach past what the key covers."""

    html: str
    values: dict[str, str | int | None] = field(default_factory=dict)


def piece_size(piece: Piece) -> int:
    return len(piece.html)


# A hole: private-use code points around a tag derived from the secret key, so that no text
# from arXiv or a reader can forge one (abstracts are stored as given), then the filler's name
# and its argument.
TAG = hmac.new(settings.SECRET_KEY.encode(), b"kept-hole", "sha256").hexdigest()[:12]
_HOLE = re.compile(f"\ue000{TAG}([a-z-]+):([^\ue001]*)\ue001")
_HOLE_START = "\ue000"


def hole(kind: str, argument: object = "") -> str:
    """A place in a kept piece that the filler ``kind`` fills per request with
    ``argument``."""
    text = str(argument).replace("\ue001", "")
    return f"\ue000{TAG}{kind}:{text}\ue001"


# A filler is made per request: given the request, it returns what its fills depend on (a
# version: the prices fact, the reader's id) and the function that fills one hole from the
# hole's argument (returning HTML, already escaped: it goes in as it is; as UTF-8 bytes when
# the filler keeps them so, which spares encoding a large fill again). The function may
# have a ``prefetch(arguments)`` method, called with all of a text's arguments of its kind
# before any of them is filled.
Filler = Callable[[HttpRequest], tuple[object, Callable[[str], str | bytes]]]
_fillers: dict[str, Filler] = {}


def filler(kind: str, make: Filler) -> None:
    """Register how holes of ``kind`` are filled (once, in the owning app's ``ready``)."""
    _fillers[kind] = make


# A kept text split at its holes: texts encoded once, holes as (kind, argument), and the kinds.
_Split = tuple[tuple[bytes, ...], tuple[tuple[str, str], ...], frozenset[str]]
_splits: SizedLRU[_Split] = SizedLRU(LOCAL_CHARACTERS)
# A kept text filled, by the text and the versions of the fillers it used.
_filled: SizedLRU[bytes] = SizedLRU(LOCAL_CHARACTERS)
# Each kind's fills, by (kind, version): argument → filled bytes. A trade moves the price
# version, so a page's price holes are filled again, but its stars (another kind, whose version
# did not move) come from here without asking their filler.
_fills: SizedLRU[dict[str, bytes]] = SizedLRU(LOCAL_CHARACTERS)


def _split(text: str) -> _Split:
    # Looked up by the text itself: a kept piece is the same string object on every request
    # of this process, and a string caches its hash, so this costs little like its length.
    found = _splits.get(text)
    if found is None:
        pieces = _HOLE.split(text)  # text, kind, argument, text, kind, argument, …, text
        found = (
            tuple(part.encode() for part in pieces[::3]),
            tuple(zip(pieces[1::3], pieces[2::3], strict=True)),
            frozenset(pieces[1::3]),
        )
        _splits.put(text, found, len(text))
    return found


def _encoded(html: str | bytes) -> bytes:
    return html if isinstance(html, bytes) else html.encode()


class Fill:
    """One request's fillers, each made on first use."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self._made: dict[str, tuple[object, Callable[[str], str | bytes]]] = {}

    def versions(self, kinds: Iterable[str] | None = None) -> tuple[tuple[str, str], ...]:
        """What each filler's fills depend on now: of ``kinds``, or of those used so far."""
        wanted = self._made if kinds is None else kinds
        return tuple(sorted((kind, repr(self._filler(kind)[0])) for kind in wanted))

    def _filler(self, kind: str) -> tuple[object, Callable[[str], str | bytes]]:
        made = self._made.get(kind)
        if made is None:
            made = self._made[kind] = _fillers[kind](self.request)
        return made

    def _fills_of(self, kind: str, arguments: Iterable[str]) -> dict[str, bytes]:
        """Every one of ``arguments`` filled by ``kind``'s filler, kept per (kind, version):
        the filler is asked only for arguments no earlier text of that version had."""
        version, fill = self._filler(kind)
        name = (kind, repr(version))
        done = _fills.get(name) if not freshness.checking() else None
        if done is None:
            done = {}
        wanted = list(dict.fromkeys(arguments))
        missing = [argument for argument in wanted if argument not in done]
        kept = [argument for argument in wanted if argument in done]
        if kept and freshness.verifying():
            with freshness.made_afresh():
                fresh = self._fills_of(kind, kept)
            for argument in kept:
                freshness.check(("fill", kind, version, argument), done[argument], fresh[argument])
        if missing:
            # A filler that reads rows per hole (a page's thirty stars) is told every argument
            # it is about to fill first, so that it reads them in one query.
            prefetch = getattr(fill, "prefetch", None)
            if prefetch is not None:
                prefetch(missing)
            done = {**done, **{argument: _encoded(fill(argument)) for argument in missing}}
            if not freshness.checking():
                _fills.put(name, done, sum(len(value) + len(key) for key, value in done.items()))
        return done

    def encoded(self, text: str) -> bytes:
        """``text`` with its holes filled, as UTF-8: filled once per process for each
        version of what its fillers depend on (a page's 500 price holes are filled once per
        trade, not on every request)."""
        if _HOLE_START not in text:
            return text.encode()
        parts, holes, kinds = _split(text)
        versions = tuple(sorted((kind, repr(self._filler(kind)[0])) for kind in kinds))
        name = (text, versions)
        if freshness.checking():
            return self._fill(parts, holes, kinds)
        filled = _filled.get(name)
        if filled is None:
            filled = self._fill(parts, holes, kinds)
            _filled.put(name, filled, len(filled))
        elif freshness.verifying():
            with freshness.made_afresh():
                freshness.check(("filled", versions), filled, self._fill(parts, holes, kinds))
        return filled

    def _fill(
        self, parts: tuple[bytes, ...], holes: tuple[tuple[str, str], ...], kinds: frozenset[str]
    ) -> bytes:
        fills = {
            kind: self._fills_of(kind, [arg for each, arg in holes if each == kind])
            for kind in kinds
        }
        out = [parts[0]]
        for (kind, argument), after in zip(holes, parts[1:], strict=True):
            out.append(fills[kind][argument])
            out.append(after)
        return b"".join(out)


# Pages --------------------------------------------------------------------------------------

# Where a kept piece goes in the page around it: random per process, so nothing on the page
# (a search, a name) can contain it.
_SLOT = f"<!--kept {hmac.new(TAG.encode(), b'slot', 'sha256').hexdigest()[:16]}-->"
_SAFE_SLOT = mark_safe(_SLOT)  # noqa: S308 - a constant comment of our own


def render_piece(template_name: str, context: Mapping[str, Any], *, facts: Facts) -> str:
    """A template rendered for keeping: with no request, so no context processor runs and
    nothing of the reader (user, CSRF token, messages) can reach it. ``facts`` are those the
    piece is keyed by; template tags read what they depend on from them (``kept_facts``)."""
    return get_template(template_name).render({**context, KEPT_FACTS: facts})


KEPT_FACTS = "kept_facts"


@dataclass(frozen=True, slots=True)
class Frame:
    """A template's output kept under fewer facts than what goes into it, with named places
    left for that (a table's heading and pages around rows that each trade changes): a change
    then costs joining strings rather than rendering the template."""

    texts: tuple[str, ...]  # around the places, one more than there are places
    places: tuple[str, ...]  # the names of the places the template showed, in order

    def join(self, **html: str) -> str:
        """The frame with each place filled; a place the template did not show (an empty
        state in place of a table) takes nothing."""
        out = [self.texts[0]]
        for place, text in zip(self.places, self.texts[1:], strict=True):
            out += [html[place], text]
        return "".join(out)

    def split(self, place: str, **html: str) -> tuple[str, str]:
        """The frame filled as by ``join`` but for ``place``: the texts before and after it
        (what the page around a kept piece fills per request, such as a reader's own form)."""
        before: list[str] = [self.texts[0]]
        after: list[str] = []
        out = before
        for name, text in zip(self.places, self.texts[1:], strict=True):
            if name == place:
                out = after
            else:
                out.append(html[name])
            out.append(text)
        if place not in self.places:
            raise ValueError(f"the frame has no place {place!r}")
        return "".join(before), "".join(after)

    def __len__(self) -> int:  # its share of this process's budget
        return sum(map(len, self.texts))


_PLACE = re.compile(f"<!--kept place {TAG} ([a-z_]+)-->")


def render_frame(
    template_name: str, context: Mapping[str, Any], *, facts: Facts, places: Iterable[str]
) -> Frame:
    """``render_piece`` with each of ``places`` (shown as ``{{ places.NAME }}``) left empty,
    to be filled by ``Frame.join``."""
    marks = {name: mark_safe(f"<!--kept place {TAG} {name}-->") for name in places}  # noqa: S308
    parts = _PLACE.split(render_piece(template_name, {**context, "places": marks}, facts=facts))
    return Frame(tuple(parts[::2]), tuple(parts[1::2]))


def respond(
    request: HttpRequest,
    template_name: str,
    context: Mapping[str, Any],
    *,
    pieces: Iterable[str] = (),
    status: int = 200,
    per_reader: bool = False,
) -> HttpResponse:
    """Render the page around kept pieces for this request, then fill every hole.

    The template shows each piece with ``{{ slots.NAME }}``; the kept HTML goes into the
    response as bytes split once per process, so a 150 kB piece is not copied into the
    template's output and encoded again on every request.

    ``per_reader``: the template shows nothing of the request but the signed-in reader's name,
    the URL, the messages and the CSRF token (``base.html`` and a page of the context's
    values). Then a signed-in reader's render is kept in this process (``reader_frames``) and
    only the CSRF token is put in per request.
    """
    names = list(pieces)
    kept = [context[name] for name in names]
    around = None
    if per_reader:
        around = reader_frames.kept(
            request,
            template_name,
            context,
            names,
            render=lambda: _render_around(
                request, template_name, context, names, csrf_token=reader_frames.CSRF_PLACE
            ),
        )
    if around is None:
        around = _render_around(request, template_name, context, names)
    if len(around) != len(kept) + 1:
        raise AssertionError(f"{template_name} shows {len(around) - 1} of {len(kept)} pieces")
    fill = Fill(request)
    token = reader_frames.Token(request)
    out = [token.put(fill.encoded(around[0]))]
    for html, after in zip(kept, around[1:], strict=True):
        out += [fill.encoded(html), token.put(fill.encoded(after))]
    response = HttpResponse(b"".join(out), status=status)
    # FillHolesMiddleware need not look through the page again for holes.
    response.holes_filled = True  # type: ignore[attr-defined]
    if per_reader:
        response.fill_versions = fill.versions()  # type: ignore[attr-defined]
    return response


def _render_around(
    request: HttpRequest,
    template_name: str,
    context: Mapping[str, Any],
    names: list[str],
    **extra: object,
) -> tuple[str, ...]:
    page = get_template(template_name).render(
        {**context, "slots": dict.fromkeys(names, _SAFE_SLOT), **extra}, request
    )
    return tuple(page.split(_SLOT))


def is_anonymous_read(request: HttpRequest) -> bool:
    """A GET or HEAD from someone without a session or pending messages: every such reader of
    a URL sees the same bytes."""
    return (
        request.method in ("GET", "HEAD")
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


# What whole anonymous pages vary with besides their facts: the market's clock bucket, which
# the price holes' day change and the term pages' charts are drawn at on purpose (an app
# registers it, in its ``ready``; this module knows no app).
_page_clocks: list[Callable[[], object]] = []


def pages_vary_with(clock: Callable[[], object]) -> None:
    """Key every kept anonymous page by ``clock()`` too (a time bucket, read per request)."""
    _page_clocks.append(clock)


def anonymous_page(
    request: HttpRequest, facts: Facts, make: Callable[[], HttpResponse]
) -> HttpResponse:
    """The whole page for an anonymous reader, kept under its URL and the facts it shows (and,
    through them, the prices its holes were filled with); anyone else gets ``make()``."""
    if not is_anonymous_read(request) or settings.PAGE_CACHE_SECONDS <= 0 or freshness.checking():
        return make()
    clocks = tuple(clock() for clock in _page_clocks)
    name = key("page", request.get_full_path(), facts.key_parts(), clocks)
    found = in_process.get(name)
    if found is None:
        found = cache.get(name)
        if found is None:
            response = make()
            if response.status_code != 200 or response.cookies or response.streaming:
                return response
            found = (response.content, response["Content-Type"])
            cache.set(name, found, settings.PAGE_CACHE_SECONDS)
        elif freshness.verifying():
            _check_page(name, found, make)
        in_process.put(name, found, len(found[0]))
    elif freshness.verifying():
        _check_page(name, found, make)
    response = HttpResponse(found[0], content_type=found[1])
    # Signed-in readers see another page at the same URL: no shared HTTP cache may mix them.
    response["Vary"] = "Cookie"
    return response


def whole_page(
    request: HttpRequest, facts: Facts, make: Callable[[], HttpResponse]
) -> HttpResponse:
    """``anonymous_page``, and a signed-in reader's whole page kept in this process for them
    (``reader_frames.page``): for views whose ``respond`` is ``per_reader``."""
    if is_anonymous_read(request) or settings.PAGE_CACHE_SECONDS <= 0:
        return anonymous_page(request, facts, make)
    clocks = tuple(clock() for clock in _page_clocks)
    versions = Fill(request).versions
    return reader_frames.page(request, (facts.key_parts(), clocks), make, versions=versions)


def _check_page(name: str, found: tuple[bytes, str], make: Callable[[], HttpResponse]) -> None:
    # Compared as kept: holes the middleware fills are filled alike in both (and the fills are
    # checked on their own, in Fill.encoded).
    with freshness.made_afresh():
        fresh = make()
    freshness.check(name, found, (fresh.content, fresh["Content-Type"]))


class FillHolesMiddleware:
    """Fill the holes of any HTML response that still has some: a page rendered with plain
    ``render()`` that shows highlighted text (search results, a reader's front page) is then
    as right as one rendered by ``respond``, with nothing to remember."""

    MARK = _HOLE_START.encode()

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not response.streaming
            and not getattr(response, "holes_filled", False)  # respond() filled them
            and response.get("Content-Type", "").startswith("text/html")
            and self.MARK in response.content
        ):
            replace_content(response, Fill(request).encoded(response.content.decode()))
        return response
