"""What pydantic-ai cannot carry is said at registration; what it can (its deps) is carried."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from strands_middleware import ExecuteToolStage, InvokeModelContext, InvokeModelStage
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.catalog import Retry, ToolMock
from strands_middleware.host._mixin import UNKNOWN_TOOLS


def test_a_tool_mock_is_warned_about_once_naming_its_fixtures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    mock = ToolMock({"get_weather": "sunny", "search": "nothing found"})
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        bridge = PydanticAIMiddleware(mock)
        bridge.use(Retry())
        PydanticAIMiddleware(mock)  # the same mock on another pydantic-ai agent: said already
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith("ToolMock on PydanticAIMiddleware: pydantic-ai answers a call")
    assert "fixtures (get_weather, search) answer only calls to tools the agent has" in warnings[0]
    # The mock still registers: it answers calls to tools the agent has.
    Agent("test", capabilities=[bridge])
    assert bridge.middleware_registry.has_handlers(ExecuteToolStage)


def test_the_bridge_says_what_it_lacks() -> None:
    assert UNKNOWN_TOOLS in PydanticAIMiddleware.lacks


def test_the_runs_deps_reach_handlers_in_invocation_state() -> None:
    seen: list[object] = []

    @InvokeModelStage.input
    def read_deps(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.invocation_state.get("deps", "no deps"))
        return context

    database = {"users": ["jane"]}
    agent = Agent(TestModel(), deps_type=dict, capabilities=[PydanticAIMiddleware(read_deps)])
    # asyncio.run rather than run_sync, which leaves its event loop open behind it.
    asyncio.run(agent.run("hello", deps=database))
    asyncio.run(Agent(TestModel(), capabilities=[PydanticAIMiddleware(read_deps)]).run("hello"))
    assert seen[0] is database
    assert seen[1] == "no deps"


def test_the_runs_metadata_reaches_handlers_in_invocation_state_and_stays_as_given() -> None:
    seen: list[dict[str, object]] = []

    @InvokeModelStage.input
    def read_state(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(dict(context.invocation_state))
        context.invocation_state["written"] = True
        return context

    metadata = {"context_window": 32_000}
    agent = Agent(TestModel(), deps_type=str, capabilities=[PydanticAIMiddleware(read_state)])
    asyncio.run(agent.run("hello", deps="db", metadata=metadata))
    assert seen[0] == {"context_window": 32_000, "deps": "db"}
    assert metadata == {"context_window": 32_000}  # a handler's writes stay in the run's state
