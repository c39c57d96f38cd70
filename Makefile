# The README's commands. `make run` opens the dashboard on sample_reports/;
# `make test` runs the whole suite (CI calls it through .ci/run).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
REPORTS ?= sample_reports
PORT ?= 8501

.PHONY: run test check lint summary fixtures bench performance-doc commands-doc screenshots clean

$(VENV)/.run-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m compileall -q dashboard  # where PYTHONDONTWRITEBYTECODE is set, too
	touch $@

$(VENV)/.test-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m compileall -q dashboard
	touch $(VENV)/.run-installed $@

run: $(VENV)/.run-installed
	$(BIN)/relidash serve $(REPORTS) --port $(PORT)

# multivon-eval itself, in a throwaway venv, for the tests that compare against it.
# It is never a dependency of relidash.
UPSTREAM := .venv-upstream
$(UPSTREAM)/.installed:
	$(PYTHON) -m venv $(UPSTREAM)
	$(UPSTREAM)/bin/python -m pip install --quiet multivon-eval==0.20.0
	touch $@

# Azurite, Microsoft's Azure Storage emulator, for the az:// tests: from the npm registry
# into .tools/ (git-ignored), with Node.js from Debian's packages where the machine has none.
AZURITE := .tools/azurite/node_modules/.bin/azurite-blob
$(AZURITE): $(VENV)/.test-installed tests/support/azure_server.py
	command -v npm >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm </dev/null)
	$(BIN)/python tests/support/azure_server.py install

# RELIDASH_REQUIRE_TOOLS=1: a test whose tool is missing (Chromium, Node.js and Azurite, the
# storage emulators, ssh-keygen, multivon-eval) fails here rather than skips, as under CI
# (tests/support/required_tools.py); a bare `pytest` on a workstation skips it.
test: $(VENV)/.test-installed $(UPSTREAM)/.installed $(AZURITE)
	bash tools/ensure_chromium.sh
	command -v ssh-keygen >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client </dev/null)
	$(MAKE) --no-print-directory check

# The checks, in order: formatting, lint, types (mypy's settings are in pyproject.toml),
# then the whole suite, where a missing test tool fails rather than skips. `make test`
# installs what they need first.
check: lint
	RELIDASH_REQUIRE_TOOLS=1 RELIDASH_UPSTREAM_PYTHON=$(CURDIR)/$(UPSTREAM)/bin/python $(BIN)/python -m pytest

lint: $(VENV)/.test-installed
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy

summary: $(VENV)/.run-installed
	$(BIN)/relidash summary $(REPORTS)

fixtures:
	$(PYTHON) tools/make_fixtures.py

bench: $(VENV)/.test-installed
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python tools/performance_doc.py

# docs/performance.md from the figures the benchmarks kept in benchmarks/figures/
performance-doc:
	$(PYTHON) tools/performance_doc.py

# docs/commands.md from relidash's own parser
commands-doc: $(VENV)/.run-installed
	$(BIN)/python tools/commands_doc.py

# docs/img/*.png: each page in Debian's Chromium on sample_reports/
screenshots: $(VENV)/.test-installed
	bash tools/ensure_chromium.sh
	$(BIN)/python tools/screenshots.py --out docs/img

clean:
	rm -rf $(VENV) $(UPSTREAM) .tools .pytest_cache .ruff_cache .mypy_cache
