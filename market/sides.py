"""Buy or sell: the one choice a trade and a limit order share.

Its own module so that ``market.models.orders`` (the order rows) can name it without importing
``market.models``, which imports the order rows so that Django finds them.
"""

from django.db import models


class Side(models.TextChoices):
    BUY = "buy", "Buy"
    SELL = "sell", "Sell"
