"""`PydanticAIMiddleware`: this library's middleware on a real pydantic-ai ``Agent``.

pydantic-ai's own offline models drive every test: ``FunctionModel`` (with ``stream_function``
for streamed runs) and ``TestModel``, or `ScriptedPydanticAIModel`, a ``FunctionModel`` playing
a script of this library.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.usage import RequestUsage

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.bridges.pydantic_ai import (
    PydanticAIMiddleware,
    PydanticAITool,
    UnsupportedStageError,
    interrupts_of,
    resume_results,
)
from strands_middleware.bridges.pydantic_ai._messages import (
    converse_message,
    same_message,
    stop_reason_of,
)
from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.events import TextDeltaEvent
from strands_middleware.exceptions import InterruptResponseFormatError, InterruptResumeError
from strands_middleware.experimental import AgentStreamStage
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

PAUSABLE: Any = [str, DeferredToolRequests]


def run(agent: Agent[Any, Any], *args: Any, **kwargs: Any) -> Any:
    """``agent.run`` to its end, in an event loop of its own that is closed afterwards."""
    return asyncio.run(agent.run(*args, **kwargs))


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


class Recording:
    """A ``FunctionModel`` function answering from a list, recording what it was sent."""

    def __init__(self, *responses: ModelResponse) -> None:
        self.responses = list(responses)
        self.received: list[list[ModelMessage]] = []
        self.instructions: list[str | None] = []
        self.returned: list[ModelResponse] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.received.append(list(messages))
        self.instructions.append(info.instructions)
        response = self.responses.pop(0)
        self.returned.append(response)
        return response


def text(content: str) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart(content)], usage=RequestUsage(input_tokens=3, output_tokens=2)
    )


def call_add(a: int, b: int, call_id: str = "t1") -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("add", {"a": a, "b": b}, call_id)])


@InvokeModelStage.wrap
async def passthrough(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


# ---- the boundary: Converse in, pydantic-ai's own objects out ------------------------------


def test_unchanged_messages_go_back_as_pydantic_ai_objects() -> None:
    model = Recording(call_add(1, 2), text("3"))
    agent = Agent(
        FunctionModel(model), tools=[add], capabilities=[PydanticAIMiddleware(passthrough)]
    )
    result = run(agent, "go")
    history = result.all_messages()
    sent = model.received[1]
    assert all(any(mine is theirs for theirs in history) for mine in sent)


def test_an_unchanged_result_is_the_models_own_response() -> None:
    model = Recording(text("hello"))
    agent = Agent(FunctionModel(model), capabilities=[PydanticAIMiddleware(passthrough)])
    result = run(agent, "hi")
    assert result.all_messages()[-1] is model.returned[0]


def test_a_result_is_read_against_the_response_as_its_conversion_would_be() -> None:
    response = ModelResponse(
        parts=[
            ThinkingPart("hmm", signature="sig"),
            TextPart("adding"),
            ToolCallPart("add", {"a": 1}, "c1"),
        ]
    )
    message = converse_message(response)
    assert same_message(message, response)
    edits: list[Any] = [
        lambda m: m["content"].pop(),
        lambda m: m["content"].append({"text": "more"}),
        lambda m: m["content"][1].update(text="changed"),
        lambda m: m["content"][2]["toolUse"]["input"].update(a=2),
        lambda m: m["content"][2]["toolUse"].update(name="sub"),
        lambda m: m["content"][0]["reasoningContent"]["reasoningText"].pop("signature"),
        lambda m: m.update(role="user"),
    ]
    for edit in edits:
        edited = converse_message(response)
        edit(edited)
        assert same_message(edited, response) is (edited == message)


def test_handlers_see_converse_messages_one_for_each_pydantic_ai_message() -> None:
    seen: list[Any] = []

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.messages)
        return context

    reasoning = ModelResponse(
        parts=[
            ThinkingPart("think", signature="sig"),
            TextPart("Adding."),
            ToolCallPart("add", {"a": 1, "b": 2}, "t1"),
        ]
    )
    agent = Agent(
        FunctionModel(Recording(reasoning, text("3"))),
        tools=[add],
        capabilities=[PydanticAIMiddleware(record)],
    )
    run(agent, "go")
    assert seen[1] == [
        {"role": "user", "content": [{"text": "go"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
                {"text": "Adding."},
                {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"text": "3"}]}}
            ],
        },
    ]


def test_an_edited_message_reaches_the_model_keeping_its_pydantic_ai_fields() -> None:
    @InvokeModelStage.input
    def shout(context: InvokeModelContext) -> InvokeModelContext:
        context.messages[-1]["content"] = [{"text": "HI"}]
        return context

    model = Recording(text("ok"))
    agent = Agent(
        FunctionModel(model), instructions="Be brief.", capabilities=[PydanticAIMiddleware(shout)]
    )
    run(agent, "hi")
    [request] = model.received[0]
    assert isinstance(request, ModelRequest)
    assert [part.content for part in request.parts] == ["HI"]  # type: ignore[union-attr]
    assert request.instructions == "Be brief."
    assert request.run_id is not None


def test_the_system_prompt_is_pydantic_ais_instructions_and_a_replacement_reaches_the_model() -> (
    None
):
    seen: list[object] = []

    @InvokeModelStage.input
    def inject(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.system_prompt)
        return context.replace(system_prompt="Injected prompt")

    model = Recording(text("ok"))
    agent = Agent(
        FunctionModel(model), instructions="Be brief.", capabilities=[PydanticAIMiddleware(inject)]
    )
    run(agent, "hi")
    assert seen == ["Be brief."]
    assert model.instructions == ["Injected prompt"]


def test_tool_specs_are_converse_and_a_removed_tool_is_not_offered() -> None:
    seen: list[Any] = []

    @InvokeModelStage.input
    def hide(context: InvokeModelContext) -> InvokeModelContext:
        seen.append([spec["name"] for spec in context.tool_specs])
        assert context.tool_specs[0]["inputSchema"]["json"]["properties"]["a"]["type"] == "integer"
        return context.replace(tool_specs=[])

    offered: list[list[str]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append([tool.name for tool in info.function_tools])
        return text("ok")

    run(Agent(FunctionModel(respond), tools=[add], capabilities=[PydanticAIMiddleware(hide)]), "hi")
    assert seen == [["add"]]
    assert offered == [[]]


# ---- the reference agent's behaviour ---------------------------------------------------


def test_a_wrap_short_circuit_skips_the_model() -> None:
    @InvokeModelStage.wrap
    async def cached(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason(
            "end_turn",
            text_turn("from cache"),
            {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
            {"latencyMs": 0},
        )

    model = Recording()
    result = run(Agent(FunctionModel(model), capabilities=[PydanticAIMiddleware(cached)]), "hi")
    assert result.output == "from cache"
    assert model.received == []
    assert result.usage.output_tokens == 2


def test_next_fn_called_several_times_asks_the_model_again() -> None:
    calls: list[int] = []

    def flaky(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("busy")
        return text("ok")

    @InvokeModelStage.wrap
    async def retry(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        for attempt in range(3):
            try:
                async for event in next_fn(context):
                    yield event
                return
            except ConnectionError:
                if attempt == 2:
                    raise

    result = run(Agent(FunctionModel(flaky), capabilities=[PydanticAIMiddleware(retry)]), "hi")
    assert result.output == "ok"
    assert len(calls) == 3


def test_an_output_handler_rewrite_reaches_the_result_with_the_usage_it_set() -> None:
    @InvokeModelStage.output
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop_reason, _message, _usage, metrics = result.value["stop"]
        loud: Any = {"role": "assistant", "content": [{"text": "LOUD"}]}
        usage: Any = {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30}
        return result.replace(value=ModelStopReason(stop_reason, loud, usage, metrics))

    agent = Agent(
        FunctionModel(Recording(text("quiet"))), capabilities=[PydanticAIMiddleware(shout)]
    )
    result = run(agent, "hi")
    assert result.output == "LOUD"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (10, 20)


def test_a_handler_can_switch_one_call_to_another_pydantic_ai_model() -> None:
    backup = TestModel(custom_output_text="from the backup")
    contexts: list[object] = []

    @InvokeModelStage.input
    def switch(context: InvokeModelContext) -> InvokeModelContext:
        contexts.append(context.model)
        return context.replace(model=backup)  # type: ignore[arg-type]

    primary = FunctionModel(Recording())
    result = run(Agent(primary, capabilities=[PydanticAIMiddleware(switch)]), "hi")
    assert result.output == "from the backup"
    assert contexts == [primary]


async def test_a_streamed_run_gives_wrap_handlers_each_delta_and_what_they_yield_is_streamed() -> (
    None
):
    @InvokeModelStage.wrap
    async def upper(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent):
                seen.append(event.text)
                yield TextDeltaEvent(event.text.upper())
            else:
                yield event

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        for piece in ("Hel", "lo ", "there"):
            yield piece

    seen: list[str] = []
    agent = Agent(FunctionModel(stream_function=stream), capabilities=[PydanticAIMiddleware(upper)])
    async with agent.run_stream("hi") as run:
        streamed = [piece async for piece in run.stream_text(delta=True)]
    assert seen == ["Hel", "lo ", "there"]
    assert "".join(streamed) == "HELLO THERE"


async def test_a_streamed_tool_call_reaches_handlers_as_tool_use_deltas() -> None:
    kinds: list[str] = []

    @InvokeModelStage.wrap
    async def record(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            kinds.append(type(event).__name__)
            yield event

    turn = 0

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        nonlocal turn
        turn += 1
        if turn == 1:
            yield {0: DeltaToolCall(name="add", json_args='{"a": 1, ', tool_call_id="t1")}
            yield {0: DeltaToolCall(json_args='"b": 2}')}
        else:
            yield "It is 3."

    agent = Agent(
        FunctionModel(stream_function=stream),
        tools=[add],
        capabilities=[PydanticAIMiddleware(record)],
    )
    async with agent.run_stream("go") as run:
        output = await run.get_output()
    assert output == "It is 3."
    assert kinds.count("ToolUseDeltaEvent") == 2
    assert kinds.count("ModelStopReason") == 2


# ---- tool calls ----------------------------------------------------------------------------


def test_a_tool_input_rewrite_reaches_the_tool() -> None:
    @ExecuteToolStage.input
    def bump(context: ExecuteToolContext) -> ExecuteToolContext:
        tool_use: Any = {**context.tool_use, "input": {**context.tool_use["input"], "a": 40}}
        return context.replace(tool_use=tool_use)

    agent = Agent(
        FunctionModel(Recording(call_add(1, 2), text("ok"))),
        tools=[add],
        capabilities=[PydanticAIMiddleware(bump)],
    )
    returns = tool_returns(run(agent, "go").all_messages())
    assert [part.content for part in returns] == [42]


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def test_a_tool_handler_sees_the_tool_in_this_librarys_shape() -> None:
    seen: list[Any] = []

    @ExecuteToolStage.wrap
    async def inspect(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        assert isinstance(context.tool, PydanticAITool)
        seen.append(
            (context.tool.tool_name, sorted(context.tool.tool_spec), dict(context.tool_use))
        )
        async for event in next_fn(context):
            yield event

    agent = Agent(
        FunctionModel(Recording(call_add(1, 2), text("ok"))),
        tools=[add],
        capabilities=[PydanticAIMiddleware(inspect)],
    )
    run(agent, "go")
    assert seen == [
        (
            "add",
            ["description", "inputSchema", "name"],
            {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}},
        )
    ]


def test_a_tool_short_circuit_and_an_error_result_reach_the_model() -> None:
    @ExecuteToolStage.wrap
    async def deny(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent.error(context.tool_use["toolUseId"], "not allowed")

    agent = Agent(
        FunctionModel(Recording(call_add(1, 2), text("ok"))),
        tools=[add],
        capabilities=[PydanticAIMiddleware(deny)],
    )
    [returned] = tool_returns(run(agent, "go").all_messages())
    assert (returned.outcome, returned.content) == ("failed", "not allowed")


def test_pydantic_ais_own_retry_signal_from_a_tool_still_retries() -> None:
    attempts: list[int] = []

    def picky(n: int) -> int:
        """Accept only 2.

        Args:
            n: The number.
        """
        attempts.append(n)
        if n != 2:
            raise ModelRetry("use 2")
        return n

    model = Recording(
        ModelResponse(parts=[ToolCallPart("picky", {"n": 1}, "t1")]),
        ModelResponse(parts=[ToolCallPart("picky", {"n": 2}, "t2")]),
        text("done"),
    )
    agent = Agent(
        FunctionModel(model),
        tools=[picky],
        capabilities=[PydanticAIMiddleware(ExecuteToolStage.input(lambda c: c))],
    )
    assert run(agent, "go").output == "done"
    assert attempts == [1, 2]


# ---- interrupts: pydantic-ai's approval deferral -------------------------------------------

deleted: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


@ExecuteToolStage.wrap
async def approval(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    answer = context.interrupt("approve", reason={"input": context.tool_use["input"]})
    if answer.response != "yes":
        yield ToolResultEvent.error(context.tool_use["toolUseId"], "denied")
        return
    async for event in next_fn(context):
        yield event


def _approval_agent(*turns: Any) -> tuple[Agent[None, Any], ScriptedPydanticAIModel]:
    model = ScriptedPydanticAIModel(list(turns))
    agent = Agent(
        model,
        tools=[delete_file],
        capabilities=[PydanticAIMiddleware(approval)],
        output_type=PAUSABLE,
    )
    return agent, model


APPROVE_ID = f"v1:middleware_execute_tool:t1:{uuid.uuid5(uuid.NAMESPACE_OID, 'approve')}"


def test_an_interrupt_pauses_through_approval_with_the_spec_id_and_reason() -> None:
    deleted.clear()
    agent, _model = _approval_agent(tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"))
    paused = run(agent, "clean")
    assert isinstance(paused.output, DeferredToolRequests)
    assert [call.tool_call_id for call in paused.output.approvals] == ["t1"]
    [interrupt] = interrupts_of(paused.output)
    assert (interrupt.id, interrupt.name, interrupt.reason) == (
        APPROVE_ID,
        "approve",
        {"input": {"path": "/a"}},
    )
    assert deleted == []


def test_a_resume_runs_the_tool_without_asking_the_model_again() -> None:
    deleted.clear()
    agent, model = _approval_agent(
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")
    )
    paused = run(agent, "clean")
    assert isinstance(paused.output, DeferredToolRequests)
    done = run(
        agent,
        message_history=paused.all_messages(),
        deferred_tool_results=resume_results(paused.output, {APPROVE_ID: "yes"}),
    )
    assert done.output == "gone"
    assert deleted == ["/a"]
    assert len(model.script.requests) == 2  # the call that paused, the one after the tool


def test_a_denial_reaches_the_model_as_the_gates_result() -> None:
    deleted.clear()
    agent, _model = _approval_agent(
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    paused = run(agent, "clean")
    assert isinstance(paused.output, DeferredToolRequests)
    responses = [{"interruptResponse": {"interruptId": APPROVE_ID, "response": "no"}}]
    done = run(
        agent,
        message_history=paused.all_messages(),
        deferred_tool_results=resume_results(paused.output, responses),
    )
    assert deleted == []
    [returned] = tool_returns(done.all_messages())
    assert (returned.outcome, returned.content) == ("failed", "denied")


def test_resume_results_refuses_answers_that_do_not_fit_the_paused_run() -> None:
    agent, _model = _approval_agent(tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"))
    paused = run(agent, "clean")
    assert isinstance(paused.output, DeferredToolRequests)
    with pytest.raises(InterruptResumeError, match="no paused call waits on interrupt 'nope'"):
        resume_results(paused.output, {"nope": "yes", APPROVE_ID: "yes"})
    with pytest.raises(InterruptResumeError, match="is not answered"):
        resume_results(paused.output, {})
    with pytest.raises(InterruptResponseFormatError, match="missing 'response'"):
        resume_results(paused.output, [{"interruptResponse": {"interruptId": APPROVE_ID}}])


def test_a_paused_run_resumes_from_json_in_another_process(tmp_path: Path) -> None:
    deleted.clear()
    agent, _model = _approval_agent(tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"))
    paused = run(agent, "clean")
    saved = tmp_path / "paused.json"
    saved.write_text(
        json.dumps(
            {
                "history": json.loads(paused.all_messages_json()),
                "requests": TypeAdapter(DeferredToolRequests).dump_python(
                    paused.output, mode="json"
                ),
            }
        )
    )
    child = textwrap.dedent(
        f"""
        import asyncio, json, sys
        from pydantic import TypeAdapter
        from pydantic_ai import Agent
        from pydantic_ai.messages import ModelMessagesTypeAdapter
        from pydantic_ai.tools import DeferredToolRequests
        from strands_middleware.bridges.pydantic_ai import (
            PydanticAIMiddleware, interrupts_of, resume_results,
        )
        from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
        from strands_middleware.testing import text_turn
        from tests.bridges.on_pydantic_ai.test_bridge import approval, delete_file, deleted

        saved = json.loads(open({str(saved)!r}).read())
        requests = TypeAdapter(DeferredToolRequests).validate_python(saved["requests"])
        model = ScriptedPydanticAIModel([text_turn("gone")])
        agent = Agent(model, tools=[delete_file], capabilities=[PydanticAIMiddleware(approval)],
                      output_type=[str, DeferredToolRequests])
        answers = {{i.id: "yes" for i in interrupts_of(requests)}}
        done = asyncio.run(agent.run(
            message_history=ModelMessagesTypeAdapter.validate_python(saved["history"]),
            deferred_tool_results=resume_results(requests, answers),
        ))
        print(json.dumps([done.output, deleted, len(model.script.requests)]))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", child],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[3],
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.splitlines()[-1]) == ["gone", ["/a"], 1]
    assert deleted == []


# ---- registration --------------------------------------------------------------------------


def test_agent_stream_handlers_are_refused_at_registration_and_nothing_is_registered() -> None:
    @AgentStreamStage.wrap
    async def gate(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    bridge = PydanticAIMiddleware()
    with pytest.raises(UnsupportedStageError, match="AgentStreamStage is not supported"):
        bridge.use(passthrough, gate)
    with pytest.raises(TypeError, match="AgentStreamStage is not supported on pydantic-ai"):
        bridge.add_middleware(AgentStreamStage.Output, lambda result: result)
    with pytest.raises(UnsupportedStageError):
        PydanticAIMiddleware(gate)
    assert not bridge.middleware_registry.has_handlers(InvokeModelStage)
    assert not bridge.middleware_registry.has_handlers(AgentStreamStage)


def test_middleware_given_as_a_generator_is_registered_once_checked() -> None:
    bridge = PydanticAIMiddleware(item for item in [passthrough])
    assert len(bridge.middleware_registry.handlers(InvokeModelStage)) == 1


def test_a_stage_without_handlers_costs_pydantic_ai_nothing() -> None:
    bridge = PydanticAIMiddleware(ExecuteToolStage.input(lambda context: context))
    model = FunctionModel(Recording())
    assert bridge.get_wrapper_model(model) is None


def test_the_bridge_says_how_to_install_pydantic_ai_when_it_is_missing() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['pydantic_ai'] = None\n"
            "import strands_middleware.bridges.pydantic_ai",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode != 0
    assert 'pip install "strands-middleware[pydantic-ai]"' in completed.stderr


def test_a_model_of_this_library_played_by_pydantic_ai_is_shown_as_itself() -> None:
    script = ScriptedModel([text_turn("played")])
    seen: list[object] = []

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.model)
        return context

    model = ScriptedPydanticAIModel(script)
    result = run(Agent(model, capabilities=[PydanticAIMiddleware(record)]), "hi")
    assert seen == [script]
    assert result.output == "played"
    assert result.all_messages()[-1].model_name == "scripted"  # type: ignore[union-attr]


def test_a_stop_reason_pydantic_ai_has_no_word_for_survives_in_the_response() -> None:
    @InvokeModelStage.output
    def guard(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        _reason, message, usage, metrics = result.value["stop"]
        return result.replace(
            value=ModelStopReason("guardrail_intervened", message, usage, metrics)
        )

    agent = Agent(FunctionModel(Recording(text("no"))), capabilities=[PydanticAIMiddleware(guard)])
    response = run(agent, "hi").all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.finish_reason == "content_filter"
    assert stop_reason_of(response) == "guardrail_intervened"


def test_the_kit_needs_pydantic_ai_only_for_the_pydantic_ai_host() -> None:
    code = (
        "import sys; sys.modules['pydantic_ai'] = None\n"
        "from strands_middleware.conformance import load_harness\n"
        "print(load_harness('reference').name)\n"
        "load_harness('pydantic_ai')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.stdout.strip() == "reference"
    assert 'pip install "strands-middleware[pydantic-ai]"' in completed.stderr


async def test_a_streamed_runs_output_rewrite_is_its_result_keeping_the_models_fields() -> None:
    @InvokeModelStage.output
    def shout(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop_reason, _message, usage, metrics = result.value["stop"]
        loud: Any = {"role": "assistant", "content": [{"text": "LOUD"}]}
        return result.replace(value=ModelStopReason(stop_reason, loud, usage, metrics))

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "quiet"

    agent = Agent(FunctionModel(stream_function=stream), capabilities=[PydanticAIMiddleware(shout)])
    async with agent.run_stream("hi") as run:
        output = await run.get_output()
        response = run.response
    assert output == "LOUD"
    assert isinstance(response, ModelResponse)
    assert response.model_name is not None and response.model_name.startswith("function")


def test_two_gates_on_one_call_pause_in_turn_and_keep_the_first_answer() -> None:
    asked: list[tuple[str, Any]] = []

    def gate(name: str) -> Any:
        @ExecuteToolStage.wrap
        async def ask(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            asked.append((name, context.interrupt(name).response))
            async for event in next_fn(context):
                yield event

        return ask

    deleted.clear()
    model = ScriptedPydanticAIModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")]
    )
    agent = Agent(
        model,
        tools=[delete_file],
        capabilities=[PydanticAIMiddleware(gate("first"), gate("second"))],
        output_type=PAUSABLE,
    )
    first = run(agent, "clean")
    assert [i.name for i in interrupts_of(first.output)] == ["first"]
    [first_id] = [i.id for i in interrupts_of(first.output)]
    second = run(
        agent,
        message_history=first.all_messages(),
        deferred_tool_results=resume_results(first.output, {first_id: "one"}),
    )
    assert [i.name for i in interrupts_of(second.output)] == ["second"]
    [second_id] = [i.id for i in interrupts_of(second.output)]
    done = run(
        agent,
        message_history=second.all_messages(),
        deferred_tool_results=resume_results(second.output, {second_id: "two"}),
    )
    assert done.output == "gone"
    assert deleted == ["/a"]
    assert asked[-2:] == [("first", "one"), ("second", "two")]
    assert len(model.script.requests) == 2


def test_resume_results_given_the_capability_refuses_an_answer_the_gate_does_not_accept() -> None:
    deleted.clear()
    capability = PydanticAIMiddleware(ToolApproval())
    agent = Agent(
        ScriptedPydanticAIModel(
            [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")]
        ),
        tools=[delete_file],
        capabilities=[capability],
        output_type=PAUSABLE,
    )
    paused = run(agent, "clean")
    assert isinstance(paused.output, DeferredToolRequests)
    [interrupt] = interrupts_of(paused.output)
    requests_before = copy.deepcopy(paused.output)
    earlier = DeferredToolResults()

    with pytest.raises(InterruptResumeError) as refused:
        resume_results(paused.output, {interrupt.id: "yes"}, results=earlier, middleware=capability)
    assert str(refused.value).startswith(
        "an answer is not one the middleware that asked accepts, so nothing was resumed"
    )
    assert f"{interrupt.id}: ToolApproval 'approve-tool-call': the answer 'yes'" in str(
        refused.value
    )
    assert refused.value.interrupt_ids == (interrupt.id,)
    assert paused.output == requests_before
    assert earlier == DeferredToolResults()
    # Without the capability the answer is not checked here; the gate fails closed in the run.
    assert resume_results(paused.output, {interrupt.id: "yes"}).approvals

    done = run(
        agent,
        message_history=paused.all_messages(),
        deferred_tool_results=resume_results(
            paused.output, {interrupt.id: "approve"}, middleware=capability
        ),
    )
    assert done.output == "gone"
    assert deleted == ["/a"]
