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

from .charts import nice_ticks
from .units import format_credits

WIDTH, HEIGHT = 560, 240
LEFT, RIGHT, TOP, BOTTOM = 64, 12, 18, 30


class WorthPoint(Protocol):
    date: dt.date
    net_worth: int


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _day(day: dt.date) -> str:
    return f"{day.day} {day:%b %Y}"


def _date_ticks(start: dt.date, end: dt.date, *, most: int = 4) -> list[tuple[dt.date, str]]:
    """About ``most`` evenly spaced dates, labelled "3 Nov" (or "Nov 2026" over long spans)."""
    days = (end - start).days
    if days <= 0:
        return [(start, f"{start.day} {start:%b}")]
    step = max(1, -(-days // most))
    ticks = []
    day = start
    while day <= end:
        label = f"{day:%b %Y}" if days > 300 else f"{day.day} {day:%b}"
        ticks.append((day, label))
        day += dt.timedelta(days=step)
    return ticks


def _frame(*, css: str, chart_id: str, label: str, summary: str) -> str:
    return format_html(
        '<svg class="trend-chart {}" viewBox="0 0 {} {}" role="img" '
        'aria-labelledby="{}-title {}-desc" preserveAspectRatio="xMidYMid meet">'
        '<title id="{}-title">{}</title><desc id="{}-desc">{}</desc>',
        css,
        WIDTH,
        HEIGHT,
        chart_id,
        chart_id,
        chart_id,
        label,
        chart_id,
        summary,
    )


def _value_grid(ticks: Sequence[int], y, text) -> list[str]:
    parts = ['<g class="trend-chart__grid">']
    for tick in ticks:
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>',
                LEFT,
                WIDTH - RIGHT,
                _num(y(tick)),
                _num(y(tick)),
                LEFT - 6,
                _num(y(tick)),
                text(tick),
            )
        )
    parts.append("</g>")
    return parts


def _date_axis(ticks: Sequence[tuple[dt.date, str]], x) -> list[str]:
    axis_y = _num(HEIGHT - BOTTOM)
    parts = [
        '<g class="trend-chart__axis">',
        format_html('<line x1="{}" x2="{}" y1="{}" y2="{}"/>', LEFT, WIDTH - RIGHT, axis_y, axis_y),
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
    span = max((end - start).days, 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(day: dt.date) -> float:
        if start == end:
            return LEFT + plot_w / 2
        return LEFT + (day - start).days / span * plot_w

    def y(value: int) -> float:
        return TOP + (high - value) / (high - low) * plot_h

    first, last = values[0], values[-1]
    trend = "up" if last > first else "down" if last < first else "flat"
    summary = (
        f"From {format_credits(first)} on {_day(start)} to {format_credits(last)} on "
        f"{_day(end)}; lowest {format_credits(min(values))}, highest {format_credits(max(values))}."
    )
    parts = [_frame(css=f"trend-chart--{trend}", chart_id=chart_id, label=label, summary=summary)]
    parts += _value_grid(ticks, y, lambda v: format_credits(v, unit=False))
    parts += _date_axis(_date_ticks(start, end), x)
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
    week: dt.date
    papers: int


def mention_trend_chart(
    weeks: Sequence[WeekCount],
    *,
    label: str,
    listed_week: dt.date | None,
    chart_id: str = "mention-trend",
) -> SafeString:
    """Mentioning papers per week as bars; weeks before the listing are drawn muted and the
    listing week has a dashed line labelled "listed"."""
    if not weeks:
        raise ValueError("a mention trend needs at least one week")
    counts = [w.papers for w in weeks]
    _, high, ticks = nice_ticks(0, max(max(counts), 1), target=3)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(weeks)
    start = weeks[0].week

    def x(week: dt.date) -> float:
        return LEFT + (week - start).days / 7 * slot

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
    parts += _value_grid(ticks, y, lambda v: f"{v:,}")
    bar_w = max(slot * 0.8, 1)
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
    parts += _date_axis([(day, text) for day, text in _date_ticks(start, end)], x)
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
                TOP - 4,
                anchor,
            )
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 - every part is format_html or constant
