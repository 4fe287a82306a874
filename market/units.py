"""Money units: the market counts integer micro-credits (µ¢); people read credits."""

from __future__ import annotations

MICRO_PER_CREDIT = 1_000_000


def format_credits(micro: int, *, unit: bool = True) -> str:
    """``1234500000`` → ``"1,234.5 credits"``: exact, grouped, trailing zeros dropped."""
    sign = "-" if micro < 0 else ""
    whole, fraction = divmod(abs(micro), MICRO_PER_CREDIT)
    text = f"{sign}{whole:,}"
    if fraction:
        text += "." + f"{fraction:06d}".rstrip("0")
    if not unit:
        return text
    return f"{text} credit" if micro == MICRO_PER_CREDIT else f"{text} credits"


def parse_credits(text: str) -> int:
    """``"-12.5"`` → ``-12_500_000`` µ¢; at most six decimal places; raises ValueError."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    sign = -1 if cleaned.startswith("-") else 1
    cleaned = cleaned.lstrip("+-")
    whole, _, fraction = cleaned.partition(".")
    if (
        not (whole or fraction)
        or not (whole or "0").isdigit()
        or (fraction and not fraction.isdigit())
    ):
        raise ValueError(f"{text!r} is not an amount of credits")
    if len(fraction) > 6:
        raise ValueError("Amounts have at most six decimal places (one µ¢).")
    return sign * (int(whole or "0") * MICRO_PER_CREDIT + int(fraction.ljust(6, "0") or "0"))
