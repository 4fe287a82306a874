"""The API across instances: a trade by API on one instance, then at once the trader's
holdings by API on the other (read-your-writes through the replica, behind pgbouncer), and
a token revoked on one instance refused at once by both."""

from __future__ import annotations

import collections
import os

import requests
from django.contrib.auth import get_user_model
from django.utils import timezone

from api.models import Scope, Token
from api.tokens import make_token

from .common import WEB1, WEB2, Result, counter_text, people, replica_lag
from .readers import quiet_terms

ROUNDS = 40


def _held(answer, slug: str) -> int | None:
    if answer.status_code != 200:
        return None
    return sum(h["shares"] for h in answer.json()["holdings"] if h["term"] == slug)


def _unsecured(session: requests.Session) -> None:
    # Production marks pr_written Secure; TLS ends at the proxy, so over the checks' plain
    # http the cookie is sent back as a client behind that proxy would (tests.processes).
    for cookie in session.cookies:
        cookie.secure = False


def check_api_read_your_writes(rounds: int = ROUNDS) -> Result:
    people(["api-trader"])
    user = get_user_model().objects.get(username="api-trader")
    made = make_token(user=user, name="topology", scopes=[Scope.TRADE, Scope.READ_PRIVATE])
    auth = {"Authorization": f"Bearer {made.secret}", "X-Forwarded-Proto": "https"}
    # One program, its cookies kept (a requests.Session), talking to both instances.
    program = requests.Session()
    slug = quiet_terms()[0]
    start = _held(program.get(f"{WEB2}/api/v1/me", headers=auth, timeout=30), slug) or 0
    shown = 0
    statuses: collections.Counter = collections.Counter()
    misses: list[str] = []
    for n in range(1, rounds + 1):
        writer, reader = (WEB1, WEB2) if n % 2 else (WEB2, WEB1)
        traded = program.post(
            f"{writer}/api/v1/terms/{slug}/trades",
            json={"side": "buy", "shares": 1},
            headers=auth | {"Idempotency-Key": os.urandom(8).hex()},
            timeout=30,
        )
        statuses[traded.status_code] += 1
        _unsecured(program)
        seen = _held(program.get(f"{reader}/api/v1/me", headers=auth, timeout=30), slug)
        if seen == start + n:
            shown += 1
        elif len(misses) < 5:
            misses.append(f"round {n}: /me showed {seen}, expected {start + n}")
    # Revoked as the settings page does, on the primary: both instances refuse at once.
    Token.objects.filter(pk=made.token.pk).update(revoked_at=timezone.now())
    refused = [
        program.get(f"{base}/api/v1/me", headers=auth, timeout=30).status_code
        for base in (WEB1, WEB2)
    ]
    figures = {
        "shown at once": f"{shown}/{rounds}",
        "trades": counter_text(statuses),
        "after revoking": refused,
        "replica lag": replica_lag(),
    }
    passed = shown == rounds and statuses == {201: rounds} and refused == [401, 401]
    return Result("api_read_your_writes", passed, figures, misses)
