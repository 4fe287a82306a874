"""The leaderboard of a period: traders ranked by what they made in it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from peerrevenue.pagination import paginate

from .. import leaderboards, networth, public_names

ROWS_PER_PAGE = 50


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    period = leaderboards.period_from(request.GET.get("period"))
    today = networth.today_utc()
    ranked = leaderboards.period_leaderboard(period=period, today=today)
    # A trader who keeps their page private is "a trader" here, but to themselves.
    ranked = ranked.annotate(private=public_names.is_private('"market_account"."user_id"'))
    page = paginate(request, ranked, per_page=ROWS_PER_PAGE)
    page.object_list = list(page.object_list)
    for account in page.object_list:
        account.public_name = (
            None
            if account.private and account.user_id != request.user.pk
            else account.user.get_username()
        )
    standing = None
    if request.user.is_authenticated:
        standing = leaderboards.period_standing(user=request.user, period=period, today=today)
    context = {
        "page": page,
        "standing": standing,
        "period": period,
        "periods": leaderboards.PERIODS,
        "period_label": leaderboards.PERIODS[period],
        "period_start": leaderboards.period_start(period, today=today),
        "hidden_name": public_names.HIDDEN_NAME,
        "nav": "leaderboard",
    }
    return render(request, "market/leaderboard.html", context)
