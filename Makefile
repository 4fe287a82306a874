# The two commands of the README, and the steps they are made of.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run test test-fast setup lint bench topology

# Reinstall whenever the pinned dependencies change.
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --editable '.[dev]'
	touch $@

# Without DATABASE_URL the first connection starts the embedded PostgreSQL (.local/pgdata).
# migrate makes the cache table too (papers/migrations/0011_cache_table.py).
setup: $(BIN)/.installed
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py load_sample

# Zero-setup local site: embedded PostgreSQL, eager tasks, the bundled sample listing, served by
# two gunicorn workers; Ctrl-C stops the site and the embedded server.
run: setup
	PORT=$(PORT) bash scripts/run.sh

# The whole suite, including the browser tests: on the machine's PostgreSQL and Redis when it
# has them (CI does), on the embedded PostgreSQL otherwise.
test: $(BIN)/.installed
	bash scripts/test.sh

# The suite without the browser and multi-process tests, for a quick check while working.
test-fast: $(BIN)/.installed
	bash scripts/test.sh -m "not e2e and not slow"

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The production shape on this machine (primary + replica, pgbouncer, two gunicorn instances
# behind haproxy, two workers, beat), the checks of issue 24 against it, then the teardown.
topology: $(BIN)/.installed
	bash scripts/topology.sh
