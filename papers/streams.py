"""A signed-in reader's own front page: one stream merged from everything they follow.

Each source is a filter on listings (today: the categories the reader watches). A later app
adds its own source (saved searches) through ``STREAM_SOURCES`` without papers importing it.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
from collections.abc import Callable, Sequence

from django.db import transaction
from django.db.models import Case, F, IntegerField, Q, Value, When

from .models import Listing, ListingQuerySet, ReadingMark


def watched_categories(*, user) -> Q:
    return Q(category__watch__user=user)


# Callables of ``user`` returning a Q on Listing. Append to merge another source into every
# reader's front page, e.g. ``STREAM_SOURCES.append(saved_search_matches)`` in a later app's
# ``AppConfig.ready()``, where the Q may be ``Q(paper__in=<a subquery of matching papers>)``.
STREAM_SOURCES: list[Callable[..., Q]] = [watched_categories]


def front_page(*, user, sources: Sequence[Callable[..., Q]] | None = None) -> ListingQuerySet:
    """The reader's merged stream, newest day first, ascending arXiv id within a day, from
    ``sources`` (every one of STREAM_SOURCES unless told).

    A paper that two sources bring on the same day (a cross-list into two watched
    categories) appears once, labelled with its primary category when that is one of them.
    """
    chosen = STREAM_SOURCES if sources is None else sources
    condition = functools.reduce(operator.or_, (source(user=user) for source in chosen))
    return (
        Listing.objects.filter(condition, announce_type__in=Listing.STREAM_TYPES)
        .visible()
        .select_related("paper", "category")
        .annotate(
            away=Case(
                When(category__code=F("paper__primary_category"), then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            )
        )
        .order_by("-date", "paper__arxiv_id", "away", "category__code")
        .distinct("date", "paper__arxiv_id")
    )


def record_visit(*, user, newest: dt.date | None) -> dt.date | None:
    """Note that the reader has seen their stream up to `newest`; return the divider's date.

    Days after the returned date are "new since your last visit". The divider moves only
    when a newer day arrives, so reloading the page keeps it where it was.
    """
    mark = ReadingMark.objects.filter(user=user).first()
    if mark is not None and (
        newest is None or (mark.seen_through is not None and newest <= mark.seen_through)
    ):
        return mark.new_after  # most views: nothing to move, so no lock and no write
    with transaction.atomic():
        # Two tabs opening the page at once must not both move the divider.
        mark, _ = ReadingMark.objects.select_for_update().get_or_create(user=user)
        if newest is not None and (mark.seen_through is None or newest > mark.seen_through):
            mark.new_after = mark.seen_through
            mark.seen_through = newest
            mark.save(update_fields=["new_after", "seen_through", "updated_at"])
    return mark.new_after
