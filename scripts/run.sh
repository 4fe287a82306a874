#!/usr/bin/env bash
# Serve the local site with two gunicorn workers; on exit (Ctrl-C) stop the embedded
# PostgreSQL that the site started, unless DATABASE_URL points elsewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
PORT=${PORT:-8000}

if [ -z "${DATABASE_URL:-}" ]; then
  "$BIN/python" -m peerrevenue.embedded_db start
  trap '"$BIN/python" -m peerrevenue.embedded_db stop' EXIT
fi
echo "Peer Revenue is at http://127.0.0.1:$PORT/ (Ctrl-C stops it)"
# A control socket of this checkout's own: gunicorn's default is one per user, which a second
# site on the machine (another checkout, another port) would take over.
mkdir -p .local
"$BIN/gunicorn" peerrevenue.wsgi --bind "127.0.0.1:$PORT" --workers 2 --access-logfile - \
  --control-socket ".local/gunicorn-$PORT.ctl"
