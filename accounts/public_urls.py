"""Pages of accounts that live outside /accounts/: the public trader pages, a reader's saved
searches."""

from django.urls import path

from . import claim_views, saved_search_views, views

urlpatterns = [
    # path, not str: a name made outside the sign-up form (the admin, a script) may hold a "/",
    # and every name on the leaderboard must still have a link.
    path("traders/<path:username>/", views.trader, name="trader"),
    path("claims/", claim_views.claims_page, name="claims"),
    path("claims/new/", claim_views.new_claim, name="claim_new"),
    path("claims/withdraw/", claim_views.withdraw_claim, name="claim_withdraw"),
    path("claims/confirm/<str:token>/", claim_views.confirm_claim_email, name="claim_confirm"),
    path("searches/", saved_search_views.saved_searches, name="saved_searches"),
    path("searches/delete/", saved_search_views.delete_saved_search, name="delete_saved_search"),
]
