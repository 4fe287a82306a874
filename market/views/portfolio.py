"""A trader's portfolio: only they see it, and it moves with every price, so it is rendered
for each request."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET

from peerrevenue.pagination import paginate

from .. import leaderboards, networth, notices, orders, stats, trading, trend_charts
from .trader import order_line

ROWS_PER_PAGE = 50


@login_required
@require_GET
def portfolio(request: HttpRequest) -> HttpResponse:
    # Only this trader sees it, and it moves with every price: rendered for each request.
    context = {"body_html": _portfolio_body(request), "nav": "portfolio"}
    return render(request, "market/portfolio.html", context)


def _portfolio_body(request: HttpRequest) -> str:
    # balance() opens the account (with its grant) of a user from before the market existed.
    summary = stats.portfolio(user=request.user, cash=trading.balance(request.user))
    history = paginate(request, stats.account_history(user=request.user), per_page=ROWS_PER_PAGE)
    worth = networth.net_worth_series(
        user=request.user, today=networth.today_utc(), now=summary.net_worth
    )
    context = {
        "portfolio": summary,
        "worth": worth,
        "worth_chart": trend_charts.net_worth_chart(worth, label="Your net worth by day")
        if len(worth) >= 2
        else None,
        "page": history,
        "standing": leaderboards.standing(user=request.user),
        "starting_grant": settings.MARKET_STARTING_GRANT,
        "orders": [order_line(o) for o in orders.orders_of(user=request.user, limit=30)],
        # Shown here whatever the flag said (a notice the database wrote itself included).
        "new_notice_ids": {n.pk for n in notices.mark_seen(user=request.user)},
        "notices": notices.recent(user=request.user, limit=10),
    }
    return render_to_string("market/_portfolio_body.html", context, request=request)
