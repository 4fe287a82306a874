"""A gunicorn worker's warm-up (peerrevenue/warmup.py): after it, a first request imports and
compiles nothing, it opened no database connection that a fork could share, and what it made
is out of the garbage collector's way."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.processes import ROOT, clean_environment

PROBE = """
import gc, json, sys, django
django.setup()
from django.db import connections
from django.template import engines
from peerrevenue.warmup import settle, warm
before = set(sys.modules)
ticks = []
warm(tick=lambda: ticks.append(1))
frozen = settle()
loader = engines["django"].engine.template_loaders[0]
print(json.dumps({
    "imported": sorted(set(sys.modules) - before),
    "templates": sorted(key for key in loader.get_template_cache),
    "connections": [alias for alias in connections if connections[alias].connection is not None],
    "ticks": len(ticks),
    "frozen": frozen,
    "walked": len(gc.get_objects()),
}))
"""


def test_a_warmed_worker_has_every_page_module_and_template_and_no_connection():
    env = clean_environment(DJANGO_SETTINGS_MODULE="peerrevenue.settings")
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.splitlines()[-1])
    imported = set(found["imported"])
    # The views of every app, and the recommender's scikit-learn that a paper page reaches.
    assert {"papers.views", "market.views", "library.views", "accounts.views"} <= imported
    assert {"library.tasks", "sklearn"} <= imported
    assert {"base.html", "papers/category.html", "market/term.html"} <= set(found["templates"])
    assert found["connections"] == []
    assert found["ticks"] >= 3
    # A full collection walks what a full collection would walk: after settle(), almost
    # nothing (Django, the apps and scikit-learn frozen), where it was every object.
    assert found["frozen"] > 100_000
    assert found["walked"] < found["frozen"] / 50
