from django.urls import include, path

from . import views

urlpatterns = [
    path("login/", views.RateLimitedLoginView.as_view(), name="login"),
    path(
        "password_reset/",
        views.RateLimitedPasswordResetView.as_view(),
        name="password_reset",
    ),
    path("signup/", views.signup, name="signup"),
    path("settings/", views.preferences, name="preferences"),
    path("", include("django.contrib.auth.urls")),
]
