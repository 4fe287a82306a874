"""Server-rendered SVG charts: the sparkline in the market table and a term's price chart.

Pure functions of plain values (times, µ¢ prices, dividend days) that return SVG markup; no
database and no JavaScript. Every piece of text (phrases, labels) goes through ``format_html``
so the markup is safe to embed even when a phrase contains ``<`` or quotes.
Colours come from the stylesheet (``currentColor`` and classes), so dark mode just works.

Prices are step functions: a price holds until the next trade moves it. A series is a list
of ``(time, price from then on)`` whose last point is "now".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Protocol

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from papers.calendar import announced_at

from .units import format_credits

Series = Sequence[tuple[dt.datetime, int]]


# Read-only properties, so that a frozen dataclass (stats.DividendDay) satisfies it.
class DividendMark(Protocol):
    @property
    def date(self) -> dt.date: ...
    @property
    def papers(self) -> int: ...
    @property
    def per_share(self) -> int: ...
    @property
    def amount(self) -> int:
        """µ¢ paid to all holders that day: a day that paid nothing gets no mark."""
        ...


def _num(value: float) -> str:
    # One decimal is plenty for screen coordinates and keeps the markup small.
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def svg_open(
    *, css: str, width: int, height: int, chart_id: str, label: str, summary: str
) -> SafeString:
    """A chart's opening ``<svg>`` with its title and description, named for screen readers."""
    return format_html(
        '<svg class="{}" viewBox="0 0 {} {}" role="img" '
        'aria-labelledby="{}-title {}-desc" preserveAspectRatio="xMidYMid meet">'
        '<title id="{}-title">{}</title><desc id="{}-desc">{}</desc>',
        css,
        width,
        height,
        chart_id,
        chart_id,
        chart_id,
        label,
        chart_id,
        summary,
    )


def value_grid(
    ticks: Sequence[int],
    *,
    y: Callable[[int], float],
    label: Callable[[int], str],
    left: float,
    right: float,
    css_class: str,
) -> list[str]:
    """A chart's horizontal grid lines from ``left`` to ``right``, each labelled at its left end
    (shared by the price, net-worth and mention-trend charts)."""
    parts: list[str] = [format_html('<g class="{}">', css_class)]
    for tick in ticks:
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text x="{}" y="{}" text-anchor="end" dominant-baseline="middle">{}</text>',
                _num(left),
                _num(right),
                _num(y(tick)),
                _num(y(tick)),
                _num(left - 6),
                _num(y(tick)),
                label(tick),
            )
        )
    parts.append("</g>")
    return parts


def _step_points(xy: Sequence[tuple[float, float]]) -> str:
    """A polyline that holds each price flat until the next point, then jumps."""
    out: list[tuple[float, float]] = []
    for index, (x, y) in enumerate(xy):
        if index:
            out.append((x, out[-1][1]))
        out.append((x, y))
    # Drop repeats (a flat step at the very end) so the markup stays small.
    out = [point for index, point in enumerate(out) if not index or point != out[index - 1]]
    return " ".join(f"{_num(x)},{_num(y)}" for x, y in out)


def _trend(first: int, last: int) -> str:
    return "up" if last > first else "down" if last < first else "flat"


# The axes label credits with two decimals: ticks closer than 0.01 credit would print the same
# label twice (1.02, 1.02, 1.01, …).
LABEL_STEP = 10_000


def nice_ticks(
    low: int, high: int, *, target: int = 4, min_step: int = LABEL_STEP
) -> tuple[int, int, list[int]]:
    """Round tick values (1, 2 or 5 × 10ⁿ µ¢ apart, and at least ``min_step``) covering
    ``low..high``, so that every label, written to two decimals, is distinct.

    Returns (axis low, axis high, ticks); a flat range is widened a little so it has height.
    """
    if high < low:
        low, high = high, low
    if high == low:
        pad = max(high // 20, 1)
        low, high = max(low - pad, 0), high + pad
    raw = max(-(-(high - low) // target), min_step, 1)
    magnitude = 10 ** (len(str(raw)) - 1)
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    axis_low = low // step * step
    axis_high = -(-high // step) * step
    return axis_low, axis_high, list(range(axis_low, axis_high + 1, step))


def _time_ticks(start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, str]]:
    """Ticks on whole hours (short spans) or UTC midnights, about six of them."""
    span = (end - start).total_seconds()
    if span <= 2 * 86_400:
        step_hours = next((h for h in (1, 2, 3, 6, 12) if span / (h * 3600) <= 5), 24)
        step = dt.timedelta(hours=step_hours)
        first = start.replace(minute=0, second=0, microsecond=0)
        first += dt.timedelta(hours=(-first.hour) % step_hours)

        def label(t: dt.datetime) -> str:
            return f"{t:%H:%M}"
    else:
        days = span / 86_400
        step_days = next((d for d in (1, 2, 7, 14, 30, 61, 91, 182) if days / d <= 5), 365)
        step = dt.timedelta(days=step_days)
        first = start.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)

        def label(t: dt.datetime) -> str:
            return f"{t:%b %Y}" if days > 300 else f"{t.day} {t:%b}"

    if first < start:
        first += step
    ticks = []
    tick = first
    while tick <= end:
        ticks.append((tick, label(tick)))
        tick += step
    if len(ticks) < 2:
        # A young chart spans less than one step: label its two ends instead.
        return [(start, _short_time(start)), (end, _short_time(end))]
    return ticks


def _short_time(t: dt.datetime) -> str:
    return f"{t.day} {t:%b %H:%M}"


def sparkline(
    points: Series, *, label: str, width: int = 120, height: int = 28, pad: int = 3
) -> SafeString:
    """A small price line. ``label`` names it for screen readers (e.g. "KV cache, last 7
    days"); the first and last prices are added to it."""
    if not points:
        raise ValueError("a sparkline needs at least one point")
    points = list(points) if len(points) > 1 else [points[0], points[0]]
    t0, t1 = points[0][0].timestamp(), points[-1][0].timestamp()
    prices = [price for _, price in points]
    low, high = min(prices), max(prices)

    def x(t: dt.datetime) -> float:
        return pad + (t.timestamp() - t0) / (t1 - t0) * (width - 2 * pad) if t1 > t0 else pad

    def y(price: int) -> float:
        if high == low:
            return height / 2
        return pad + (high - price) / (high - low) * (height - 2 * pad)

    first, last = prices[0], prices[-1]
    trend = _trend(first, last)
    words = {"up": "rising", "down": "falling", "flat": "unchanged"}[trend]
    description = (
        f"{label}: {format_credits(first, unit=False)} to {format_credits(last)} ({words})"
    )
    return format_html(
        '<svg class="sparkline sparkline--{}" viewBox="0 0 {} {}" width="{}" height="{}" '
        'role="img" aria-label="{}" focusable="false">'
        '<polyline points="{}" fill="none" stroke="currentColor" stroke-width="1.5" '
        'stroke-linejoin="round"/></svg>',
        trend,
        width,
        height,
        width,
        height,
        description,
        _step_points([(x(t), y(price)) for t, price in points]),
    )


def _day(day: dt.date) -> str:
    return f"{day.day} {day:%b %Y}"


def price_chart(
    points: Series,
    *,
    label: str,
    dividends: Sequence[DividendMark] = (),
    chart_id: str = "price-chart",
    width: int = 480,
    height: int = 250,
) -> SafeString:
    """A term's price over time with labelled axes; dividend days are marked with a dashed
    line and a dot whose tooltip says what was paid.

    The time axis spans the price history only (a dividend day outside it, or one that paid
    nothing, gets no mark), so a young term's trades spread across the chart instead of
    crowding its right edge. The viewBox is narrow enough that the stylesheet's label size
    stays at 12 px or more once a phone shrinks the chart to its width.
    """
    if not points:
        raise ValueError("a price chart needs at least one point")
    left, right, top, bottom = 60, 22, 20, 34
    plot_w, plot_h = width - left - right, height - top - bottom

    start, end = min(t for t, _ in points), max(t for t, _ in points)
    if end <= start:
        end = start + dt.timedelta(hours=1)
    dividends = [
        day for day in dividends if day.amount > 0 and start <= announced_at(day.date) <= end
    ]
    prices = [price for _, price in points]
    axis_low, axis_high, price_ticks = nice_ticks(min(prices), max(prices))

    def x(t: dt.datetime) -> float:
        return left + (t - start).total_seconds() / (end - start).total_seconds() * plot_w

    def y(price: int) -> float:
        return top + (axis_high - price) / (axis_high - axis_low) * plot_h

    parts: list[str] = []
    first, last = prices[0], prices[-1]
    summary = (
        f"From {format_credits(first)} on {_day(start)} to "
        f"{format_credits(last)} on {_day(points[-1][0])}; "
        f"lowest {format_credits(min(prices), unit=False)}, "
        f"highest {format_credits(max(prices), unit=False)}."
    )
    if dividends:
        paid = sum(d.papers for d in dividends)
        summary += f" Dividends for {paid} mentioning paper{'s' if paid != 1 else ''} marked."
    parts.append(
        svg_open(
            css=f"price-chart price-chart--{_trend(first, last)}",
            width=width,
            height=height,
            chart_id=chart_id,
            label=label,
            summary=summary,
        )
    )
    parts += value_grid(
        price_ticks,
        y=y,
        label=lambda tick: format_credits(tick, unit=False),
        left=left,
        right=width - right,
        css_class="price-chart__grid",
    )
    # Time axis.
    axis_y = _num(top + plot_h)
    parts.append('<g class="price-chart__axis">')
    parts.append(
        format_html('<line x1="{}" x2="{}" y1="{}" y2="{}"/>', left, width - right, axis_y, axis_y)
    )
    parts.append(format_html('<line x1="{}" x2="{}" y1="{}" y2="{}"/>', left, left, top, axis_y))
    for tick, text in _time_ticks(start, end):
        tx = _num(x(tick))
        # A label centred on a tick near either edge would be cut off by the viewBox.
        anchor = (
            "end" if x(tick) > width - right - 40 else "start" if x(tick) < left + 40 else "middle"
        )
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<text x="{}" y="{}" text-anchor="{}">{}</text>',
                tx,
                tx,
                axis_y,
                _num(top + plot_h + 4),
                tx,
                _num(height - 10),
                anchor,
                text,
            )
        )
    parts.append(
        format_html(
            '<text class="price-chart__unit" x="{}" y="{}">credits a share</text>', left, top - 6
        )
    )
    parts.append("</g>")
    # Dividend days.
    for day in dividends:
        dx = _num(x(announced_at(day.date)))
        papers = f"{day.papers} mentioning paper{'s' if day.papers != 1 else ''}"
        parts.append(
            format_html(
                '<g class="price-chart__dividend"><line x1="{}" x2="{}" y1="{}" y2="{}"/>'
                '<circle cx="{}" cy="{}" r="4"><title>Dividend {}: {}, {} credits a share'
                "</title></circle></g>",
                dx,
                dx,
                top,
                axis_y,
                dx,
                _num(top + plot_h - 4),
                _day(day.date),
                papers,
                format_credits(day.per_share * day.papers, unit=False),
            )
        )
    parts.append(
        format_html(
            '<polyline class="price-chart__line" points="{}" fill="none" stroke="currentColor" '
            'stroke-width="2" stroke-linejoin="round"/>',
            _step_points([(x(t), y(price)) for t, price in points]),
        )
    )
    parts.append("</svg>")
    # Every part above was built by format_html (escaped) or is a constant.
    return mark_safe("".join(parts))  # noqa: S308


def price_changes(points: Series, *, limit: int = 12) -> list[tuple[dt.datetime, int]]:
    """The chart's text alternative: the most recent ``limit`` moves, newest first (a run of
    equal prices is one row, at the time the price was first reached)."""
    changes: list[tuple[dt.datetime, int]] = []
    for at, price in points:
        if not changes or changes[-1][1] != price:
            changes.append((at, price))
    return changes[::-1][:limit]


__all__ = ["nice_ticks", "price_changes", "price_chart", "sparkline", "svg_open", "value_grid"]
