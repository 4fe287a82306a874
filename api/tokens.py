"""Personal tokens: made and revoked by their reader, checked on every API request.

Revocation holds at once on every instance because nothing about a token is remembered in a
process: each request reads the token's row from the primary (a replica could still hold a
revoked token as live for as long as it lags). The secret itself is never stored, logged or
shown again after it is made; only its SHA-256 is kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from .models import Scope, Token

SECRET_PREFIX = "prt_"
MAX_TOKENS = 20
MAX_NAME = 60
# last_used_at is written at most this often per token: a write per request would make
# every read a write, and a reader only needs to know roughly when a token was last used.
LAST_USED_SECONDS = 60


class TokenError(ValueError):
    """What stops a token being made or revoked, in words for the reader."""


@dataclass(frozen=True, slots=True)
class MadeToken:
    token: Token
    secret: str  # shown to the reader once, never stored


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def make_token(*, user, name: str, scopes: Iterable[str]) -> MadeToken:
    """A new token for ``user`` named ``name`` with ``scopes``; its secret is in the result
    and nowhere else."""
    name = " ".join(str(name).split())
    if not name:
        raise TokenError("Give the token a name, so you can tell it apart later.")
    if len(name) > MAX_NAME:
        raise TokenError(f"A token's name can be at most {MAX_NAME} characters.")
    chosen = sorted(set(scopes))
    unknown = [scope for scope in chosen if scope not in Scope.values]
    if unknown:
        raise TokenError(f"There is no scope “{unknown[0]}”.")
    if Token.objects.live().filter(user=user).count() >= MAX_TOKENS:
        raise TokenError(
            f"You have {MAX_TOKENS} tokens, the most one reader may hold. Revoke one first."
        )
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    token = Token.objects.create(
        user=user, name=name, scopes=chosen, digest=digest_of(secret), prefix=secret[:10]
    )
    return MadeToken(token=token, secret=secret)


def revoke_token(*, user, token_id: int) -> Token:
    """Revoke ``user``'s token ``token_id``; another reader's token is "no such token"."""
    token = Token.objects.filter(user=user, pk=token_id, revoked_at__isnull=True).first()
    if token is None:
        raise TokenError("You have no such token; perhaps it was revoked already.")
    token.revoked_at = timezone.now()
    token.save(update_fields=["revoked_at"])
    return token


def tokens_of(*, user) -> list[Token]:
    return list(Token.objects.filter(user=user, revoked_at__isnull=True))


def token_for(secret: str, *, now: dt.datetime | None = None) -> Token | None:
    """The live token whose secret is ``secret``, with its user, or None.

    Read from the primary whatever replica the request reads (a revoked token must be refused
    on every instance the moment its revocation commits)."""
    if not secret.startswith(SECRET_PREFIX) or len(secret) > 100:
        return None
    token = (
        Token.objects.using(DEFAULT_DB_ALIAS)
        .live()
        .select_related("user")
        .filter(digest=digest_of(secret))
        .first()
    )
    if token is None:
        return None
    now = now or timezone.now()
    stale = now - dt.timedelta(seconds=LAST_USED_SECONDS)
    if token.last_used_at is None or token.last_used_at < stale:
        # Conditional, so two instances using the token at once write it once.
        Token.objects.using(DEFAULT_DB_ALIAS).filter(pk=token.pk).exclude(
            last_used_at__gte=stale
        ).update(last_used_at=now)
        token.last_used_at = now
    return token
