"""Settings read each variable under its setting's name, as its type, and refuse bad values.

Settings are read once per process, so each case imports them in a fresh interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def settings_in_a_process(names: list[str], **variables: str) -> subprocess.CompletedProcess[str]:
    """Import the settings with `variables` in the environment and print the named settings."""
    env = os.environ | variables
    code = (
        "import sys, peerrevenue.settings as s\n"
        "for n in sys.argv[1:]: print(n, repr(getattr(s, n)))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *names],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def printed(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stderr
    return dict(line.split(" ", 1) for line in result.stdout.splitlines())


def test_a_renamed_variable_sets_its_setting():
    result = settings_in_a_process(
        ["RATELIMIT_PASSWORD_RESET_PER_WINDOW", "RATELIMIT_PASSWORD_RESETS_PER_EMAIL"],
        RATELIMIT_PASSWORD_RESET_PER_WINDOW="7",
        RATELIMIT_PASSWORD_RESETS_PER_EMAIL="2",
    )
    assert printed(result) == {
        "RATELIMIT_PASSWORD_RESET_PER_WINDOW": "7",
        "RATELIMIT_PASSWORD_RESETS_PER_EMAIL": "2",
    }


def test_a_variable_under_its_old_name_stops_start_up():
    """Ignoring it would silently drop a deployment's limit back to the default."""
    result = settings_in_a_process([], RATELIMIT_RESET_PER_WINDOW="7")
    assert result.returncode != 0
    assert "RATELIMIT_RESET_PER_WINDOW is now RATELIMIT_PASSWORD_RESET_PER_WINDOW" in result.stderr


@pytest.mark.parametrize(
    "name, value",
    [
        ("PAGE_CACHE_SECONDS", "abc"),
        ("ARXIV_HTTP_TIMEOUT_SECONDS", "soon"),
        ("DJANGO_DEBUG", "maybe"),
        ("DATABASE_PREPARE_THRESHOLD", "five"),
        ("LOG_LEVEL", "LOUD"),
    ],
)
def test_a_bad_value_stops_start_up_naming_its_variable(name, value):
    result = settings_in_a_process([], **{name: value})
    assert result.returncode != 0
    assert f'Environment variable "{name}" invalid' in result.stderr


def test_empty_values_keep_their_meaning():
    """Empty is unset for a boolean, and turns off prepared statements (behind a pooler)."""
    result = settings_in_a_process(
        ["DEBUG", "DATABASE_PREPARE_THRESHOLD", "ALLOWED_HOSTS"],
        DJANGO_DEBUG="",
        DJANGO_SECRET_KEY="",
        DATABASE_PREPARE_THRESHOLD="",
        DJANGO_ALLOWED_HOSTS=" a.example , b.example,,",
    )
    assert printed(result) == {
        "DEBUG": "True",
        "DATABASE_PREPARE_THRESHOLD": "None",
        "ALLOWED_HOSTS": "['a.example', 'b.example']",
    }


def test_behind_a_transaction_pooler_nothing_outlives_a_transaction():
    """DATABASE_POOLER=transaction: no server-side cursors and, unless asked for (PgBouncer
    1.21+ keeps prepared statements), no prepared statements."""
    names = ["DATABASE_POOLER", "DATABASE_PREPARE_THRESHOLD", "DATABASES"]
    url = "postgres://postgres@127.0.0.1:6432/peerrevenue"
    pooled = printed(settings_in_a_process(names, DATABASE_URL=url, DATABASE_POOLER="transaction"))
    assert pooled["DATABASE_PREPARE_THRESHOLD"] == "None"
    assert "'DISABLE_SERVER_SIDE_CURSORS': True" in pooled["DATABASES"]
    assert "'prepare_threshold': None" in pooled["DATABASES"]
    asked = printed(
        settings_in_a_process(
            names, DATABASE_URL=url, DATABASE_POOLER="transaction", DATABASE_PREPARE_THRESHOLD="5"
        )
    )
    assert asked["DATABASE_PREPARE_THRESHOLD"] == "5"
    direct = printed(settings_in_a_process(names, DATABASE_URL=url, DATABASE_POOLER=""))
    assert direct["DATABASE_PREPARE_THRESHOLD"] == "5"
    assert "'DISABLE_SERVER_SIDE_CURSORS': False" in direct["DATABASES"]


def test_an_unknown_pooler_mode_stops_start_up():
    result = settings_in_a_process([], DATABASE_POOLER="statement")
    assert result.returncode != 0
    assert 'DATABASE_POOLER is "statement"' in result.stderr
