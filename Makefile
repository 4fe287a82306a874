# The two commands of the README, and the steps they are made of.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000

.PHONY: run test test-fast setup lint bench topology

# The test tools, on top of the site's packages; reinstalled whenever the pins change.
$(BIN)/.installed: pyproject.toml
	PYTHON=$(PYTHON) bash scripts/install.sh dev

# The local site without serving it: .venv (no test tools), the embedded PostgreSQL
# (.local/pgdata), migrate (the cache table too: papers/migrations/0011_cache_table.py), the
# sample. Each step prints what it did and how long it took.
setup:
	@PYTHON=$(PYTHON) bash scripts/run.sh --no-serve

# Zero-setup local site: the steps of setup, then two gunicorn workers; eager tasks; Ctrl-C
# stops the site and the embedded server.
run:
	@PYTHON=$(PYTHON) PORT=$(PORT) bash scripts/run.sh

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
