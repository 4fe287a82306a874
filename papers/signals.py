"""Cached pages follow the rows they show: any change to these models invalidates them."""

from django.db.models.signals import post_delete, post_save

from peerrevenue.pagecache import invalidate_pages

from .models import Category, Listing, Paper, Watch


def pages_changed(**kwargs) -> None:
    invalidate_pages()


def connect() -> None:
    for model in (Category, Paper, Listing, Watch):
        post_save.connect(pages_changed, sender=model, dispatch_uid=f"pages-{model.__name__}")
        post_delete.connect(pages_changed, sender=model, dispatch_uid=f"pages-del-{model.__name__}")
