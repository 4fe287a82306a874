"""The market table: every term's figures, each kept by the term's own stamp, then searched,
ordered and paged in Python.

A trade moves one term's stamp (its row trigger), so it costs the table one term's figures
(one query for that term) and one row's HTML; the other terms' figures and rows are read from
the store. What a row shows beyond its term's row moves with other facts, which are in each
key too: the mentions recorded and the papers (recent mentions of visible papers), and the
clock bucket (a day's and a week's change, the week's sparkline, trades in the last seven
days), after which every term's figures are made again in one query.

Ordering a couple of hundred small values is far cheaper than the database's query that
annotates every term with its figures, which is why the table is not ordered there any more.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from peerrevenue import keep, replicas

from . import charts, curve, series, stats
from .models import Term
from .tickers import TICKER_SECONDS, bucket_time, clock_bucket

KEPT_SECONDS = 2 * TICKER_SECONDS


@dataclass(frozen=True, slots=True)
class Figures:
    """One term's line of the market table: µ¢, basis points and counts."""

    pk: int
    stamp: int  # the term's stamp these figures were made under (their key)
    slug: str
    phrase: str
    aliases: tuple[str, ...]
    status: str
    status_reason: str
    supply: int
    price_now: int
    price_1d: int
    price_7d: int
    change_1d_bp: int
    change_7d_bp: int
    holder_count: int
    recent_mentions: int
    traded_7d: int
    latest_trade: tuple[dt.datetime, int] | None  # (time, price after), for the sparkline
    # Sort keys, made once rather than on every comparison.
    phrase_lower: str = ""
    move_1d_bp: int = 0
    move_7d_bp: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "phrase_lower", self.phrase.lower())
        object.__setattr__(self, "move_1d_bp", abs(self.change_1d_bp))
        object.__setattr__(self, "move_7d_bp", abs(self.change_7d_bp))

    def get_absolute_url(self) -> str:
        return reverse("market:term", args=[self.slug])

    def matches(self, search: str) -> bool:
        """The phrase or an alias contains ``search``, whatever the case."""
        wanted = search.casefold()
        return any(wanted in text.casefold() for text in (self.phrase, *self.aliases))


def _stamps(facts: keep.Facts) -> dict[int, int]:
    """Each term on the market (not delisted) by id, with its stamp, from the request's facts."""
    return {int(pk): stamp for pk, stamp in (facts["market_stamps"] or {}).items()}


@dataclass(frozen=True, slots=True)
class _Then:
    """What a term's figures take from the past, which trades made now cannot change: its
    supply a day and a week ago, and its mentions in the recent announcement days."""

    supply_1d: int
    supply_7d: int
    recent_mentions: int


def _then(facts: keep.Facts, bucket: int) -> dict[int, _Then]:
    """Every term's past, kept per clock bucket, the facts that move mentions and the term set
    (a term relisted within the bucket has a past too: one query each, shared by every
    process)."""

    def make() -> dict[int, _Then]:
        terms = Term.objects.exclude(status=Term.Status.DELISTED)
        return {
            pk: _Then(day, week, recent)
            for pk, day, week, recent in stats.pasts(terms=terms, now=bucket_time(bucket))
        }

    name = keep.key("market-then", facts["terms"], facts["mentions"], facts["papers"], bucket)
    return keep.get_or_make(name, make, seconds=KEPT_SECONDS)


# A term's present: its row, its holders, its shares traded in the last week and its latest
# trade (the sparkline's open hour). Raw SQL, one statement for any number of terms: the ORM's
# compilation of the same would cost more than running it, on the request right after a trade.
_NOW_SQL = """
SELECT t.id, t.slug, t.phrase, t.aliases, t.status, t.status_reason, t.supply, t.p0, t.k,
       (SELECT count(*) FROM market_holding AS h WHERE h.term_id = t.id AND h.shares > 0),
       (SELECT coalesce(sum(r.shares), 0) FROM market_trade AS r
         WHERE r.term_id = t.id AND r.created_at >= %s),
       latest.created_at, latest.price_after
  FROM market_term AS t
  LEFT JOIN LATERAL (
       SELECT r.created_at, r.price_after FROM market_trade AS r
        WHERE r.term_id = t.id ORDER BY r.term_version DESC LIMIT 1
  ) AS latest ON true
 WHERE t.id = ANY(%s) AND t.status <> 'delisted'
"""


def _aliases(value: object) -> tuple[str, ...]:
    # Django's connections hand jsonb to Python as its text (JSONField parses it itself).
    found = json.loads(value) if isinstance(value, str) else value
    return tuple(a for a in found if isinstance(a, str)) if isinstance(found, list) else ()


def _figures_key(pk: int, stamp: int, facts: keep.Facts, bucket: int) -> tuple[object, ...]:
    # A plain tuple, not a hashed key: figures are kept in this process only, and a request
    # after a trade asks for every term's (hashing two hundred keys would cost more than the
    # query that makes one term's figures again).
    return ("term-figures", pk, stamp, facts["mentions"], facts["papers"], bucket)


def every_term(facts: keep.Facts, *, now: dt.datetime) -> list[Figures]:
    """The figures of every term on the market, as of the request's facts: kept ones from the
    store in one look-up, the others from one query (and the bucket's past, kept)."""
    bucket = clock_bucket()
    known = _stamps(facts)
    names = {pk: _figures_key(pk, stamp, facts, bucket) for pk, stamp in known.items()}
    # In this process only: one light statement makes any number of them again, which costs
    # about what the shared cache's round trips would.
    found = keep.get_or_make_many(
        names, lambda missing: _make_figures(missing, known, facts, bucket, now), shared=False
    )
    return [found[pk] for pk in names if pk in found]


def _make_figures(
    missing: list[int], known: dict[int, int], facts: keep.Facts, bucket: int, now: dt.datetime
) -> dict[int, Figures]:
    """The figures of the terms ``missing``, from one query (and the bucket's past, kept)."""
    then = _then(facts, bucket)
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(_NOW_SQL, [now - dt.timedelta(days=7), missing])
        present = cursor.fetchall()
    made: dict[int, Figures] = {}
    for row in present:
        pk, slug, phrase, aliases, status, reason, supply, p0, k, holders, traded = row[:11]
        latest_at, latest_price = row[11:]
        past = then.get(pk, _Then(0, 0, 0))  # listed after the bucket began: no past yet
        price_now = curve.price(supply, p0=p0, k=k)
        price_1d = curve.price(past.supply_1d, p0=p0, k=k)
        price_7d = curve.price(past.supply_7d, p0=p0, k=k)
        # Kept under the stamp read before the query: a trade in between is kept under the
        # old stamp, which the next request no longer asks for.
        made[pk] = Figures(
            pk=pk,
            stamp=known[pk],
            slug=slug,
            phrase=phrase,
            aliases=_aliases(aliases),
            status=status,
            status_reason=reason,
            supply=supply,
            price_now=price_now,
            price_1d=price_1d,
            price_7d=price_7d,
            change_1d_bp=stats.change_bp(price_now, price_1d),
            change_7d_bp=stats.change_bp(price_now, price_7d),
            holder_count=holders,
            recent_mentions=past.recent_mentions,
            traded_7d=traded,
            latest_trade=(latest_at, latest_price) if latest_at is not None else None,
        )
    return made


def table(
    facts: keep.Facts, *, search: str, sort: str, descending: bool, now: dt.datetime
) -> list[Figures]:
    """Every term on the market matching ``search``, in the order asked for: kept in this
    process under every term's stamp (a trade of any term may reorder the table) and what the
    figures depend on besides."""
    return keep.get_or_make(
        keep.key(
            "market-order",
            facts["market_stamps"],
            facts["mentions"],
            facts["papers"],
            clock_bucket(),
            search,
            sort,
            descending,
        ),
        lambda: ordered(
            every_term(facts, now=now), search=search, sort=sort, descending=descending
        ),
        shared=False,
    )


def ordered(
    figures: Sequence[Figures], *, search: str, sort: str, descending: bool
) -> list[Figures]:
    """``figures`` matching ``search``, in the order ``stats.market_terms`` gives: a view of
    ``stats.MARKET_VIEWS`` from the top down, or a column of ``stats.MARKET_SORTS``; then by
    phrase and id."""
    shown = [f for f in figures if f.matches(search)] if search else list(figures)
    shown.sort(key=lambda f: (f.phrase_lower, f.pk))
    if sort in stats.MARKET_VIEWS:
        columns = stats.MARKET_VIEWS[sort]
        shown.sort(key=lambda f: tuple(getattr(f, c) for c in columns), reverse=True)
    else:
        column = stats.MARKET_SORTS.get(sort, "phrase_lower")
        if column != "phrase_lower":
            # Python's sort is stable: ties keep the phrase order, whichever way this goes.
            shown.sort(key=lambda f: getattr(f, column), reverse=descending)
        elif descending:
            shown.sort(key=lambda f: f.phrase_lower, reverse=True)
    return shown


def rows(figures: Sequence[Figures], *, facts: keep.Facts, now: dt.datetime) -> list[SafeString]:
    """The table's rows, kept under the same key as their figures: after a trade only that
    term's row is rendered again, with its one sparkline."""
    bucket = clock_bucket()
    names = {
        f.pk: keep.key("market-row", _figures_key(f.pk, f.stamp, facts, bucket)) for f in figures
    }

    def make(missing_pks: list[int]) -> dict[int, str]:
        missing = [f for f in figures if f.pk in set(missing_pks)]
        lines = series.sparklines(
            terms=missing, now=now, latest={f.pk: f.latest_trade for f in missing}
        )
        made = {}
        for term in missing:
            spark = charts.sparkline(lines[term.pk], label=f"{term.phrase}, last 7 days")
            made[term.pk] = keep.render_piece(
                "market/_index_row.html", {"term": term, "spark": spark}, facts=facts
            )
        return made

    kept = keep.get_or_make_many(names, make, size=len, seconds=KEPT_SECONDS)
    return [mark_safe(kept[f.pk]) for f in figures]  # noqa: S308 - our rows
