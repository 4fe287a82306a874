"""Signals that papers sends for later apps, so that papers never imports them."""

from django.dispatch import Signal

# Sent once per listing date after a feed's write commits, with ``category`` and ``date``
# (the announcement day). Later apps react here (the market pays that day's dividends) so that
# papers never imports them.
listings_announced = Signal()
