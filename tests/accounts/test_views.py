"""Signing up, logging in and resetting a password, as a new reader would."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from tests.html import Page, page_text
from tests.text import search

pytestmark = pytest.mark.django_db


def signup(client, **overrides):
    data = {
        "username": "grace",
        "email": "grace@example.org",
        "password1": "a long unusual passphrase",
        "password2": "a long unusual passphrase",
    } | overrides
    return client.post("/accounts/signup/", data)


def test_signup_logs_the_new_user_in(client):
    response = signup(client)
    assert response.status_code == 302
    user = get_user_model().objects.get(username="grace")
    assert user.email == "grace@example.org"
    assert client.get("/list/cs.DC/").context["user"] == user


def test_signup_lands_with_a_welcome_that_says_what_the_credits_are_for(client):
    landing = client.get(signup(client)["Location"])
    messages = Page.of(landing).one("ul", cls="messages").texts("li")
    assert len(messages) == 1 and messages[0].startswith("Welcome to Peer Revenue, grace.")
    assert "1,000.00 credits are play money for buying them" in messages[0]
    assert "pays a dividend each time a newly announced paper mentions its word" in messages[0]
    # Once: the next page has no welcome.
    assert "Welcome to Peer Revenue" not in page_text(client.get(landing.request["PATH_INFO"]))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"username": ""}, "This field is required."),
        ({"email": "not-an-email"}, "Enter a valid email address."),
        ({"password2": "something else entirely"}, "The two password fields didn"),
        ({"password1": "password", "password2": "password"}, "This password is too common."),
        ({"password1": "12345678901", "password2": "12345678901"}, "entirely numeric"),
        ({"username": "bad name!"}, "Enter a valid username."),
        # A Cyrillic "а": it would pass for "grace" wherever names are listed.
        ({"username": "gr\u0430ce"}, "Use the letters A to Z, digits and @ . + - _ only"),
    ],
)
def test_signup_refuses_bad_input_with_a_clear_message(client, overrides, message):
    response = signup(client, **overrides)
    assert response.status_code == 200
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not get_user_model().objects.exists()


def test_signup_refuses_a_taken_email(client, reader):
    response = signup(client, email=reader.email.upper())
    assert "An account with this email address already exists." in response.content.decode()
    assert get_user_model().objects.count() == 1


def test_login_and_logout(client, reader, password):
    response = client.post("/accounts/login/", {"username": "rosalind", "password": password})
    assert response.status_code == 302
    assert client.get("/list/cs.DC/").context["user"] == reader
    client.post("/accounts/logout/")
    assert not client.get("/list/cs.DC/").context["user"].is_authenticated


def test_wrong_password_is_refused(client, reader):
    response = client.post("/accounts/login/", {"username": "rosalind", "password": "nope"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()


def test_login_is_rate_limited(client, reader, password, settings):
    settings.RATELIMIT_LOGIN_PER_WINDOW = 3
    for _ in range(3):
        client.post("/accounts/login/", {"username": "rosalind", "password": "wrong"})
    response = client.post("/accounts/login/", {"username": "rosalind", "password": password})
    assert response.status_code == 429
    assert "Too many attempts" in response.content.decode()
    assert not client.get("/list/cs.DC/").context["user"].is_authenticated


def test_signup_is_rate_limited(client, settings):
    settings.RATELIMIT_SIGNUP_PER_WINDOW = 1
    signup(client, username="first", email="first@example.org")
    client.post("/accounts/logout/")
    response = signup(client, username="second", email="second@example.org")
    assert response.status_code == 429
    assert not get_user_model().objects.filter(username="second").exists()


def test_password_reset_by_email(client, reader):
    client.post("/accounts/password_reset/", {"email": reader.email})
    assert len(mail.outbox) == 1
    link = search(r"http://testserver(/accounts/reset/\S+/)", str(mail.outbox[0].body)).group(1)
    form_page = client.get(link, follow=True)
    new_password = "another long passphrase"
    client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": new_password, "new_password2": new_password},
    )
    reader.refresh_from_db()
    assert reader.check_password(new_password)


def test_password_change(client, reader, password):
    client.force_login(reader)
    new_password = "yet another passphrase"
    response = client.post(
        "/accounts/password_change/",
        {"old_password": password, "new_password1": new_password, "new_password2": new_password},
    )
    assert response.status_code == 302
    reader.refresh_from_db()
    assert reader.check_password(new_password)


def test_empty_signup_form_says_what_is_missing(client):
    response = client.post("/accounts/signup/", {})
    assert response.status_code == 200
    assert response.content.decode().count("This field is required.") == 4
    assert not get_user_model().objects.exists()


@pytest.mark.parametrize("next_url", ["//", "//evil.example/", "/\\evil.example"])
def test_signing_in_never_sends_the_reader_to_a_protocol_relative_address(
    client, reader, password, next_url
):
    response = client.post(
        "/accounts/login/",
        {"username": reader.username, "password": password, "next": next_url},
    )
    assert response.status_code == 302
    assert not response.url.startswith(("//", "/\\"))
