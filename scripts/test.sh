#!/usr/bin/env bash
# Type-check, then run the test suite (extra arguments go to pytest). On a machine with
# PostgreSQL and Redis installed (this project's CI), start them if they are down and use them;
# without a system PostgreSQL, use the embedded one that `make run` uses.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

# Type-check first (configured in pyproject.toml): an error fails the run before any test does.
"$BIN/mypy"

if command -v pg_ctlcluster >/dev/null 2>&1 || pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  bash scripts/services.sh
  export DATABASE_URL=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/peerrevenue}
else
  echo "No system PostgreSQL: the tests run on the embedded server (.local/pgdata)."
  unset DATABASE_URL
  if command -v redis-server >/dev/null 2>&1; then bash scripts/services.sh --redis-only; fi
fi
if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/0}
fi
bash scripts/chromium.sh
bash scripts/audit_tools.sh
exec "$BIN/pytest" "$@"
