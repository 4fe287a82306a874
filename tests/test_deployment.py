"""Production settings: the deploy checklist passes and every page carries the security headers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Each test starts a fresh Django process with production settings.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def production_like_environment() -> dict[str, str]:
    # The browser tests relax Django's async guard for their own process; production does not.
    return {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}


def test_check_deploy_passes_with_production_settings():
    env = production_like_environment() | {
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "a-production-secret-" + "x" * 50,
        "DJANGO_ALLOWED_HOSTS": "peerrevenue.example",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = production_like_environment() | {"DJANGO_DEBUG": "0"}
    env.pop("DJANGO_SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set" in result.stderr


@pytest.mark.django_db
def test_pages_forbid_inline_script_and_framing(client):
    response = client.get("/list/cs.DC/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
