"""Who is calling: a personal token in ``Authorization: Bearer …``, with the scope the
endpoint needs. A token without that scope is refused (403) before anything is done."""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer

from .models import Scope, Token
from .problems import Problem
from .tokens import token_for


def secret_of(request: HttpRequest) -> str | None:
    """The bearer secret the request carries, or None. (Ninja's own parser logs a malformed
    header whole in DEBUG; this one never logs it: it may hold a secret.)"""
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        return None
    return secret.strip()


class TokenAuth(HttpBearer):
    def __init__(self, scope: Scope | None) -> None:
        super().__init__()
        self.scope = scope

    def __call__(self, request: HttpRequest) -> Token | None:
        secret = secret_of(request)
        return None if secret is None else self.authenticate(request, secret)

    def authenticate(self, request: HttpRequest, token: str) -> Token | None:
        found = token_for(token)
        if found is None:
            return None
        if self.scope is not None and self.scope not in found.scopes:
            raise Problem(
                403,
                f"This token may not do that: it needs the “{self.scope.value}” scope "
                f"({self.scope.label.lower()}). Make a token with it in your settings.",
            )
        return found


# One class per scope: the OpenAPI document names a security scheme by its class.
class ReadPrivateToken(TokenAuth):
    pass


class TradeToken(TokenAuth):
    pass


class LibraryToken(TokenAuth):
    pass


READ_PRIVATE = ReadPrivateToken(Scope.READ_PRIVATE)
TRADE = TradeToken(Scope.TRADE)
LIBRARY = LibraryToken(Scope.LIBRARY)
SCHEMES = {type(each).__name__: each.scope for each in (READ_PRIVATE, TRADE, LIBRARY)}


def token_of(request: HttpRequest) -> Token:
    token = getattr(request, "auth", None)
    assert isinstance(token, Token), "an endpoint with a token's scope"
    return token
