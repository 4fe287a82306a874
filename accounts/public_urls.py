"""Pages of accounts that live outside /accounts/: the public trader pages, a reader's saved
searches."""

from django.urls import path

from . import saved_search_views, views

urlpatterns = [
    # path, not str: a name made outside the sign-up form (the admin, a script) may hold a "/",
    # and every name on the leaderboard must still have a link.
    path("traders/<path:username>/", views.trader, name="trader"),
    path("searches/", saved_search_views.saved_searches, name="saved_searches"),
    path("searches/delete/", saved_search_views.delete_saved_search, name="delete_saved_search"),
]
