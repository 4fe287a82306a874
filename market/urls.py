from django.urls import path

from .views import (
    leaderboard,
    live_quotes,
    orders,
    portfolio,
    proposals,
    quotes,
    rules,
    table,
    term,
)

app_name = "market"

urlpatterns = [
    path("market/", table.index, name="index"),
    # Before the term pattern: "rules" is a page, not a term's slug.
    path("market/rules/", rules.rules, name="rules"),
    path("market/tickers.json", live_quotes.tickers_json, name="tickers_json"),
    path("market/propose/", proposals.propose, name="propose"),
    path("market/<slug:slug>/", term.term_detail, name="term"),
    path("market/<slug:slug>/quote/", quotes.quote, name="quote"),
    path("market/<slug:slug>/quote.json", live_quotes.quote_json, name="quote_json"),
    path("market/<slug:slug>/offer.json", live_quotes.offer_json, name="offer_json"),
    path("market/<slug:slug>/trade/", quotes.trade, name="trade"),
    path("market/<slug:slug>/order/", orders.place, name="place_order"),
    path("market/<slug:slug>/follow/", orders.follow, name="follow"),
    path("market/<slug:slug>/why/<str:arxiv_id>/", term.why_counted, name="why"),
    # The order is named in the form, not the address: no address names a trader's own thing.
    path("orders/cancel/", orders.cancel, name="cancel_order"),
    path("portfolio/", portfolio.portfolio, name="portfolio"),
    path("leaderboard/", leaderboard.leaderboard, name="leaderboard"),
]
