"""The bridge wraps what the SDK resolves: its default provider's model, a hand-built tool."""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import dataclasses
import json
from typing import Any

import pytest
from agents import (
    Agent,
    FunctionTool,
    OpenAIResponsesModel,
    RunConfig,
    RunContextWrapper,
    Runner,
    set_tracing_disabled,
)

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.stages._execute_tool import ExecuteToolContext
from strands_middleware.stages._invoke_model import InvokeModelContext
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

set_tracing_disabled(True)
CONFIG = RunConfig(tracing_disabled=True)


async def run(agent: Agent[Any], config: RunConfig, *, streamed: bool) -> Any:
    if not streamed:
        return await Runner.run(agent, "Hi", run_config=config)
    result = Runner.run_streamed(agent, "Hi", run_config=config)
    async for _event in result.stream_events():
        pass
    return result


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("name", [None, "gpt-4.1-mini"])
async def test_the_default_provider_s_model_runs_the_chain(
    monkeypatch: pytest.MonkeyPatch, name: str | None, streamed: bool
) -> None:
    # The SDK's own provider builds an OpenAI client, which wants a key; no request is sent:
    # the handler hands each call to a scripted model.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-offline-test")
    seen: list[Any] = []
    scripted = ScriptedOpenAIModel([text_turn("Hello.")])

    def switch(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.model)
        return dataclasses.replace(context, model=scripted)

    middleware = OpenAIAgentsMiddleware(InvokeModelStage.input(switch))
    agent = middleware.wrap(Agent("a", model=name))
    result = await run(agent, middleware.run_config(CONFIG), streamed=streamed)
    assert result.final_output == "Hello."
    [resolved] = seen
    assert isinstance(resolved, OpenAIResponsesModel)
    assert name is None or resolved.model == name


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_function_tool_built_by_hand_runs_the_chain(streamed: bool) -> None:
    ran: list[Any] = []

    async def invoke(context: RunContextWrapper[Any], args_json: str) -> str:
        ran.append(json.loads(args_json))
        return "pong"

    ping = FunctionTool(
        name="ping",
        description="Ping a host.",
        params_json_schema={
            "type": "object",
            "properties": {"host": {"type": "string"}},
            "required": ["host"],
            "additionalProperties": False,
        },
        on_invoke_tool=invoke,
    )
    seen: list[Any] = []

    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append((context.tool is not None, dict(context.tool_use)))
        return context

    script = ScriptedModel([tool_turn("ping", {"host": "h"}, "t1"), text_turn("Up.")])
    middleware = OpenAIAgentsMiddleware(ExecuteToolStage.input(watch))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[ping]))
    result = await run(agent, CONFIG, streamed=streamed)
    assert (result.final_output, ran) == ("Up.", [{"host": "h"}])
    assert seen == [(True, {"toolUseId": "t1", "name": "ping", "input": {"host": "h"}})]
