"""The market's template filters: a figure's colour agrees with what it reads."""

from __future__ import annotations

from market.templatetags.market_pages import percent_bp, trend
from market.units import format_credits


def test_a_gain_that_reads_zero_is_not_coloured():
    for micro in range(-25_000, 25_001, 250):
        reads_zero = format_credits(micro) == "0.00 credits"
        assert (trend(micro) == "flat") == reads_zero, micro
    assert trend(-3_000) == "flat" and trend(-5_000) == "down" and trend(5_000) == "up"


def test_a_change_in_percent_that_reads_zero_is_not_coloured():
    for basis_points in range(-30, 31):
        reads_zero = percent_bp(basis_points) == "0.0%"
        assert (trend(basis_points, "bp") == "flat") == reads_zero, basis_points


def test_percent_changes_round_half_away_from_zero():
    assert [percent_bp(bp) for bp in (0, 4, 5, -5, 15, 1_234, -99_995)] == [
        "0.0%", "0.0%", "+0.1%", "\u22120.1%", "+0.2%", "+12.3%", "\u22121000.0%"
    ]  # fmt: skip
    assert percent_bp(2194.7) == "+21.9%"  # type: ignore[arg-type] # an average, not rounded yet
