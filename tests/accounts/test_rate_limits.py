"""Guessing passwords at the admin's login and flooding inboxes with reset mails: both stop at
the limit, like the site's own login page."""

from __future__ import annotations

import re

import pytest
from django.core import mail

pytestmark = pytest.mark.django_db


def admin_login(client, password: str, **extra):
    return client.post(
        "/admin/login/?next=/admin/", {"username": "cora", "password": password}, **extra
    )


def signed_in_to_admin(client) -> bool:
    return client.get("/admin/").status_code == 200


def test_the_eleventh_admin_login_is_refused_even_with_the_right_password(
    client, curator, password, settings
):
    assert settings.RATELIMIT_LOGIN_PER_WINDOW == 10
    for _ in range(10):
        response = admin_login(client, "wrong")
        assert "Please enter the correct username and password" in response.content.decode()

    response = admin_login(client, password)

    text = response.content.decode()
    assert "Too many attempts from your address" in text
    # How long to wait, not "a few minutes": the window ends within RATELIMIT_WINDOW_SECONDS.
    assert re.search(r"Please try again in (\d+ seconds|a minute|\d+ minutes)\.", text)
    assert not signed_in_to_admin(client)


def test_the_admin_login_shares_the_site_logins_count(client, curator, password, settings):
    settings.RATELIMIT_LOGIN_PER_WINDOW = 3
    for _ in range(3):
        client.post("/accounts/login/", {"username": "cora", "password": "wrong"})
    admin_login(client, password)
    assert not signed_in_to_admin(client)


def test_the_admin_login_still_works_below_the_limit(client, curator, password):
    admin_login(client, "wrong")
    assert admin_login(client, password).status_code == 302
    assert signed_in_to_admin(client)


def test_thirty_reset_requests_from_one_client_send_at_most_the_limit(client, reader, settings):
    responses = [
        client.post("/accounts/password_reset/", {"email": reader.email}) for _ in range(30)
    ]

    assert len(mail.outbox) == settings.RATELIMIT_PASSWORD_RESETS_PER_EMAIL == 3
    assert [response.status_code for response in responses[:3]] == [302] * 3
    assert {response.status_code for response in responses[3:]} == {429}
    assert "Too many password reset requests" in responses[3].content.decode()
    assert "Too many attempts from your address" in responses[-1].content.decode()


def test_thirty_clients_cannot_flood_one_inbox(client, reader, settings):
    for number in range(30):
        client.post(
            "/accounts/password_reset/", {"email": reader.email}, REMOTE_ADDR=f"10.0.0.{number}"
        )
    assert len(mail.outbox) == settings.RATELIMIT_PASSWORD_RESETS_PER_EMAIL


def test_one_client_cannot_mail_thirty_inboxes(client, django_user_model, settings):
    for number in range(30):
        django_user_model.objects.create_user(f"user{number}", f"user{number}@example.org", "x")
    for number in range(30):
        client.post("/accounts/password_reset/", {"email": f"user{number}@example.org"})
    assert len(mail.outbox) == settings.RATELIMIT_PASSWORD_RESET_PER_WINDOW == 5
