# `make test` and `make demo` are the whole set-up: each creates .venv when no virtual
# environment is active and installs the project with its dev extra from pyproject.toml.
PYTHON ?= python3

ifdef VIRTUAL_ENV
VENV := $(VIRTUAL_ENV)
else
VENV := .venv
endif
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: test demo lint typecheck pytest bench install clean test-strands-floor

install: $(STAMP)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tests examples benchmarks typings
	$(BIN)/ruff format --check src tests examples benchmarks typings

typecheck: $(STAMP)
	$(BIN)/mypy src examples typings
	$(BIN)/pyright --pythonpath $(BIN)/python

pytest: $(STAMP)
	$(BIN)/pytest

test: lint pytest typecheck

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py

# The strands bridge against the oldest strands-agents it supports, in a venv of its own.
STRANDS_FLOOR := 1.62.0
FLOOR_VENV := .venv-strands-floor

test-strands-floor:
	$(PYTHON) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(FLOOR_VENV)/bin/python -m pip install --quiet -e ".[dev]" "strands-agents==$(STRANDS_FLOOR)"
	$(FLOOR_VENV)/bin/pytest tests/bridges

# The host conformance kit against every host installed, printing the table of clauses by host.
# Clauses a host breaks until an open issue is fixed are listed, with the issue, in one place.
.PHONY: conformance
conformance: $(STAMP)
	$(BIN)/python -m strands_middleware.conformance --all \
		--known-failures tests.conformance.test_hosts:KNOWN_FAILURES

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_chain.py

clean:
	rm -rf .venv $(FLOOR_VENV) .mypy_cache .pytest_cache .ruff_cache
