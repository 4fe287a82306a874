"""How many attempts at each account action one client (or one inbox) gets per window.

Every call counts one attempt and says whether it is one too many; the counting itself is
project plumbing (`peerrevenue.ratelimit`). Both login pages share one count, so an attacker
gets no extra guesses by switching from /accounts/login/ to /admin/login/. These limits hold
while Redis is unreachable: they are then counted in PostgreSQL (accounts.attempts).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.http import HttpRequest

from peerrevenue.ratelimit import client_address, is_limited, seconds_until_reset, wait_text

from .attempts import count_attempt


def _wait() -> str:
    return wait_text(seconds_until_reset(window_seconds=settings.RATELIMIT_WINDOW_SECONDS))


def too_many_attempts() -> str:
    return f"Too many attempts from your address. Please try again in {_wait()}."


def too_many_resets() -> str:
    return (
        "Too many password reset requests for this email address. Check your inbox for the "
        f"links already sent, or try again in {_wait()}."
    )


def _counted_in_database(key: str, window_seconds: int) -> int:
    return count_attempt(key, window_seconds=window_seconds)


def _client_limited(request: HttpRequest, scope: str, limit: int) -> bool:
    return is_limited(
        scope,
        client_address(request),
        limit=limit,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        without_cache=_counted_in_database,
    )


def login_limited(request: HttpRequest) -> bool:
    return _client_limited(request, "login", settings.RATELIMIT_LOGIN_PER_WINDOW)


def signup_limited(request: HttpRequest) -> bool:
    return _client_limited(request, "signup", settings.RATELIMIT_SIGNUP_PER_WINDOW)


def reset_limited_for_client(request: HttpRequest) -> bool:
    return _client_limited(request, "password-reset", settings.RATELIMIT_PASSWORD_RESET_PER_WINDOW)


def reset_limited_for_email(email: str) -> bool:
    """Count a reset mail to `email`, whoever asks: many clients must not flood one inbox.

    Counted whether or not an account has the address, so the answer reveals nothing; the key
    is a digest, so the cache never holds people's addresses.
    """
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return is_limited(
        "password-reset-email",
        digest,
        limit=settings.RATELIMIT_PASSWORD_RESETS_PER_EMAIL,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        without_cache=_counted_in_database,
    )


def too_many_claims() -> str:
    return (
        "You have claimed papers too often in the last few minutes. Nothing was changed; "
        f"try again in {_wait()}."
    )


def claims_limited(request: HttpRequest) -> bool:
    """Count a claim request (or a withdrawal) for the signed-in reader: per account, not per
    address, so one reader cannot go faster from many addresses."""
    return is_limited(
        "claims",
        f"user:{request.user.pk}",
        limit=settings.RATELIMIT_CLAIMS_PER_WINDOW,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        without_cache=_counted_in_database,
    )


def claim_mail_limited_for_email(email: str) -> bool:
    """Count a confirmation mail to ``email``, whoever asks: many readers must not flood one
    inbox. The key is a digest, so the cache never holds the address."""
    digest = hashlib.sha256(email.strip().lower().encode()).hexdigest()
    return is_limited(
        "claim-mail-email",
        digest,
        limit=settings.RATELIMIT_CLAIM_MAILS_PER_EMAIL,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
        without_cache=_counted_in_database,
    )
