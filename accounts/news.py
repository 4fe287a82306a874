"""A signed-in reader's news, told once in the messages of the next page that shows them: a
term they proposed was listed, an order filled or was cancelled, a followed term moved or paid.

Whether there is news came with the session (``accounts.sessions``): queries only when there is
some; nothing for anonymous readers.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.contrib.messages.storage.base import BaseStorage, Message
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.messages.storage.fallback import FallbackStorage
from django.http import HttpRequest

from market import notices
from market.proposals import take_notices


class NewsMessages(FallbackStorage):
    """Django's message storage (``MESSAGE_STORAGE``), which adds the reader's news to the
    messages when a page of a GET first reads them.

    Not a middleware: one that asked before the view would load the session with a statement
    of its own, where the view's facts can read it in theirs (``peerrevenue.facts``). A
    response that shows no messages (a redirect, a download) leaves the news for the next page
    that does.
    """

    _news_told = False

    def __init__(self, request: HttpRequest, *args: Any, **kwargs: Any) -> None:
        # The storages (and the cookie's signer) are made when first used: most responses
        # neither show nor store a message, and every response goes through this one.
        BaseStorage.__init__(self, request, *args, **kwargs)
        self._used_storages: set[BaseStorage] = set()

    @cached_property
    def storages(self) -> list[BaseStorage]:
        return [storage_class(self.request) for storage_class in self.storage_classes]

    def _get(self, *args: Any, **kwargs: Any) -> tuple[list[Message], bool]:
        # Without the cookie the first storage has nothing, and FallbackStorage then asks no
        # other: no message is stored anywhere.
        if CookieStorage.cookie_name not in self.request.COOKIES:
            return [], True
        return super()._get(*args, **kwargs)  # type: ignore[misc]

    def __len__(self) -> int:
        self._tell_news()
        return super().__len__()

    def __iter__(self) -> Iterator[Message]:
        self._tell_news()
        return super().__iter__()

    def __contains__(self, item: Any) -> bool:
        self._tell_news()
        return super().__contains__(item)

    def _tell_news(self) -> None:
        if self._news_told:
            return
        self._news_told = True
        request: HttpRequest = self.request
        user = getattr(request, "user", None)
        if (
            request.method != "GET"
            or user is None
            or not user.is_authenticated
            or not _has_news(request, user)
        ):
            return
        for proposal in take_notices(user=user):
            self.add(
                messages.SUCCESS,
                f"Good call: “{proposal.phrase}”, which you proposed, is now listed on the "
                f"market as “{proposal.term.phrase if proposal.term else proposal.phrase}”.",
            )
        # Everything untold about their orders and followed terms, as one batched notice.
        told = notices.mark_seen(user=user)
        if told:
            self.add(messages.INFO, notices.batched_text(told))


def _has_news(request: HttpRequest, user) -> bool:
    news = getattr(request.session, "news", None)
    return notices.has_news(user=user) if news is None else news
