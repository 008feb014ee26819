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

.PHONY: test demo lint typecheck pytest bench install clean

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
	$(BIN)/pyright

pytest: $(STAMP)
	$(BIN)/pytest

test: lint pytest typecheck

demo: $(STAMP)
	$(BIN)/python examples/quickstart.py

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_chain.py

clean:
	rm -rf .venv .mypy_cache .pytest_cache .ruff_cache
