#!/usr/bin/env bash
# The accessibility auditors of the browser tests (axe-core, Lighthouse), pinned in
# tests/e2e/package-lock.json: installed with `npm ci` when node_modules is missing or older
# than the lock file, so every run audits with the same versions.
set -euo pipefail
cd "$(dirname "$0")/../tests/e2e"

stamp=node_modules/.installed
if [ ! -f "$stamp" ] || [ package-lock.json -nt "$stamp" ] || [ package.json -nt "$stamp" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    # Not fatal here: `make test-fast` needs neither; the browser tests fail on their own,
    # saying what is missing.
    echo "npm is missing: the browser tests' axe-core and Lighthouse need Node.js 20 or later." >&2
    exit 0
  fi
  echo "Installing axe-core and Lighthouse for the browser tests (npm ci)…"
  npm ci --no-audit --no-fund --loglevel=error
  touch "$stamp"
fi
