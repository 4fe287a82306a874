"""Signals that papers sends for later apps, so that papers never imports them."""

from django.dispatch import Signal

# Sent once per listing date after a feed's write commits, with ``category`` and ``date``
# (the announcement day). Later apps react here (the market pays that day's dividends) so that
# papers never imports them.
listings_announced = Signal()

# Sent after bulk history (papers.history) stored papers, with ``months`` (the first days of
# the months their listings fall in). Nothing is announced and nothing pays: later apps only
# bring their counts up to date (the market's term research).
history_stored = Signal()
