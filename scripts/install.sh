#!/usr/bin/env bash
# Make or update .venv. `site` (make run): the packages the site runs, and no test tools;
# `dev` (make test, make lint): those and the test tools (pytest, Playwright, mypy, ruff…).
# Each says what it does, how long it took and how big .venv is, and leaves a stamp that is
# newer than pyproject.toml, so that the next run skips it until the pins change.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
STEP=${STEP:-}
kind=${1:-site}
case "$kind" in
  site) spec=. ; stamp=.venv/bin/.installed-site ; what="the site's packages (no test tools)" ;;
  dev) spec=".[dev]" ; stamp=.venv/bin/.installed ; what="the site's packages and the test tools" ;;
  *) echo "usage: scripts/install.sh site|dev" >&2; exit 2 ;;
esac

if [ -e "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; then
  echo "${STEP}install: .venv is up to date"
  exit 0
fi
started=$SECONDS
echo "${STEP}install: $what into .venv (a minute or less the first time)…"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# --no-compile: pip would otherwise write bytecode for every module of every package (SciPy's
# and scikit-learn's tests too), over half the time of a first install; Python writes it for
# the modules actually imported, the first time each is.
# pip's own output (and setuptools' notes on editable installs) is kept in a log, shown when
# the install fails.
if ! .venv/bin/pip install --quiet --disable-pip-version-check --no-compile --editable "$spec" \
  >.venv/install.log 2>&1; then
  cat .venv/install.log >&2
  echo "${STEP}install: failed (the log above is in .venv/install.log)" >&2
  exit 1
fi
touch "$stamp"
# The test tools include the site's packages.
[ "$kind" = site ] || touch .venv/bin/.installed-site
echo "${STEP}install: done in $((SECONDS - started)) s; .venv takes $(du -sh .venv | cut -f1)"
