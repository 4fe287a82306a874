from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, PasswordResetView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.debug import sensitive_post_parameters

from market import networth, trend_charts
from peerrevenue.redirects import safe_next

from . import traders
from .forms import PreferencesForm, SignupForm
from .limits import (
    login_limited,
    reset_limited_for_client,
    reset_limited_for_email,
    signup_limited,
    too_many_attempts,
    too_many_resets,
)
from .models import Preferences
from .welcome import welcome_message


def first_page_for_new_user() -> str:
    try:
        return reverse("market:portfolio")
    except NoReverseMatch:
        return "/"


class RateLimitedLoginView(LoginView):
    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if login_limited(request):
            form = self.get_form()
            form.add_error(None, too_many_attempts())
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().post(request, *args, **kwargs)

    def get_redirect_url(self) -> str:
        # The same rule as every other form's ``next``: a path on this site, else home.
        return safe_next(self.request)


class RateLimitedPasswordResetView(PasswordResetView):
    """Each reset request sends a mail: limit them per client, and per inbox whoever asks."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if reset_limited_for_client(request):
            return self.refuse(self.get_form(), too_many_attempts())
        return super().post(request, *args, **kwargs)

    def form_valid(self, form) -> HttpResponse:
        if reset_limited_for_email(form.cleaned_data["email"]):
            return self.refuse(form, too_many_resets())
        return super().form_valid(form)

    def refuse(self, form, message: str) -> HttpResponse:
        form.add_error(None, message)
        return self.render_to_response(self.get_context_data(form=form), status=429)


@sensitive_post_parameters("password1", "password2")
def signup(request: HttpRequest) -> HttpResponse:
    back = safe_next(request)
    if request.user.is_authenticated:
        return redirect(back or first_page_for_new_user())
    form = SignupForm(request.POST if request.method == "POST" else None)
    context = {"form": form, "next": back}
    if request.method == "POST":
        if signup_limited(request):
            form.add_error(None, too_many_attempts())
            return render(request, "registration/signup.html", context, status=429)
        if form.is_valid() and (user := form.create_user()) is not None:
            login(request, user, backend="accounts.backends.UserBackend")
            messages.success(request, welcome_message(username=user.get_username()))
            return redirect(back or first_page_for_new_user())
    return render(request, "registration/signup.html", context)


@login_required
def preferences(request: HttpRequest) -> HttpResponse:
    prefs, _ = Preferences.objects.get_or_create(user=request.user)
    form = PreferencesForm(request.POST if request.method == "POST" else None, instance=prefs)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your preferences are saved.")
        return redirect("preferences")
    return render(request, "accounts/preferences.html", {"form": form})


def trader(request: HttpRequest, username: str) -> HttpResponse:
    person = traders.find_trader(username)
    if person is None:
        raise Http404(f"There is no trader called “{username}”.")
    page = traders.trader_page(trader=person, viewer=request.user, today=networth.today_utc())
    if page.private:
        # Not found for others, with a page that says why rather than a bare 404.
        return render(request, "accounts/trader_private.html", {"trader": person}, status=404)
    chart = None
    if len(page.worth) >= 2:
        chart = trend_charts.net_worth_chart(
            page.worth, label=f"Net worth of {person.get_username()} by day"
        )
    context = {
        "page": page,
        "trader": person,
        "is_owner": request.user.is_authenticated and request.user.pk == person.pk,
        "public": traders.is_public(person),
        "demo": traders.is_demo(person),
        "chart": chart,
        "nav": "leaderboard",
    }
    return render(request, "accounts/trader.html", context)
