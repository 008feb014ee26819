"""Every user error in the tables of docs/concepts/errors.md: the error raised, the state after.

Errors found before anything runs (registration, a bad prompt, a bad resume) leave the registry
and the agent exactly as they were. Errors found while a run is under way (a chain that drops
its result, a malformed model stream) end that run on the model-call and agent-pass stages; the
history then holds the user turn that started it, and the next invocation continues from there.
On the tool-call stage a middleware mistake ends that tool call instead, with an error result
the model reads and an ERROR log naming the handler, and the run goes on.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
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
from strands_middleware.catalog import Retry, ToolApproval
from strands_middleware.content import ToolSpec, ToolUse
from strands_middleware.exceptions import (
    InterruptMisuseError,
    InterruptResponseFormatError,
    InterruptResumeError,
    ModelStreamError,
    ReplacedMessagesError,
)
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.host import AgentPassPoint
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


def test_a_replaced_agent_stream_messages_list_on_a_host_that_cannot_take_one() -> None:
    # A host whose loop appends the input it was given, whatever the context holds, makes its
    # stage point without replaceable_input: the new list is refused before the pass runs.
    registry = MiddlewareRegistry()
    registry.add_middleware(AgentStreamStage.Input, lambda context: context.replace(messages=[]))
    history: list[Any] = []
    point = AgentPassPoint(registry, agent=None, messages=[], invocation_state={})

    async def host_pass(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        history.append("the pass ran")
        yield TypedEvent({})

    async def run() -> None:
        async with point.open(host_pass) as stream:
            async for _event in stream:
                pass

    with pytest.raises(ReplacedMessagesError, match=r"replaced context\.messages"):
        asyncio.run(run())
    assert history == []


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


class TestBuildTime:
    """Mistakes in building middleware or an agent: refused on the line that makes them."""

    def test_a_stage_used_as_a_decorator(self) -> None:
        with pytest.raises(TypeError, match=r"stage 'invokeModel' is a token, not a decorator"):

            @InvokeModelStage  # type: ignore[operator]  # pyright: ignore[reportCallIssue]
            async def timing(context: Any, next_fn: Any) -> AsyncGenerator[Any, None]:
                async for event in next_fn(context):
                    yield event

    def test_an_agent_given_a_bare_function_as_middleware(self) -> None:
        def concise(context: InvokeModelContext) -> InvokeModelContext:
            return context

        with pytest.raises(TypeError, match=r"Agent\(middleware=\.\.\.\) takes a Middleware"):
            Agent(model=ScriptedModel([]), middleware=concise)  # type: ignore[arg-type]

    def test_a_retry_whose_result_predicate_could_never_act(self) -> None:
        with pytest.raises(
            ValueError, match=r"Retry\(when=\.\.\.\) on InvokeModelStage would never"
        ):
            Retry(when=lambda result: True)


def tool_agent(*middleware: Any) -> Agent:
    model = ScriptedModel([tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")])
    return Agent(model=model, tools=[delete], middleware=list(middleware))


def the_tool_result(agent: Agent) -> dict[str, Any]:
    [result] = [b["toolResult"] for m in agent.messages for b in m["content"] if "toolResult" in b]
    return dict(result)


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]


class TestRunTime:
    """A handler's mistake during a run: the run ends, or (tool calls) a logged error result."""

    def test_a_model_call_handler_that_raises_ends_the_run(self) -> None:
        def broken(context: InvokeModelContext) -> InvokeModelContext:
            raise LookupError("no such setting")

        agent = Agent(
            model=ScriptedModel([text_turn("x")]), middleware=[InvokeModelStage.input(broken)]
        )
        with pytest.raises(LookupError, match="no such setting"):
            agent("hi")
        assert [m["role"] for m in agent.messages] == ["user"]

    def test_an_input_handler_without_return_is_named(self) -> None:
        def forgetful(context: InvokeModelContext) -> InvokeModelContext:
            context.replace(system_prompt="short")  # the new context is dropped

        agent = Agent(
            model=ScriptedModel([text_turn("x")]), middleware=[InvokeModelStage.input(forgetful)]
        )
        with pytest.raises(
            TypeError, match=r"Input handler forgetful \(invokeModel\.Input\) returned None"
        ):
            agent("hi")

    def test_next_fn_called_without_the_context_is_named(self) -> None:
        async def hurried(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn():
                yield event

        agent = Agent(model=ScriptedModel([text_turn("x")]))
        agent.add_middleware(InvokeModelStage, hurried)
        with pytest.raises(
            TypeError, match=r"hurried \(invokeModel\.Wrap\) called next_fn\(\) without the context"
        ):
            agent("hi")

    def test_a_tool_call_handler_that_raises_is_a_logged_error_result(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        def broken(context: ExecuteToolContext) -> ExecuteToolContext:
            raise LookupError("no such setting")

        agent = tool_agent(ExecuteToolStage.input(broken))
        assert agent("clean").stop_reason == "end_turn"
        assert the_tool_result(agent)["content"] == [{"text": "Error: no such setting"}]
        [record] = errors_logged(caplog)
        assert "broken (executeTool.Input)" in record.getMessage()

    def test_a_tool_call_output_handler_returning_the_bare_event(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        def bare(result: MiddlewareResult[ToolResultEvent]) -> ToolResultEvent:
            return result.value

        agent = tool_agent(ExecuteToolStage.output(bare))  # type: ignore[arg-type]
        assert agent("clean").stop_reason == "end_turn"
        text = the_tool_result(agent)["content"][0]["text"]
        assert "Output handler bare (executeTool.Output) returned ToolResultEvent" in text
        assert len(errors_logged(caplog)) == 1

    def test_a_tool_call_chain_that_drops_its_result(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def drop(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn(context):
                if not isinstance(event, ToolResultEvent):
                    yield event

        agent = tool_agent(ExecuteToolStage.wrap(drop))
        assert agent("clean").stop_reason == "end_turn"
        text = the_tool_result(agent)["content"][0]["text"]
        assert "stage 'executeTool' ended without a ToolResultEvent" in text
        assert len(errors_logged(caplog)) == 1


class TestGatesFailClosed:
    """Interrupts that cannot pause safely: the tool does not run (or runs once), and it is said."""

    def test_an_interrupt_swallowed_by_a_broad_except(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def careless(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            try:
                approved = context.interrupt("approve").response == "yes"
            except Exception:
                approved = True
            if approved:
                async for event in next_fn(context):
                    yield event

        agent = tool_agent(ExecuteToolStage.wrap(careless))
        result = agent("clean")
        assert (result.stop_reason, result.interrupts) == ("end_turn", [])
        text = the_tool_result(agent)["content"][0]["text"]
        assert "interrupt 'approve'" in text and "never reached the executor" in text
        assert "careless (executeTool.Wrap)" in errors_logged(caplog)[0].getMessage()

    def test_an_interrupt_after_the_tool_ran(self) -> None:
        async def confirm_after(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            events = [event async for event in next_fn(context)]
            context.interrupt("confirm")
            for event in events:
                yield event

        agent = tool_agent(ExecuteToolStage.wrap(confirm_after))
        assert agent("clean").stop_reason == "end_turn"
        assert not agent.interrupt_state.activated
        assert "after the tool ran" in the_tool_result(agent)["content"][0]["text"]

    def test_two_gates_asking_under_one_name(self) -> None:
        agent = tool_agent(
            # Names given as functions are compared only when a call asks (one of the same name
            # given as a string is refused at registration: see tests/host).
            ToolApproval(name=lambda context: "approve-tool-call"),
            ToolApproval(name=lambda context: "approve-tool-call"),
        )
        paused = agent("clean")
        agent(
            [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "approve"}}]
        )
        text = the_tool_result(agent)["content"][0]["text"]
        assert "two handlers asked interrupt 'approve-tool-call'" in text

    def test_an_agent_stream_interrupt_after_the_stop_event(self) -> None:
        async def late(
            context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn(context):
                yield event
            context.interrupt("review")

        agent = Agent(
            model=ScriptedModel([text_turn("x")]), middleware=[AgentStreamStage.wrap(late)]
        )
        with pytest.raises(
            InterruptMisuseError, match="after the pass produced its EventLoopStopEvent"
        ):
            agent("hi")
        assert not agent.interrupt_state.activated
