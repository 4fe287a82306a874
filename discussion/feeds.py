"""An Atom feed per thread: its newest comments, for readers who follow with a feed reader
rather than notices."""

from __future__ import annotations

import datetime as dt

from django.contrib.syndication.views import Feed
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from .models import Comment
from .targets import Target

FEED_ITEMS = 50
# A thread with nothing left to show has no newest comment to date the feed by; Django would
# put the time of the request, so every fetch would look new to a feed reader.
QUIET = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)


class ThreadAtom(Atom1Feed):
    def latest_post_date(self) -> dt.datetime:
        if any(item.get("updateddate") or item.get("pubdate") for item in self.items):
            return super().latest_post_date()
        return QUIET


class ThreadFeed(Feed):
    feed_type = ThreadAtom

    def get_object(self, request: HttpRequest, target: str) -> tuple[Target, str, str]:
        found = Target.parse(target)
        if found is None or not found.exists():
            raise Http404("There is no such discussion.")
        title, url = found.title_and_url()
        return found, title, url

    def title(self, obj: tuple[Target, str, str]) -> str:
        return f"Discussion of {obj[1]} · Peer Revenue"

    def link(self, obj: tuple[Target, str, str]) -> str:
        return f"{obj[2]}#discussion"

    def feed_url(self, obj: tuple[Target, str, str]) -> str:
        return reverse("discussion:feed", args=[str(obj[0])])

    def subtitle(self, obj: tuple[Target, str, str]) -> str:
        return f"The newest comments on {obj[1]}."

    def items(self, obj: tuple[Target, str, str]) -> list[Comment]:
        target = obj[0]
        return list(
            Comment.objects.filter(
                **{f"thread__{target.column}": target.pk},
                deleted_at__isnull=True,
                hidden_at__isnull=True,
            )
            .select_related("author")
            .order_by("-created_at", "-id")[:FEED_ITEMS]
        )

    def item_title(self, item: Comment) -> str:
        return f"{item.author.get_username()}: {item.body[:80]}"

    def item_description(self, item: Comment) -> str:
        return item.body_html

    def item_link(self, item: Comment) -> str:
        return reverse("discussion:comment", args=[item.pk])

    def item_author_name(self, item: Comment) -> str:
        return item.author.get_username()

    def item_pubdate(self, item: Comment) -> dt.datetime:
        return item.created_at

    def item_updateddate(self, item: Comment) -> dt.datetime:
        return item.edited_at or item.created_at
