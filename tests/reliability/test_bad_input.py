"""Every user error in the README's table, the exact error it raises, and the state after it.

Errors found before anything runs (registration, a bad prompt, a bad resume) leave the registry
and the agent exactly as they were. Errors found while a run is under way (a chain that drops
its result, a malformed model stream) end that run; the history then holds the user turn that
started it, and the next invocation continues from there.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.content import ToolSpec, ToolUse
from strands_middleware.exceptions import (
    InterruptResponseFormatError,
    InterruptResumeError,
    ModelStreamError,
    ReplacedMessagesError,
)
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


def snapshot(agent: Agent) -> str:
    return json.dumps({"messages": agent.messages, "state": agent.interrupt_state.to_dict()})


@tool
def delete(path: str) -> str:
    """Delete a file."""
    return path


class TestRegistration:
    """Wrong handler kinds and tokens: refused where they are registered, nothing registered."""

    @pytest.mark.parametrize(
        ("token", "handler", "message"),
        [
            (InvokeModelStage, lambda context: context, r"invokeModel\.Wrap.*\(context, next_fn\)"),
            (InvokeModelStage.Input, None, r"invokeModel\.Input.*not callable"),
            ("invokeModel", lambda context: context, r"takes a MiddlewareStage"),
        ],
    )
    def test_refused_and_nothing_registered(self, token: Any, handler: Any, message: str) -> None:
        agent = Agent(model=ScriptedModel([]))
        with pytest.raises(TypeError, match=message):
            agent.add_middleware(token, handler)
        assert not agent.middleware_registry.has_handlers(InvokeModelStage)

    def test_a_coroutine_wrap_handler_names_the_fix(self) -> None:
        async def fetch(context: Any, next_fn: Any) -> None:
            return None

        with pytest.raises(TypeError, match=r"coroutine function \(async def without yield\)"):
            InvokeModelStage.wrap(fetch)  # type: ignore[arg-type]

    def test_use_with_one_bad_item_registers_none(self) -> None:
        agent = Agent(model=ScriptedModel([]))
        with pytest.raises(TypeError, match="argument 1"):
            agent.use(InvokeModelStage.input(lambda context: context), object())  # type: ignore[arg-type]
        assert not agent.middleware_registry.has_handlers(InvokeModelStage)


def test_an_output_handler_returning_the_wrong_type() -> None:
    def bare(result: MiddlewareResult[ModelStopReason]) -> ModelStopReason:
        return result.value

    agent = Agent(model=ScriptedModel([text_turn("x")]))
    agent.add_middleware(InvokeModelStage.Output, bare)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"Output handler bare \(invokeModel\.Output\) returned ModelStopReason"
    ):
        agent("hi")


def test_a_chain_that_drops_its_result() -> None:
    async def drop(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if not isinstance(event, ModelStopReason):
                yield event

    agent = Agent(model=ScriptedModel([text_turn("x"), text_turn("y")]))
    agent.add_middleware(InvokeModelStage, drop)
    with pytest.raises(RuntimeError, match="stage 'invokeModel' ended without a ModelStopReason"):
        agent("hi")
    assert [m["role"] for m in agent.messages] == ["user"]


def test_a_replaced_agent_stream_messages_list() -> None:
    def replace(context: AgentStreamContext) -> AgentStreamContext:
        return context.replace(messages=[])

    model = ScriptedModel([text_turn("x")])
    agent = Agent(model=model, middleware=[AgentStreamStage.input(replace)])
    with pytest.raises(ReplacedMessagesError, match=r"replaced context\.messages"):
        agent("hi")
    assert model.requests == []


def test_a_tool_that_yields_no_tool_result_event() -> None:
    class Silent:
        tool_name = "silent"

        @property
        def tool_spec(self) -> ToolSpec:
            return {"name": "silent", "description": "says nothing", "inputSchema": {"json": {}}}

        async def stream(
            self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
        ) -> AsyncGenerator[Any, None]:
            yield {"progress": "working"}

    model = ScriptedModel([tool_turn("silent", {}, tool_use_id="t1"), text_turn("ok")])
    agent = Agent(model=model, tools=[Silent()])
    agent("go")
    result = agent.messages[2]["content"][0]["toolResult"]  # type: ignore[typeddict-item]
    assert result["status"] == "error"
    assert "tool 'silent' ended without yielding a ToolResultEvent" in result["content"][0]["text"]


def test_a_malformed_model_stream() -> None:
    class Broken:
        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            yield {"messageStart": {"role": "assistant"}}
            yield {
                "contentBlockDelta": {"delta": {"toolUse": {"input": "{"}}, "contentBlockIndex": 0}
            }

    agent = Agent(model=Broken())
    with pytest.raises(ModelStreamError, match="malformed model stream at chunk 2"):
        agent("hi")


class TestResume:
    """A resume with malformed, unknown or missing responses changes nothing."""

    @pytest.fixture
    def paused(self) -> Agent:
        from strands_middleware import ExecuteToolContext, ExecuteToolStage

        @ExecuteToolStage.wrap
        async def gate(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            context.interrupt("approve")
            async for event in next_fn(context):
                yield event

        turn = tool_turn("delete", {"path": "/a"}, tool_use_id="t1")
        turn["content"].append(
            {"toolUse": {"toolUseId": "t2", "name": "delete", "input": {"path": "/b"}}}
        )
        agent = Agent(model=ScriptedModel([turn]), tools=[delete], middleware=[gate])
        assert agent("clean").stop_reason == "interrupt"
        assert len(agent.interrupt_state.owed) == 2
        return agent

    @pytest.mark.parametrize(
        ("prompt", "error", "message"),
        [
            (
                [{"interruptResponse": {"response": "yes"}}],
                InterruptResponseFormatError,
                "interruptId",
            ),
            ([{"interruptResponse": "yes"}], InterruptResponseFormatError, "interruptResponse"),
            (
                [{"interruptResponse": {"interruptId": "v1:nope", "response": "y"}}],
                InterruptResumeError,
                "unknown interrupt id",
            ),
            (
                "a fresh prompt",
                InterruptResponseFormatError,
                "must be resumed with interrupt responses",
            ),
        ],
    )
    def test_refused_and_state_unchanged(
        self, paused: Agent, prompt: Any, error: type[Exception], message: str
    ) -> None:
        before = snapshot(paused)
        with pytest.raises(error, match=message):
            paused(prompt)
        assert snapshot(paused) == before

    def test_a_missing_answer_is_refused(self, paused: Agent) -> None:
        first = paused.interrupt_state.owed[0]
        before = snapshot(paused)
        with pytest.raises(InterruptResumeError, match="still need an answer"):
            paused([{"interruptResponse": {"interruptId": first.id, "response": "yes"}}])
        assert snapshot(paused) == before


def test_a_resume_when_nothing_is_owed() -> None:
    agent = Agent(model=ScriptedModel([]))
    with pytest.raises(InterruptResumeError, match="no interrupt is waiting for a response"):
        agent([{"interruptResponse": {"interruptId": "x", "response": "y"}}])
    assert agent.messages == []


def test_a_prompt_of_the_wrong_type() -> None:
    agent = Agent(model=ScriptedModel([]))
    before = copy.deepcopy(agent.messages)
    with pytest.raises(TypeError, match="a prompt is a str, a list of content blocks, or None"):
        agent(3.5)  # type: ignore[arg-type]
    assert agent.messages == before


def test_registering_on_a_registry_with_a_bad_token_changes_nothing() -> None:
    registry = MiddlewareRegistry()
    with pytest.raises(TypeError):
        registry.add_middleware(ToolResultEvent, lambda context: context)  # type: ignore[call-overload]
    assert registry.handlers(InvokeModelStage) == ()
