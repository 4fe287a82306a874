"""Money and share counts as people read them. The market counts integer micro-credits (µ¢) and
whole shares; every page, message, e-mail and admin list writes them through this module.

Credits read one way everywhere: two decimals, thousands separated, "1,000.00 credits". The
only place that shows more is a quote's fee breakdown, where a fee of a fraction of a cent
needs the exact figure, to four decimals when it has them ("0.0515 credits"; "986.90" when
not).
"""

from __future__ import annotations

import re

MICRO_PER_CREDIT = 1_000_000
MINUS = "\u2212"
# ASCII digits only: str.isdigit() and \d also accept "٣" or "３", which no one means as money.
_AMOUNT = re.compile(r"([0-9]*)(?:\.([0-9]*))?", re.ASCII)
# Commas only as thousands separators: "1,5" is a decimal comma, which must not become 15.
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?", re.ASCII)


def format_credits(
    micro: int, *, places: int = 2, unit: bool = True, signed: bool = False, exact: bool = False
) -> str:
    """``1_000_000_000`` → ``"1,000.00 credits"``.

    Rounded half away from zero to ``places`` decimals. ``exact`` (a quote's fee breakdown):
    up to four decimals, as many as the figure needs and never fewer than two, so that a fee of
    a fraction of a cent shows ("0.0515") and a round figure reads like every other amount
    beside it ("986.90", not "986.9000"). ``unit=False`` leaves out " credits" (for a column
    that names it); ``signed`` writes ``+`` before a gain. A loss always has a real minus sign.
    """
    micro = int(micro)
    if exact:
        places = 4
    step = 10 ** (6 - places)
    rounded = (abs(micro) + step // 2) // step
    whole, fraction = divmod(rounded, 10**places)
    digits = f"{fraction:0{places}d}"
    if exact:
        digits = digits[:2] + digits[2:].rstrip("0")
    text = f"{whole:,}.{digits}"
    if micro < 0 and rounded:
        text = MINUS + text
    elif signed and rounded:
        text = "+" + text
    return f"{text} credits" if unit else text


def format_shares(n: int) -> str:
    """``1`` → ``"1 share"``, ``1200`` → ``"1,200 shares"``."""
    return f"{n:,} share" if n == 1 else f"{n:,} shares"


def parse_credits(text: str) -> int:
    """``"-12.5"`` → ``-12_500_000`` µ¢: ASCII digits, at most six decimal places, commas
    between groups of three digits and underscores between digits ignored; raises ValueError
    with a message for a person."""
    cleaned = text.strip().replace("_", "")
    if "," in cleaned:
        if not _GROUPED.fullmatch(cleaned.lstrip("+-")):
            raise ValueError(
                f"“{text.strip()}”: write decimals with a point (12.50) and commas only "
                "between thousands (1,000.50)."
            )
        cleaned = cleaned.replace(",", "")
    sign = -1 if cleaned.startswith("-") else 1
    cleaned = cleaned.removeprefix("-") if sign < 0 else cleaned.removeprefix("+")
    found = _AMOUNT.fullmatch(cleaned)
    if not found or not (found.group(1) or found.group(2)):
        raise ValueError(
            f"“{text.strip()}” is not an amount of credits: use the digits 0 to 9, e.g. 12.50."
        )
    whole, fraction = found.group(1) or "0", found.group(2) or ""
    if len(fraction) > 6:
        raise ValueError("Amounts have at most six decimal places (one µ¢).")
    return sign * (int(whole) * MICRO_PER_CREDIT + int(fraction.ljust(6, "0")))
