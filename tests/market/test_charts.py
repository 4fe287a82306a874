"""The SVG charts: well-formed, labelled for screen readers, escaped, and drawn to scale."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from market.charts import nice_ticks, price_chart, sparkline
from market.stats import DividendDay
from market.units import format_credits

SVG = "{http://www.w3.org/2000/svg}"
START = dt.datetime(2026, 10, 1, 12, 0, tzinfo=dt.UTC)


def parse(markup: str) -> ET.Element:
    # Inline SVG in HTML has no namespace declaration; add one so ElementTree can parse it.
    return ET.fromstring(markup.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))


def polyline_points(markup: str, css_class: str = "") -> list[tuple[float, float]]:
    root = parse(markup)
    lines = [
        el
        for el in root.iter(f"{SVG}polyline")
        if not css_class or css_class in el.get("class", "")
    ]
    pairs = (pair.split(",") for pair in lines[0].attrib["points"].split())
    return [(float(x), float(y)) for x, y in pairs]


def text_at(element: ET.Element, path: str) -> str:
    found = element.find(path)
    assert found is not None and found.text is not None, path
    return found.text


def at(hours: float) -> dt.datetime:
    return START + dt.timedelta(hours=hours)


def test_money_reads_one_way_two_decimals_thousands_separated():
    assert format_credits(1_000_000_000) == "1,000.00 credits"
    assert format_credits(1_000_000) == "1.00 credits"
    assert format_credits(1_050_000, unit=False) == "1.05"
    assert format_credits(5_151_000) == "5.15 credits"
    assert format_credits(5_155_000) == "5.16 credits"  # half away from zero
    assert format_credits(1) == "0.00 credits"
    assert format_credits(-3_000_000) == "\u22123.00 credits"
    assert format_credits(12_500_000, signed=True) == "+12.50 credits"


def test_only_a_quote_breakdown_shows_four_decimals():
    assert format_credits(51_510, places=4) == "0.0515 credits"
    assert format_credits(10_554_500, places=4) == "10.5545 credits"


def test_an_exact_figure_shows_the_decimals_it_has_and_at_least_two():
    assert format_credits(51_510, exact=True) == "0.0515 credits"
    assert format_credits(986_900_000, exact=True) == "986.90 credits"  # not 986.9000
    assert format_credits(1_250_000, exact=True, unit=False) == "1.25"
    assert format_credits(10_550_000, exact=True) == "10.55 credits"
    assert format_credits(10_555_000, exact=True) == "10.555 credits"
    assert format_credits(-9_869_000, exact=True) == "\u22129.869 credits"


def test_sparkline_is_an_accessible_image_with_the_price_range():
    markup = sparkline([(at(0), 1_000_000), (at(5), 1_100_000), (at(24), 1_100_000)], label="Raft")
    root = parse(markup)
    assert root.get("role") == "img"
    assert root.get("aria-label") == "Raft: 1.00 to 1.10 credits (rising)"
    assert "sparkline--up" in root.attrib["class"]
    assert len(list(root.iter(f"{SVG}polyline"))) == 1


def test_sparkline_holds_each_price_until_the_next_trade():
    markup = sparkline(
        [(at(0), 2_000_000), (at(12), 1_000_000), (at(24), 1_000_000)],
        label="x",
        width=100,
        height=20,
        pad=0,
    )
    points = polyline_points(markup)
    # Flat at the top (2.00) until hour 12, then straight down to the bottom, then flat.
    assert points == [(0, 0), (50, 0), (50, 20), (100, 20)]
    assert "sparkline--down" in markup and "(falling)" in markup


def test_sparkline_of_an_unchanged_price_is_a_flat_line_in_the_middle():
    markup = sparkline([(at(0), 1_000_000)], label="idle", width=100, height=20, pad=0)
    assert {y for _, y in polyline_points(markup)} == {10}
    assert "(unchanged)" in markup and "sparkline--flat" in markup


def test_sparkline_escapes_its_label():
    markup = sparkline([(at(0), 1), (at(1), 2)], label='<script>alert("x")</script> & co')
    assert "<script>" not in markup
    assert parse(markup).attrib["aria-label"].startswith('<script>alert("x")</script> & co')


def test_price_chart_has_axes_labels_title_and_description():
    points = [(at(0), 1_000_000), (at(30), 1_050_000), (at(80), 1_100_000), (at(96), 1_100_000)]
    markup = price_chart(points, label="Price of “KV cache”", chart_id="kv")
    root = parse(markup)
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == "kv-title kv-desc"
    assert text_at(root, f"{SVG}title") == "Price of “KV cache”"
    description = text_at(root, f"{SVG}desc")
    assert "From 1.00 credits on 1 Oct 2026 to 1.10 credits on 5 Oct 2026" in description
    labels = [el.text for el in root.iter(f"{SVG}text")]
    assert {"1.00", "1.05", "1.10"} <= set(labels)  # price axis
    assert {"2 Oct", "3 Oct", "4 Oct", "5 Oct"} <= set(labels)  # time axis, at midnights
    assert "credits a share" in labels


def test_price_chart_draws_prices_to_scale():
    points = [(at(0), 1_000_000), (at(50), 1_100_000), (at(100), 1_100_000)]
    markup = price_chart(points, label="x", width=660 + 22, height=20 + 100 + 34)
    line = polyline_points(markup, "price-chart__line")
    # The plot is 600 wide from x=60 and 100 high from y=20; the axis runs 1.00 to 1.10.
    assert line[0] == (60, 120)
    assert line[1] == (360, 120)  # the price holds until the trade halfway
    assert line[2] == (360, 20)
    assert line[-1] == (660, 20)


def test_price_chart_marks_dividend_days_with_what_was_paid():
    points = [(at(0), 1_000_000), (at(100), 1_200_000)]
    days = [DividendDay(date=dt.date(2026, 10, 3), papers=2, per_share=50_000, amount=500_000)]
    markup = price_chart(points, label="x", dividends=days)
    root = parse(markup)
    markers = [g for g in root.iter(f"{SVG}g") if g.get("class") == "price-chart__dividend"]
    assert len(markers) == 1
    assert text_at(markers[0], f"{SVG}circle/{SVG}title") == (
        "Dividend 3 Oct 2026: 2 mentioning papers, 0.10 credits a share"
    )
    assert "Dividends for 2 mentioning papers marked." in text_at(root, f"{SVG}desc")


def test_price_chart_of_a_brand_new_term_labels_both_ends():
    markup = price_chart([(at(0), 1_000_000), (at(0.2), 1_000_000)], label="new")
    labels = [el.text for el in parse(markup).iter(f"{SVG}text")]
    assert "1 Oct 12:00" in labels and "1 Oct 12:12" in labels


def test_price_chart_escapes_the_label():
    markup = price_chart([(at(0), 1), (at(1), 2)], label='"><script>alert(1)</script>')
    assert "<script>" not in markup
    assert text_at(parse(markup), f"{SVG}title") == '"><script>alert(1)</script>'


def test_charts_need_at_least_one_point():
    with pytest.raises(ValueError):
        sparkline([], label="x")
    with pytest.raises(ValueError):
        price_chart([], label="x")


@pytest.mark.parametrize(
    ("low", "high", "ticks"),
    [
        (1_000_000, 1_100_000, [1_000_000, 1_050_000, 1_100_000]),
        (1_000_000, 1_000_000, [950_000, 1_000_000, 1_050_000]),
        (1_234_567, 2_987_654, [1_000_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000]),
        # A phone's narrow chart once read 1.02, 1.02, 1.01, 1.01, 1.00: ticks are at least a
        # hundredth of a credit apart, the labels' resolution.
        (1_000_000, 1_021_000, [1_000_000, 1_010_000, 1_020_000, 1_030_000]),
    ],
)
def test_nice_ticks(low, high, ticks):
    axis_low, axis_high, found = nice_ticks(low, high)
    assert found == ticks
    assert (axis_low, axis_high) == (ticks[0], ticks[-1])
    labels = [f"{tick / 1_000_000:.2f}" for tick in found]
    assert len(set(labels)) == len(labels)


def test_nice_ticks_of_counts_step_by_whole_numbers():
    assert nice_ticks(0, 7, min_step=1) == (0, 8, [0, 2, 4, 6, 8])


@given(st.integers(0, 10**12), st.integers(0, 10**12))
def test_nice_ticks_cover_the_range_with_round_steps(a, b):
    low, high = min(a, b), max(a, b)
    axis_low, axis_high, ticks = nice_ticks(low, high)
    assert axis_low <= low and high <= axis_high
    assert ticks[0] == axis_low and ticks[-1] == axis_high
    assert 2 <= len(ticks) <= 12
    steps = {b - a for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1
    assert re.fullmatch(r"[125]0*", str(steps.pop()))


def test_the_time_axis_fits_the_price_history_not_earlier_dividend_days():
    listed = dt.datetime(2026, 10, 5, 12, tzinfo=dt.UTC)
    points = [(listed, 1_000_000), (listed + dt.timedelta(days=1), 1_000_000)]
    earlier = [DividendDay(date=dt.date(2026, 10, 2), papers=1, per_share=50_000, amount=50_000)]
    markup = price_chart(points, label="KV cache", dividends=earlier)
    xs = [x for x, _ in polyline_points(markup)]
    assert (min(xs), max(xs)) == (60, 458)  # the whole plot: the day fills it
    assert "price-chart__dividend" not in markup


def test_a_dividend_day_that_paid_nothing_gets_no_mark():
    points = [(at(0), 1_000_000), (at(100), 1_200_000)]
    unpaid = [DividendDay(date=dt.date(2026, 10, 3), papers=2, per_share=50_000, amount=0)]
    markup = price_chart(points, label="x", dividends=unpaid)
    assert "price-chart__dividend" not in markup
    assert "Dividends for" not in text_at(parse(markup), f"{SVG}desc")


def test_time_labels_at_the_edges_stay_inside_the_chart():
    markup = price_chart([(at(0), 1_000_000), (at(100), 1_000_000)], label="x")
    time_labels = [el for el in parse(markup).iter(f"{SVG}text") if el.get("y") == "240"]
    assert len(time_labels) >= 2
    for label in time_labels:
        x = float(label.attrib["x"])
        # A centred label is at least 40 units from either edge of the plot; nearer ones hang
        # inwards from their tick.
        if label.get("text-anchor") == "middle":
            assert 60 + 40 <= x <= 458 - 40
        else:
            assert label.get("text-anchor") == ("start" if x < 200 else "end")
