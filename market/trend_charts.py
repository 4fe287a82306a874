"""Server-rendered SVG for the charts of a trader's net worth and a term's weekly mentions.

Pure functions of plain values that return SVG markup, like ``market.charts``: no database, no
JavaScript. Text goes through ``format_html``; colours come from the stylesheet. Each chart has
a ``<title>`` and a ``<desc>`` that says in words what the picture shows; the pages add a table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Protocol

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from .charts import nice_ticks, svg_open, value_grid
from .units import format_credits

WIDTH, HEIGHT = 560, 240
RIGHT, TOP, BOTTOM = 12, 30, 30
# Phones draw the text at 22 user units (see traders.css); a digit is about 0.56 em wide.
LABEL_CHAR_WIDTH = 12.5
# The widest a week's bar is drawn: with a few weeks of data a bar filling its slot (a single
# week's is the whole plot) reads as a block of colour rather than as one week of several.
MAX_BAR_WIDTH = 36


# Read-only properties, so that frozen dataclasses (networth.WorthPoint) satisfy them.
class WorthPoint(Protocol):
    @property
    def date(self) -> dt.date: ...
    @property
    def net_worth(self) -> int: ...


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _day(day: dt.date) -> str:
    return f"{day.day} {day:%b %Y}"


def _date_ticks(
    start: dt.date, end: dt.date, *, most: int = 4, unit: int = 1
) -> list[tuple[dt.date, str]]:
    """At most ``most`` dates from ``start`` to ``end``, both ends included, evenly spaced in
    whole ``unit``s of days (7 for weekly bars), labelled "3 Nov" (or "Nov 2026" over long
    spans)."""
    units = (end - start).days // unit
    days = (end - start).days

    def label(day: dt.date) -> str:
        return f"{day:%b %Y}" if days > 300 else f"{day.day} {day:%b}"

    if units <= 0:
        return [(start, label(start))]
    count = min(most, units + 1)
    offsets = sorted({round(i * units / (count - 1)) for i in range(count)})
    return [
        (start + dt.timedelta(days=o * unit), label(start + dt.timedelta(days=o * unit)))
        for o in offsets
    ]


def _frame(*, css: str, chart_id: str, label: str, summary: str) -> str:
    return svg_open(
        css=f"trend-chart {css}",
        width=WIDTH,
        height=HEIGHT,
        chart_id=chart_id,
        label=label,
        summary=summary,
    )


def _left_margin(labels: Sequence[str]) -> int:
    """Room for the longest value label at the phone's text size, so none is clipped."""
    return round(max(len(label) for label in labels) * LABEL_CHAR_WIDTH) + 12


def _date_axis(ticks: Sequence[tuple[dt.date, str]], x, left: int) -> list[str]:
    axis_y = _num(HEIGHT - BOTTOM)
    parts = [
        '<g class="trend-chart__axis">',
        format_html('<line x1="{}" x2="{}" y1="{}" y2="{}"/>', left, WIDTH - RIGHT, axis_y, axis_y),
    ]
    for index, (day, text) in enumerate(ticks):
        tx = x(day)
        # The first label starts at its tick and the last ends at it, so neither is clipped.
        anchor = "start" if index == 0 else "end" if index == len(ticks) - 1 else "middle"
        if len(ticks) == 1:
            anchor = "middle"
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text x="{}" y="{}" text-anchor="{}">{}</text>',
                _num(tx),
                _num(tx),
                axis_y,
                _num(HEIGHT - BOTTOM + 4),
                _num(tx),
                HEIGHT - 6,
                anchor,
                text,
            )
        )
    parts.append("</g>")
    return parts


def net_worth_chart(
    points: Sequence[WorthPoint], *, label: str, chart_id: str = "worth-chart"
) -> SafeString:
    """Net worth (µ¢) by day as a line with a dot per day; the last point is "today"."""
    if not points:
        raise ValueError("a net-worth chart needs at least one point")
    start, end = points[0].date, points[-1].date
    values = [p.net_worth for p in points]
    low, high, ticks = nice_ticks(min(values), max(values))
    labels = {tick: format_credits(tick, unit=False) for tick in ticks}
    left = _left_margin(list(labels.values()))
    span = max((end - start).days, 1)
    plot_w, plot_h = WIDTH - left - RIGHT, HEIGHT - TOP - BOTTOM

    def x(day: dt.date) -> float:
        if start == end:
            return left + plot_w / 2
        return left + (day - start).days / span * plot_w

    def y(value: int) -> float:
        return TOP + (high - value) / (high - low) * plot_h

    first, last = values[0], values[-1]
    trend = "up" if last > first else "down" if last < first else "flat"
    summary = (
        f"From {format_credits(first)} on {_day(start)} to {format_credits(last)} on "
        f"{_day(end)}; lowest {format_credits(min(values))}, highest {format_credits(max(values))}."
    )
    parts = [_frame(css=f"trend-chart--{trend}", chart_id=chart_id, label=label, summary=summary)]
    parts += value_grid(
        ticks,
        y=y,
        label=labels.__getitem__,
        left=left,
        right=WIDTH - RIGHT,
        css_class="trend-chart__grid",
    )
    parts += _date_axis(_date_ticks(start, end), x, left)
    parts.append(
        format_html(
            '<polyline class="trend-chart__line" points="{}" fill="none" stroke="currentColor" '
            'stroke-width="2.5" stroke-linejoin="round"/>',
            " ".join(f"{_num(x(p.date))},{_num(y(p.net_worth))}" for p in points),
        )
    )
    for point in points:
        parts.append(
            format_html(
                '<circle class="trend-chart__dot" cx="{}" cy="{}" r="3.5"><title>{}: {}</title>'
                "</circle>",
                _num(x(point.date)),
                _num(y(point.net_worth)),
                _day(point.date),
                format_credits(point.net_worth),
            )
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every part is format_html or constant


class WeekCount(Protocol):
    @property
    def week(self) -> dt.date: ...
    @property
    def papers(self) -> int: ...


def mention_trend_chart(
    weeks: Sequence[WeekCount],
    *,
    label: str,
    listed_week: dt.date | None,
    chart_id: str = "mention-trend",
) -> SafeString:
    """Mentioning papers per week as bars, each at most ``MAX_BAR_WIDTH`` wide and labelled at
    its middle; weeks before the listing are drawn muted and the listing week has a dashed line
    labelled "listed"."""
    if not weeks:
        raise ValueError("a mention trend needs at least one week")
    counts = [w.papers for w in weeks]
    _, high, ticks = nice_ticks(0, max(max(counts), 1), target=3, min_step=1)
    left = _left_margin([f"{tick:,}" for tick in ticks])
    plot_w, plot_h = WIDTH - left - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(weeks)
    start = weeks[0].week

    def x(week: dt.date) -> float:
        return left + (week - start).days / 7 * slot

    def y(value: int) -> float:
        return TOP + (high - value) / high * plot_h

    total = sum(counts)
    busiest = max(weeks, key=lambda w: (w.papers, w.week))
    summary = (
        f"{total:,} mentioning paper{'s' if total != 1 else ''} in {len(weeks)} "
        f"week{'s' if len(weeks) != 1 else ''} from {_day(start)}"
    )
    if total:
        most = busiest.papers
        summary += f"; the most in one week, {most:,}, in the week of {_day(busiest.week)}"
    if listed_week is not None:
        before = sum(w.papers for w in weeks if w.week < listed_week)
        after = total - before
        summary += f". Listed in the week of {_day(listed_week)}: {before:,} before"
        summary += f", {after:,} since"
    summary += "."
    parts = [_frame(css="trend-chart--bars", chart_id=chart_id, label=label, summary=summary)]
    parts += value_grid(
        ticks,
        y=y,
        label=lambda value: f"{value:,}",
        left=left,
        right=WIDTH - RIGHT,
        css_class="trend-chart__grid",
    )
    bar_w = min(max(slot * 0.8, 1), MAX_BAR_WIDTH)
    parts.append('<g class="trend-chart__bars">')
    for week in weeks:
        if not week.papers:
            continue
        when = "before" if listed_week is not None and week.week < listed_week else "after"
        parts.append(
            format_html(
                '<rect class="trend-chart__bar trend-chart__bar--{}" x="{}" y="{}" width="{}" '
                'height="{}"><title>Week of {}: {} paper{}</title></rect>',
                when,
                _num(x(week.week) + (slot - bar_w) / 2),
                _num(y(week.papers)),
                _num(bar_w),
                _num(y(0) - y(week.papers)),
                _day(week.week),
                f"{week.papers:,}",
                "" if week.papers == 1 else "s",
            )
        )
    parts.append("</g>")
    end = weeks[-1].week
    # A week's date sits under the middle of its bar, not at the slot's left edge.
    parts += _date_axis(_date_ticks(start, end, unit=7), lambda week: x(week) + slot / 2, left)
    if listed_week is not None and start <= listed_week <= end:
        lx = _num(x(listed_week))
        near_right, near_left = x(listed_week) > WIDTH - 80, x(listed_week) < 110
        anchor = "end" if near_right else "start" if near_left else "middle"
        parts.append(
            format_html(
                '<g class="trend-chart__listed"><line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text x="{}" y="{}" text-anchor="{}">listed</text></g>',
                lx,
                lx,
                TOP,
                _num(HEIGHT - BOTTOM),
                lx,
                TOP - 8,
                anchor,
            )
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every part is format_html or constant
