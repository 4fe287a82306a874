# The two commands of the README, and the steps they are made of.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/peerrevenue
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0

.PHONY: run test setup lint bench

# Reinstall whenever the pinned dependencies change.
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --editable '.[dev]'
	touch $@

setup: $(BIN)/.installed
	$(BIN)/python manage.py migrate --no-input
	$(BIN)/python manage.py load_sample

# Zero-setup local site: SQLite, eager tasks, the bundled sample listing, served by gunicorn.
run: setup
	@echo "Peer Revenue is at http://127.0.0.1:$(PORT)/"
	$(BIN)/gunicorn peerrevenue.wsgi --bind 127.0.0.1:$(PORT) --workers 2 --access-logfile -

# The whole suite on the local PostgreSQL and Redis, including the browser tests.
test: $(BIN)/.installed
	bash scripts/services.sh
	bash scripts/chromium.sh
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) $(BIN)/pytest

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
