from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("", include("papers.urls")),
    path("", include("market.urls")),
    path("", include("accounts.public_urls")),
]
