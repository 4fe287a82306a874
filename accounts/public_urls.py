"""Pages about a person that live outside /accounts/: the public trader pages."""

from django.urls import path

from . import views

urlpatterns = [
    # path, not str: a name made outside the sign-up form (the admin, a script) may hold a "/",
    # and every name on the leaderboard must still have a link.
    path("traders/<path:username>/", views.trader, name="trader"),
]
