from django.contrib import admin
from django.urls import include, path

from peerrevenue.metrics import metrics_view
from peerrevenue.robots import robots_txt

urlpatterns = [
    # For the operator's Prometheus (peerrevenue/metrics.py).
    path("metrics", metrics_view, name="metrics"),
    path("robots.txt", robots_txt, name="robots_txt"),
    # The pages read most (the day's listings, a paper) first: Django tries every pattern
    # before the one that matches, and none of papers' patterns matches another app's address.
    path("", include("papers.urls")),
    path("admin/", admin.site.urls),
    path("", include("api.urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("library.urls")),
    path("", include("discussion.urls")),
    path("", include("market.urls")),
    path("", include("accounts.public_urls")),
]

# A database that cannot be reached answers 503 "try again in a moment", anything else 500.
handler500 = "peerrevenue.errors.server_error"
