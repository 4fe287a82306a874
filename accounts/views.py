from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.debug import sensitive_post_parameters

from peerrevenue.ratelimit import client_address, is_limited

from .forms import PreferencesForm, SignupForm
from .models import Preferences

TOO_MANY_ATTEMPTS = "Too many attempts from your address. Please wait a few minutes and try again."


def first_page_for_new_user() -> str:
    try:
        return reverse("market:portfolio")
    except NoReverseMatch:
        return "/"


class RateLimitedLoginView(LoginView):
    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if is_limited(
            "login",
            client_address(request),
            limit=settings.RATELIMIT_LOGIN_PER_WINDOW,
            window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        ):
            form = self.get_form()
            form.add_error(None, TOO_MANY_ATTEMPTS)
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)


@sensitive_post_parameters("password1", "password2")
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect(first_page_for_new_user())
    form = SignupForm(request.POST if request.method == "POST" else None)
    if request.method == "POST":
        if is_limited(
            "signup",
            client_address(request),
            limit=settings.RATELIMIT_SIGNUP_PER_WINDOW,
            window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        ):
            form.add_error(None, TOO_MANY_ATTEMPTS)
            return render(request, "registration/signup.html", {"form": form}, status=429)
        if form.is_valid() and (user := form.create_user()) is not None:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(first_page_for_new_user())
    return render(request, "registration/signup.html", {"form": form})


@login_required
def preferences(request: HttpRequest) -> HttpResponse:
    prefs, _ = Preferences.objects.get_or_create(user=request.user)
    form = PreferencesForm(request.POST if request.method == "POST" else None, instance=prefs)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your preferences are saved.")
        return redirect("preferences")
    return render(request, "accounts/preferences.html", {"form": form})
