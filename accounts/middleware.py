"""Notices a signed-in person sees on their next page view."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from market import notices
from market.proposals import take_notices


class ProposalNoticeMiddleware:
    """A term a trader proposed was listed, an order filled or was cancelled, a followed term
    moved or paid: say so once, in the page's messages.

    Whether there is news came with the session (``accounts.sessions``): queries only when
    there is some; nothing for anonymous readers.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if (
            user is not None
            and user.is_authenticated
            and request.method == "GET"
            and _has_news(request, user)
        ):
            for proposal in take_notices(user=user):
                messages.success(
                    request,
                    f"Good call: “{proposal.phrase}”, which you proposed, is now listed on the "
                    f"market as “{proposal.term.phrase if proposal.term else proposal.phrase}”.",
                )
            # Everything untold about their orders and followed terms, as one batched notice.
            told = notices.mark_seen(user=user)
            if told:
                messages.info(request, notices.batched_text(told))
        return self.get_response(request)


def _has_news(request: HttpRequest, user) -> bool:
    news = getattr(request.session, "news", None)
    return notices.has_news(user=user) if news is None else news
