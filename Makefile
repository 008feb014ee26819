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

.PHONY: test demo lint typecheck pytest bench install clean test-strands-floor redis-server

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

pytest: $(STAMP) redis-server
	$(BIN)/pytest

# The Redis store is tested against a real redis-server (Debian's package on CI, run as root).
redis-server:
	@command -v redis-server >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) \
		|| { echo "the tests need redis-server: install it (Debian: apt-get install redis-server)"; exit 1; }

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

bench: $(STAMP) redis-server
	$(BIN)/python benchmarks/bench_chain.py
	$(BIN)/python benchmarks/bench_stores.py

clean:
	rm -rf .venv $(FLOOR_VENV) .mypy_cache .pytest_cache .ruff_cache
