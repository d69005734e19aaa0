# Quick start: `make audit` (every claim audited, table printed, reports/ written) and `make test`.
# Both create .venv and install the project into it on first use; nothing else is needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: test test-slow lint audit bench docs clean

$(STAMP): pyproject.toml
	@echo "set-up: creating $(VENV) with $(PYTHON) (once; about 1-2 minutes in all)"
	$(PYTHON) -m venv $(VENV)
	@echo "set-up: upgrading pip"
	$(BIN)/python -m pip install --quiet --upgrade pip
	@echo "set-up: installing dpverify (editable) with its test, lint and docs dependencies"
	$(BIN)/python -m pip install --quiet -e '.[test,lint,docs]'
	touch $(STAMP)
	@echo "set-up: done"

# pytest-xdist: one worker per core; --dist loadscope runs each module on one worker, so a module's
# costly fixture or cache (audit rows, a Dask cluster) is built once. (--dist loadgroup with
# xdist_group marks would be finer, but it silently stops grouping on pytest >= 9.2:
# pytest-dev/pytest-xdist#1386.)
XDIST := -n auto --dist loadscope
# The 10 slowest tests in every CI log: a test growing slow shows before the suite does.
DURATIONS := --durations=10
# Each pytest worker rewrites the asserts of every test module and compiles every module it imports
# (11 s of collection); with the bytecode cached in __pycache__/ (git-ignored) a later run collects in
# 4 s. An environment that forbids writing bytecode (PYTHONDONTWRITEBYTECODE=1) would pay it every run.
unexport PYTHONDONTWRITEBYTECODE

test: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) $(DURATIONS)

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow $(XDIST) $(DURATIONS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# dpverify audit runs as many rows at once as this process has CPUs (--jobs, default), longest first
# by the seconds in reports/audit.json; `make audit AUDIT_FLAGS="--jobs 1"` runs them one by one.
# A filtered audit (AUDIT_FLAGS="--claim RR") writes to reports/partial/, never over the reference report.
AUDIT_FLAGS ?=
audit: $(STAMP)
	$(BIN)/dpverify audit --output reports $(AUDIT_FLAGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_core.py

# The documentation site (mkdocs.yml, docs/) into site/; --strict fails on any warning (a broken
# link, a page missing from the nav, an API name that cannot be collected).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info .hypothesis
