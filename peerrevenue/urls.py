from django.contrib import admin
from django.urls import include, path

from accounts import saved_search_views
from peerrevenue.metrics import metrics_view
from peerrevenue.robots import robots_txt

urlpatterns = [
    # For the operator's Prometheus (peerrevenue/metrics.py).
    path("metrics", metrics_view, name="metrics"),
    path("robots.txt", robots_txt, name="robots_txt"),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("searches/", saved_search_views.saved_searches, name="saved_searches"),
    path("searches/delete/", saved_search_views.delete_saved_search, name="delete_saved_search"),
    path("", include("library.urls")),
    path("", include("papers.urls")),
    path("", include("market.urls")),
    path("", include("accounts.public_urls")),
]

# A database that cannot be reached answers 503 "try again in a moment", anything else 500.
handler500 = "peerrevenue.errors.server_error"
