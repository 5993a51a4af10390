# One-command set-up: `make run` (installs on first use) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PACKAGES := . $(wildcard plugins/*) $(wildcard bundles/*)
EDITABLES := $(foreach p,$(PACKAGES),-e $(p))
STAMP := $(VENV)/.installed
PG_TEST_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST := $(BIN)/python -m pytest -n 2 -p no:cacheprovider

.PHONY: install browser run test test-sqlite test-postgres lint typecheck bench clean

install: $(STAMP)

$(STAMP): setup.cfg $(wildcard plugins/*/setup.cfg) $(wildcard bundles/*/setup.cfg)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]' $(foreach p,$(wildcard plugins/*) $(wildcard bundles/*),-e $(p))
	touch $(STAMP)

# Debian's chromium for the editor's browser tests (Playwright drives it; nothing downloads a browser).
browser:
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)

run: install
	$(BIN)/service run

# Style, types and import contracts, then the whole suite on SQLite and again on PostgreSQL
# (RQ tests use the real Redis either way).
test: install lint typecheck test-sqlite test-postgres

test-sqlite: install
	$(PYTEST) tests

test-postgres: install
	SERVICE_TEST_DATABASE_URL=$(PG_TEST_URL) $(PYTEST) tests

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --config .importlinter

typecheck: install
	$(BIN)/mypy core

# Every scenario of bench/ (about 8 minutes); BENCH_ARGS= for SQLite and in-process jobs only.
BENCH_ARGS ?= --scale-out
bench: install
	$(BIN)/python -m bench all $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info */*.egg-info */*/*.egg-info
