# GPU Failure Atlas. Quick start: `make serve` (site on http://127.0.0.1:8000), `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1

.PHONY: setup browser validate schema pages build serve test test-fast bench fuzz clean help

help:
	@echo "make serve    set up, build the site and serve it on http://127.0.0.1:8000"
	@echo "make test     set up and run every test (browser tests included)"
	@echo "make build    build the static site into site/"
	@echo "make validate check every entry (kb validate)"
	@echo "make bench    run the benchmarks (build, diagnose, browser); results go to bench/results.md"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

# Pyodide for the in-browser log doctor, pinned in package-lock.json and copied into the site.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

setup: $(STAMP) node_modules/.package-lock.json

# Debian's Chromium for the browser tests (Playwright cannot download browsers here).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "browser tests need /usr/bin/chromium: sudo apt-get install -y chromium" >&2; exit 1; fi; \
	fi

validate: setup
	$(BIN)/kb validate

schema: setup
	$(BIN)/kb schema

pages: setup
	$(BIN)/kb build

build: setup
	$(BIN)/mkdocs build --strict

serve: build
	KB_SITE_URL=http://127.0.0.1:8000/ $(BIN)/mkdocs serve --strict -a 127.0.0.1:8000  # local preview at the root

test: setup browser
	$(BIN)/kb validate
	$(BIN)/kb fmt --check
	$(BIN)/kb schema --check
	$(BIN)/kb docs --check
	$(BIN)/python -m pytest

test-fast: setup
	$(BIN)/python -m pytest -m "not browser and not slow"

bench: setup browser
	$(BIN)/python bench/run.py
	$(BIN)/python bench/diagnose_bench.py
	$(BIN)/python bench/browser_bench.py
	$(BIN)/python bench/hostile_bench.py
	$(BIN)/python bench/job_bench.py
	$(BIN)/python bench/field_eval.py
	$(BIN)/python bench/paste_eval.py
	$(BIN)/python bench/search_eval.py

clean:
	rm -rf site bench/out docs/entries docs/categories docs/xid docs/index.md docs/data

# Long fuzzing run (Hypothesis, profile "fuzz"); `make test` runs the same properties briefly.
fuzz: setup
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest tests/test_fuzz.py -p no:cacheprovider
