#!/usr/bin/env bash
# `make run`: the local site from a fresh clone, one step at a time, each saying what it did and
# how long it took: install (.venv without test tools), database (the embedded PostgreSQL
# unless DATABASE_URL says otherwise), migrate, sample (the bundled listing and demo market),
# serve (two gunicorn workers, each warmed before it takes a request: peerrevenue/gunicorn_conf.py).
# Ctrl-C stops the site and the embedded PostgreSQL that it started. `--no-serve` stops after
# the sample (make setup).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT=${PORT:-8000}
serve=1
[ "${1:-}" = "--no-serve" ] && serve=0
total=$((4 + serve))

now() { echo "${EPOCHREALTIME:-$SECONDS}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }
# Runs a step's command with its output kept aside, shown in full only if it fails.
quietly() {
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "Failed: $*" >&2
    return 1
  fi
  cat "$log"
  rm -f "$log"
}

STEP="[1/$total] " bash scripts/install.sh site

started=$(now)
if [ -z "${DATABASE_URL:-}" ]; then
  pgdata=${EMBEDDED_PGDATA:-.local/pgdata}
  fresh=""
  [ -e "$pgdata/PG_VERSION" ] || fresh=", a new cluster"
  quietly "$BIN/python" -m peerrevenue.embedded_db start >/dev/null
  trap '"$BIN/python" -m peerrevenue.embedded_db stop >/dev/null' EXIT
  echo "[2/$total] database: embedded PostgreSQL running (data in $pgdata$fresh) in $(since "$started")"
else
  echo "[2/$total] database: DATABASE_URL (no embedded server)"
fi

started=$(now)
migrated=$(quietly "$BIN/python" manage.py migrate --no-input)
applied=$(grep -c '^  Applying' <<<"$migrated" || true)
# Papers stored by an older typesetter (an existing .local/pgdata after an upgrade that changed
# the markup) are rendered again, so the pages show what a fresh clone shows.
retypeset=$(quietly "$BIN/python" manage.py retypeset | tail -n 1)
stale=$(sed -n 's/^Re-typeset \([0-9]*\) papers.*/\1/p' <<<"$retypeset")
[ "${stale:-0}" = 0 ] && stale="" || stale=", ${stale} paper(s) typeset again"
echo "[3/$total] migrate: ${applied} migration(s) applied${stale} in $(since "$started")"

started=$(now)
summary=$(quietly "$BIN/python" manage.py load_sample | tail -n 1)
echo "[4/$total] sample: ${summary} in $(since "$started")"

[ "$serve" = 1 ] || exit 0

started=$(now)
# A control socket of this checkout's own: gunicorn's default is one per user, which a second
# site on the machine (another checkout, another port) would take over.
mkdir -p .local
# --preload: loaded and warmed once, then forked (peerrevenue/gunicorn_conf.py).
"$BIN/gunicorn" --config python:peerrevenue.gunicorn_conf peerrevenue.wsgi --preload \
  --bind "127.0.0.1:$PORT" --workers 2 --access-logfile - \
  --control-socket ".local/gunicorn-$PORT.ctl" &
server=$!
# On Ctrl-C (which gunicorn receives too) or any exit: the server first, then the database.
trap 'kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
      [ -n "${DATABASE_URL:-}" ] || "$BIN/python" -m peerrevenue.embedded_db stop >/dev/null' EXIT
trap 'exit 130' INT TERM
"$BIN/python" - "$PORT" "$server" <<'PY'
import os, sys, time, urllib.request

port, server = sys.argv[1], int(sys.argv[2])
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        os.kill(server, 0)
    except ProcessLookupError:
        sys.exit("gunicorn stopped before it answered (its output is above).")
    try:
        # Long enough for a worker still warming up: a retry would only queue a second request.
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=60)
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit("gunicorn did not answer within two minutes.")
PY
echo "[5/$total] serve: Peer Revenue is at http://127.0.0.1:$PORT/ (ready in $(since "$started"); Ctrl-C stops it)"
wait "$server"
