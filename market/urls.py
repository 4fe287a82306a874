from django.urls import path

from . import proposal_views, views

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
    path("portfolio/", views.portfolio, name="portfolio"),
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
