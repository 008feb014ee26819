"""A call to a tool the agent does not have runs ExecuteToolStage on the OpenAI Agents SDK."""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from agents import (
    Agent,
    RunConfig,
    Runner,
    ToolErrorFormatterArgs,
    function_tool,
    set_tracing_disabled,
)
from agents.exceptions import ModelBehaviorError

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.events import ToolResultEvent, TypedEvent
from strands_middleware.stages._execute_tool import ExecuteToolContext
from strands_middleware.stages._invoke_model import InvokeModelContext
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

set_tracing_disabled(True)
CONFIG = RunConfig(tracing_disabled=True)


@function_tool(needs_approval=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def answering(seen: list[Any]) -> Any:
    @ExecuteToolStage.wrap
    async def answer(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append((context.tool, dict(context.tool_use)))
        if context.tool is None:
            text = f"teleported to {context.tool_use['input']['to']}"
            yield ToolResultEvent(
                {
                    "toolUseId": context.tool_use["toolUseId"],
                    "status": "success",
                    "content": [{"text": text}],
                }
            )
            return
        async for event in next_fn(context):
            yield event

    return answer


@InvokeModelStage.wrap
async def passing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def results_read(script: ScriptedModel) -> list[Any]:
    return [
        block["toolResult"]["content"]
        for request in script.requests
        for message in request.messages
        for block in message["content"]
        if "toolResult" in block
    ]


async def run(agent: Agent[Any], config: RunConfig, *, streamed: bool) -> Any:
    if not streamed:
        return await Runner.run(agent, "Teleport me", run_config=config)
    result = Runner.run_streamed(agent, "Teleport me", run_config=config)
    async for _event in result.stream_events():
        pass
    return result


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("model_handler", [False, True])
async def test_a_handler_answers_a_call_to_a_tool_the_agent_does_not_have(
    streamed: bool, model_handler: bool
) -> None:
    # With a model handler the calls are noted from the chain's result; without, from the
    # model's own response: both give handlers the call's arguments.
    seen: list[Any] = []
    script = ScriptedModel([tool_turn("teleport", {"to": "Mars"}, "t1"), text_turn("There.")])
    middleware = OpenAIAgentsMiddleware(*([passing] if model_handler else []), answering(seen))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script)))
    result = await run(agent, middleware.run_config(CONFIG), streamed=streamed)
    assert result.final_output == "There."
    assert seen == [
        (None, {"toolUseId": "t1", "name": "teleport", "input": {"to": "Mars"}}),
    ]
    assert results_read(script) == [[{"text": "teleported to Mars"}]]


async def test_with_no_handler_answering_the_model_reads_that_the_tool_is_unknown() -> None:
    seen: list[Any] = []
    script = ScriptedModel([tool_turn("teleport", {}, "t1"), text_turn("Sorry.")])

    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.tool)
        return context

    middleware = OpenAIAgentsMiddleware(ExecuteToolStage.input(watch))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script)))
    result = await run(agent, middleware.run_config(CONFIG), streamed=False)
    assert (result.final_output, seen) == ("Sorry.", [None])
    assert results_read(script) == [[{"text": "Unknown tool: teleport"}]]


async def test_a_gate_on_a_call_to_a_tool_the_agent_does_not_have_keeps_it_from_running() -> None:
    # The SDK cannot pause such a call: the model reads that it did not run, and why.
    script = ScriptedModel([tool_turn("teleport", {}, "t1"), text_turn("Sorry.")])
    middleware = OpenAIAgentsMiddleware(ToolApproval())
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script)))
    result = await run(agent, middleware.run_config(CONFIG), streamed=True)
    assert result.final_output == "Sorry." and not result.interruptions
    [[read]] = results_read(script)
    assert "did not run" in read["text"] and "teleport" in read["text"]


async def test_the_config_s_own_formatter_still_formats_the_other_errors() -> None:
    kinds: list[str] = []

    async def formatter(args: ToolErrorFormatterArgs[Any]) -> str:
        kinds.append(args.kind)
        return f"custom {args.kind}"

    script = ScriptedModel([tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("No.")])
    middleware = OpenAIAgentsMiddleware(answering([]))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[add]))
    config = middleware.run_config(RunConfig(tracing_disabled=True, tool_error_formatter=formatter))
    assert middleware.run_config(config).tool_error_formatter is config.tool_error_formatter
    paused = await Runner.run(agent, "Add", run_config=config)
    state = paused.to_state()
    state.reject(paused.interruptions[0])
    done = await Runner.run(agent, state, run_config=config)
    assert (done.final_output, kinds) == ("No.", ["approval_rejected"])
    assert results_read(script) == [[{"text": "custom approval_rejected"}]]


async def test_the_sdk_s_own_error_stays_when_the_config_asks_for_it() -> None:
    script = ScriptedModel([tool_turn("teleport", {}, "t1")])
    middleware = OpenAIAgentsMiddleware(answering([]))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script)))
    config = middleware.run_config(CONFIG)
    config.tool_not_found_behavior = "raise_error"
    with pytest.raises(ModelBehaviorError, match="teleport"):
        await run(agent, config, streamed=False)
