"""Twenty people signing up at the same moment with one username, or with one e-mail address:
one account is made and everyone else is told why, never a server error. Real threads, each
with its own database connection, on PostgreSQL."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client

from accounts.forms import SignupForm

pytestmark = pytest.mark.django_db(transaction=True)

PEOPLE = 20
PASSPHRASE = "a long unusual passphrase"


def sign_up_together(monkeypatch, forms: list[dict[str, str]]) -> list:
    """Post every form at once; each waits, after its checks pass, until all have passed theirs.

    The barrier makes the race certain rather than likely: every request has found the name
    and address free before any of them writes.
    """
    all_checked = threading.Barrier(len(forms), timeout=60)
    save = SignupForm.save

    def save_when_all_checked(self, *args, **kwargs):
        all_checked.wait()
        return save(self, *args, **kwargs)

    monkeypatch.setattr(SignupForm, "save", save_when_all_checked)
    responses: list = [None] * len(forms)

    def post(index: int) -> None:
        try:
            client = Client(raise_request_exception=False)
            responses[index] = client.post("/accounts/signup/", forms[index])
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(index,)) for index in range(len(forms))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return responses


def form(username: str, email: str) -> dict[str, str]:
    return {"username": username, "email": email, "password1": PASSPHRASE, "password2": PASSPHRASE}


@pytest.fixture(autouse=True)
def no_signup_limit(settings):
    settings.RATELIMIT_SIGNUP_PER_WINDOW = 1000  # all twenty come from one address here


def test_one_username_twenty_times_makes_one_account(monkeypatch):
    forms = [form("grace", f"grace{index}@example.org") for index in range(PEOPLE)]

    responses = sign_up_together(monkeypatch, forms)

    assert sorted(response.status_code for response in responses) == [200] * 19 + [302]
    for response in responses:
        if response.status_code == 200:
            assert "A user with that username already exists." in response.content.decode()
    assert get_user_model().objects.filter(username="grace").count() == 1


def test_one_email_under_twenty_usernames_makes_one_account(monkeypatch):
    forms = [form(f"grace{index}", "Grace@Example.org") for index in range(PEOPLE)]
    forms[7]["email"] = "grace@example.ORG"  # the same address, differently cased

    responses = sign_up_together(monkeypatch, forms)

    assert sorted(response.status_code for response in responses) == [200] * 19 + [302]
    for response in responses:
        if response.status_code == 200:
            body = response.content.decode()
            assert "An account with this email address already exists." in body
    assert get_user_model().objects.filter(email__iexact="grace@example.org").count() == 1


def test_the_admin_refuses_an_address_another_account_has(staff, reader, trader):
    page = staff.get(f"/admin/auth/user/{trader.pk}/change/")
    data = {
        key: value
        for key, value in page.context["adminform"].form.initial.items()
        if value is not None and key not in {"groups", "user_permissions", "password"}
    }
    data |= {
        "email": reader.email.upper(),
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        "last_login_0": "",
        "last_login_1": "",
    }
    response = staff.post(f"/admin/auth/user/{trader.pk}/change/", data)
    assert response.status_code == 200
    assert "An account with this email address already exists." in response.content.decode()
    trader.refresh_from_db()
    assert trader.email == "tobias@example.org"
