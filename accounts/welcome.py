"""What a new trader is told once, on the page sign-up leads to: what the site is, and what the
starting credits are for. (The sign-up itself is ``accounts.views.signup``.)"""

from __future__ import annotations

from django.conf import settings

from market.units import format_credits


def welcome_message(*, username: str) -> str:
    grant = format_credits(settings.MARKET_STARTING_GRANT)
    return (
        f"Welcome to Peer Revenue, {username}. Read arXiv's new papers here, typeset; the "
        "highlighted words in their abstracts are traded like shares. Your "
        f"{grant} are play money for buying them: a share pays a dividend each time a newly "
        "announced paper mentions its word, and its price rises as others buy. Tap or hover "
        "over a highlighted word to see its price; the market's rules page has the details."
    )
