"""Cached pages follow the rows they show: any change to these models invalidates them."""

from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal

from peerrevenue.pagecache import invalidate_pages

from .models import Category, Listing, Paper, Watch


def pages_changed(**kwargs) -> None:
    invalidate_pages()


def connect() -> None:
    for model in (Category, Paper, Listing, Watch):
        post_save.connect(pages_changed, sender=model, dispatch_uid=f"pages-{model.__name__}")
        post_delete.connect(pages_changed, sender=model, dispatch_uid=f"pages-del-{model.__name__}")


# Sent once per listing date after a feed's write commits, with ``category`` and ``date``
# (the announcement day). Later apps react here (the market pays that day's dividends) so that
# papers never imports them.
listings_announced = Signal()
