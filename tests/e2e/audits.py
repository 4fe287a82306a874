"""The two accessibility auditors of the browser tests: axe-core, run inside a Playwright page,
and Lighthouse's command line, run against the live server in its own Chromium.

Both are pinned in tests/e2e/package.json and package-lock.json; scripts/test.sh installs them
(`npm ci --prefix tests/e2e`) when node_modules is missing or older than the lock file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import CHROMIUM

NODE_MODULES = Path(__file__).parent / "node_modules"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
LIGHTHOUSE = NODE_MODULES / "lighthouse" / "cli" / "index.js"

# What the site must not have; axe's "minor" findings are left to judgement.
FAILING_IMPACTS = ("critical", "serious", "moderate")
LIGHTHOUSE_CATEGORIES = ("accessibility", "best-practices", "seo")


def _needed(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run `npm ci --prefix tests/e2e` (scripts/test.sh does).")
    return path


def prepare_axe(context) -> None:
    """Load axe into every page the context opens.

    An init script, not a <script> tag: the site's Content-Security-Policy allows no inline
    script, and an init script is added by the browser itself, outside the page's policy.
    """
    context.add_init_script(path=str(_needed(AXE)))


def axe_violations(page, *, where: str) -> list[str]:
    """Every node of every critical, serious or moderate violation on the page as it is now,
    one line each, labelled with ``where`` (the page and its state)."""
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    found = []
    for violation in result["violations"]:
        if violation["impact"] not in FAILING_IMPACTS:
            continue
        for node in violation["nodes"]:
            found.append(
                f"{where}: {violation['id']} ({violation['impact']}) at {node['target']}: "
                f"{node['failureSummary']!r} in {node['html'][:160]}"
            )
    return found


def lighthouse(url: str) -> dict[str, Any]:
    """Lighthouse's mobile audit of ``url`` (its default form factor), for the accessibility,
    best-practices and SEO categories: the report as JSON."""
    completed = subprocess.run(
        [
            "node",
            str(_needed(LIGHTHOUSE)),
            url,
            "--output=json",
            "--output-path=stdout",
            "--quiet",
            f"--only-categories={','.join(LIGHTHOUSE_CATEGORIES)}",
            "--chrome-flags=--headless=new --no-sandbox --disable-gpu",
        ],
        env={**os.environ, "CHROME_PATH": CHROMIUM},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"Lighthouse failed on {url}: {completed.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(completed.stdout)
    return report


def lighthouse_shortfalls(report: dict[str, Any]) -> dict[str, Any]:
    """Each category's score (out of 100) and, for a category below 100, the audits that cost
    it points with the elements they name."""
    found: dict[str, Any] = {}
    audits = report["audits"]
    for name in LIGHTHOUSE_CATEGORIES:
        category = report["categories"][name]
        score = round((category["score"] or 0) * 100)
        found[name] = {"score": score}
        if score == 100:
            continue
        for ref in category["auditRefs"]:
            audit = audits[ref["id"]]
            if ref["weight"] and audit["score"] is not None and audit["score"] < 1:
                items = (audit.get("details") or {}).get("items", [])
                found[name][ref["id"]] = [
                    (item.get("node") or {}).get("snippet", item) for item in items[:8]
                ]
    return found
