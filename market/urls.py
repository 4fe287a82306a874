from django.urls import path

from . import order_views, proposal_views, views

app_name = "market"

urlpatterns = [
    path("market/", views.index, name="index"),
    # Before the term pattern: "rules" is a page, not a term's slug.
    path("market/rules/", views.rules, name="rules"),
    path("market/tickers.json", views.tickers_json, name="tickers_json"),
    path("market/propose/", proposal_views.propose, name="propose"),
    path("market/<slug:slug>/", views.term_detail, name="term"),
    path("market/<slug:slug>/quote/", views.quote, name="quote"),
    path("market/<slug:slug>/quote.json", views.quote_json, name="quote_json"),
    path("market/<slug:slug>/offer.json", views.offer_json, name="offer_json"),
    path("market/<slug:slug>/trade/", views.trade, name="trade"),
    path("market/<slug:slug>/order/", order_views.place, name="place_order"),
    path("market/<slug:slug>/follow/", order_views.follow, name="follow"),
    path("market/<slug:slug>/why/<str:arxiv_id>/", views.why_counted, name="why"),
    # The order is named in the form, not the address: no address names a trader's own thing.
    path("orders/cancel/", order_views.cancel, name="cancel_order"),
    path("portfolio/", views.portfolio, name="portfolio"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
