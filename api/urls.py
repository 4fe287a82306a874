from django.urls import path

from . import views
from .site import api

# Every API view reads from a replica on GET, as the reader pages do (peerrevenue.replicas).
_patterns, _app, _namespace = api.urls
for _pattern in _patterns:
    _pattern.callback.reads_replicas = True  # type: ignore[union-attr]

urlpatterns = [
    path("api/v1/reference/", views.reference, name="api_reference"),
    path("api/v1/", (_patterns, _app, _namespace)),
    path("accounts/settings/tokens/", views.tokens_page, name="api_tokens"),
]
