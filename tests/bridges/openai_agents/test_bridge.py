"""The OpenAI Agents SDK bridge on real SDK runs, with a scripted SDK model and tracing off."""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import asyncio
import contextlib
import dataclasses
import gc
import json
import threading
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from agents import (
    Agent,
    Model,
    ModelProvider,
    ModelResponse,
    RunConfig,
    RunHooks,
    Runner,
    RunState,
    ToolGuardrailFunctionOutput,
    Usage,
    function_tool,
    set_tracing_disabled,
    tool_input_guardrail,
)
from agents.exceptions import AgentsException, UserError
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
)

from strands_middleware import ExecuteToolStage, InvokeModelStage, MiddlewareResult
from strands_middleware.bridges.openai_agents import (
    OpenAIAgentsMiddleware,
    UnsupportedStageError,
)
from strands_middleware.bridges.openai_agents import _model as _bridge_model
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import ConcurrencyLimit, ToolApproval
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.events import ModelStopReason, ToolUseDeltaEvent, TypedEvent
from strands_middleware.exceptions import InterruptResumeError
from strands_middleware.experimental import AgentStreamStage
from strands_middleware.stages._execute_tool import ExecuteToolContext
from strands_middleware.stages._invoke_model import InvokeModelContext
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

set_tracing_disabled(True)
CONFIG = RunConfig(tracing_disabled=True)

deleted: list[str] = []


@function_tool(failure_error_function=None)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    deleted.append(path)
    return f"deleted {path}"


@pytest.fixture(autouse=True)
def _clean() -> None:
    deleted.clear()


class RecordingModel(ScriptedOpenAIModel):
    """Keeps every ModelResponse it returns, to check the SDK gets the very same object."""

    def __init__(self, script: Any) -> None:
        super().__init__(script)
        self.responses: list[ModelResponse] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        response = await super().get_response(*args, **kwargs)
        self.responses.append(response)
        return response


async def run(agent: Agent[Any], prompt: Any, *, streamed: bool, **kwargs: Any) -> Any:
    config = kwargs.pop("run_config", CONFIG)
    if not streamed:
        return await Runner.run(agent, prompt, run_config=config, **kwargs)
    result = Runner.run_streamed(agent, prompt, run_config=config, **kwargs)
    async for _event in result.stream_events():
        pass
    return result


def seen_roles(log: list[Any]) -> Any:
    @InvokeModelStage.wrap
    async def watch(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        log.append([m["role"] for m in context.messages])
        async for event in next_fn(context):
            log.append(type(event).__name__)
            yield event

    return watch


async def delete_a(middleware: OpenAIAgentsMiddleware, *, streamed: bool) -> Any:
    """A run of ``middleware`` whose model asks to delete /a, then says "Done."."""
    deleted.clear()
    model = ScriptedOpenAIModel(
        [tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")]
    )
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    return await run(agent, "Delete /a", streamed=streamed)


@pytest.mark.parametrize("streamed", [False, True])
async def test_every_model_call_runs_the_chain_and_the_tool_runs_once(streamed: bool) -> None:
    log: list[Any] = []
    result = await delete_a(OpenAIAgentsMiddleware(seen_roles(log)), streamed=streamed)
    assert result.final_output == "Done."
    assert deleted == ["/a"]
    calls = [entry for entry in log if isinstance(entry, list)]
    assert calls == [["user"], ["user", "assistant", "user"]]
    assert log.count("ModelStopReason") == 2


async def test_a_run_cancelled_during_a_tool_calls_approval_check_closes_its_chain() -> None:
    """The SDK's approval check starts the tool call's chain; a run cancelled while a handler
    of that chain waits ends the chain too (its handler sees the cancellation), rather than
    leaving it waiting for a call that never comes."""
    waiting, ended = asyncio.Event(), asyncio.Event()

    @ExecuteToolStage.wrap
    async def slow(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        waiting.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            ended.set()
            raise
        async for event in next_fn(context):
            yield event

    deleted.clear()
    model = ScriptedOpenAIModel([tool_turn("delete_file", {"path": "/a"}, "t1")])
    agent = OpenAIAgentsMiddleware(slow).wrap(Agent("a", model=model, tools=[delete_file]))
    running = asyncio.ensure_future(run(agent, "Delete /a", streamed=False))
    await asyncio.wait_for(waiting.wait(), 5)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    await asyncio.wait_for(ended.wait(), 5)
    assert deleted == []


async def test_an_unchanged_response_reaches_the_sdk_as_its_own_object() -> None:
    middleware = OpenAIAgentsMiddleware(seen_roles([]))
    model = RecordingModel([text_turn("Hi.")])
    result = await run(middleware.wrap(Agent("a", model=model)), "Hello", streamed=False)
    assert result.raw_responses[0] is model.responses[0]


def editing_reply(edit: Any) -> Any:
    """A handler that passes the reply on after ``edit(result)`` changed it in place."""

    @InvokeModelStage.wrap
    async def edits(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                edit(event)
            yield event

    return edits


def _edit_text(result: ModelStopReason) -> None:
    result.message["content"][0]["text"] = "Edited."


def _add_block(result: ModelStopReason) -> None:
    result.message["content"].append({"text": " More."})


def _edit_usage(result: ModelStopReason) -> None:
    result.usage["outputTokens"] = 999


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("edit", "text", "output_tokens"),
    # A block added is an output item of its own: the SDK's final output is the last one.
    [(_edit_text, "Edited.", None), (_add_block, " More.", None), (_edit_usage, "Hi.", 999)],
)
async def test_a_reply_a_handler_changed_in_place_reaches_the_sdk_changed(
    streamed: bool, edit: Any, text: str, output_tokens: int | None
) -> None:
    """The SDK gets the model's own response only when the result equals what the handlers
    were shown: an edit in place to the message or the usage sends the result instead."""
    middleware = OpenAIAgentsMiddleware(editing_reply(edit))
    model = RecordingModel([text_turn("Hi.")])
    result = await run(middleware.wrap(Agent("a", model=model)), "Hello", streamed=streamed)
    assert result.final_output == text
    if not streamed:
        assert result.raw_responses[0] is not model.responses[0]
    if output_tokens is not None:
        assert result.raw_responses[0].usage.output_tokens == output_tokens


def _edit_tool_input(result: ModelStopReason) -> None:
    for block in result.message["content"]:
        if "toolUse" in block:
            block["toolUse"]["input"]["path"] = "/b"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_tool_input_a_handler_changed_in_place_is_the_call_the_sdk_runs(
    streamed: bool,
) -> None:
    middleware = OpenAIAgentsMiddleware(editing_reply(_edit_tool_input))
    result = await delete_a(middleware, streamed=streamed)
    assert result.final_output == "Done."
    assert deleted == ["/b"]


def asking_twice(keep_first: bool) -> Any:
    """A handler that asks the model twice and passes on the second reply, or (``keep_first``)
    the first when the second ask fails."""

    @InvokeModelStage.wrap
    async def twice(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        first: TypedEvent | None = None
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                first = event
        if not keep_first:
            async for event in next_fn(context):
                yield event
            return
        with contextlib.suppress(TypeError):
            async for _event in next_fn(context):
                pass
        assert first is not None
        yield first

    return twice


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_handler_that_asks_again_sends_the_sdk_the_second_reply(streamed: bool) -> None:
    middleware = OpenAIAgentsMiddleware(asking_twice(keep_first=False))
    model = ScriptedOpenAIModel([text_turn("first"), text_turn("second")])
    result = await run(middleware.wrap(Agent("a", model=model)), "Hello", streamed=streamed)
    assert result.final_output == "second"


class CannedModel(Model):
    """Answers each call with the next of ``outputs`` (SDK output items, as given), keeping
    every response it made."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.responses: list[ModelResponse] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        usage = Usage(requests=1, input_tokens=1, output_tokens=1, total_tokens=2)
        response = ModelResponse(output=self.outputs.pop(0), usage=usage, response_id="r")
        self.responses.append(response)
        return response

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this model answers whole only")


def _text_item(text: str) -> ResponseOutputMessage:
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        id="m", type="message", role="assistant", status="completed", content=[part]
    )


def _call_item(arguments: Any, call_id: Any = "c1") -> ResponseFunctionToolCall:
    # Built without validation, as a model of one's own may build it.
    return ResponseFunctionToolCall.model_construct(
        id="x",
        call_id=call_id,
        name="delete_file",
        arguments=arguments,
        type="function_call",
        status="completed",
    )


async def test_a_second_ask_failing_leaves_the_first_reply_to_reach_the_sdk() -> None:
    """The response the SDK gets back is the one the handlers' reply was made of: a second
    ask whose reply fails to translate (arguments that are not text) leaves no trace."""
    deleted.clear()
    middleware = OpenAIAgentsMiddleware(asking_twice(keep_first=True))
    model = CannedModel([[_text_item("first")], [_call_item(123)]])
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    result = await run(agent, "Hello", streamed=False)
    assert result.final_output == "first"
    assert result.raw_responses[0] is model.responses[0]
    assert deleted == []


class _CallId(str):
    pass


@pytest.mark.parametrize(
    ("arguments", "call_id"),
    [('{"path": NaN}', "c1"), ('{"path": "/a"}', _CallId("c1"))],
    ids=["a NaN in the arguments", "a str subclass as the call id"],
)
async def test_a_reply_handlers_passed_on_is_the_models_own_whatever_its_values(
    arguments: str, call_id: str
) -> None:
    """A value unequal to itself (NaN) or one ``marshal`` cannot copy (a str subclass) in the
    model's reply does not make a reply handlers passed on count as changed."""
    middleware = OpenAIAgentsMiddleware(seen_roles([]))
    model = CannedModel([[_call_item(arguments, call_id)], [_text_item("Done.")]])
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    result = await run(agent, "Delete", streamed=False)
    # The SDK's first response is the model's own object (what the SDK does with a NaN path,
    # it holds the call for approval, is the SDK's own business).
    assert result.raw_responses[0] is model.responses[0]


class CallRecordingModel(ScriptedOpenAIModel):
    """Keeps the input items of every call, and the name and description of each tool it is
    given, as the SDK's model receives them."""

    def __init__(self, script: Any) -> None:
        super().__init__(script)
        self.inputs: list[Any] = []
        self.tools: list[list[tuple[str, str]]] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append(kwargs["input"] if "input" in kwargs else args[1])
        tools = kwargs["tools"] if "tools" in kwargs else args[3]
        self.tools.append([(tool.name, tool.description) for tool in tools])
        return await super().get_response(*args, **kwargs)


def passing_model_handler(read: bool) -> Any:
    @InvokeModelStage.wrap
    async def passes(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if read:
            assert context.messages[0]["role"] == "user"
            assert [spec["name"] for spec in context.tool_specs] == ["delete_file"]
        async for event in next_fn(context):
            yield event

    return passes


@pytest.mark.parametrize("read", [False, True])
async def test_a_request_handlers_leave_as_it_was_reaches_the_model_as_the_sdks_items(
    read: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history is translated for handlers when one reads it (twice: theirs, and the copy
    theirs is compared with), and the tools' specs copied for them, never when none does."""
    translated: list[str] = []
    translate, copy_spec = _bridge_model.converse_messages, _bridge_model._spec_copy

    def counted(items: Any) -> Any:
        translated.append("messages")
        return translate(items)

    def counted_copy(spec: Any) -> Any:
        translated.append("spec")
        return copy_spec(spec)

    monkeypatch.setattr(_bridge_model, "converse_messages", counted)
    monkeypatch.setattr(_bridge_model, "_spec_copy", counted_copy)
    script = [tool_turn("delete_file", {"path": "/tmp/x"}), text_turn("Done.")]
    plain = CallRecordingModel(list(script))
    await run(Agent("a", model=plain, tools=[delete_file]), "Hello", streamed=False)
    bridged = CallRecordingModel(list(script))
    middleware = OpenAIAgentsMiddleware(passing_model_handler(read))
    agent = middleware.wrap(Agent("a", model=bridged, tools=[delete_file]))
    result = await run(agent, "Hello", streamed=False)
    assert result.final_output == "Done."
    assert bridged.inputs == plain.inputs
    # Two model calls: each translates the history twice and copies the one spec.
    assert sorted(translated) == (["messages"] * 4 + ["spec"] * 2 if read else [])


async def test_messages_put_in_place_unread_and_equal_send_the_sdks_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @InvokeModelStage.wrap
    async def same_prompt(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        again: Any = [{"role": "user", "content": [{"text": "Hello"}]}]
        async for event in next_fn(context.replace(messages=again)):
            yield event

    given: list[Any] = []
    asked = _bridge_model.MiddlewareModel.get_response

    async def noting(self: Any, *args: Any, **kwargs: Any) -> Any:
        given.append(kwargs["input"] if "input" in kwargs else args[1])
        return await asked(self, *args, **kwargs)

    monkeypatch.setattr(_bridge_model.MiddlewareModel, "get_response", noting)
    bridged = CallRecordingModel([text_turn("Hi.")])
    agent = OpenAIAgentsMiddleware(same_prompt).wrap(Agent("a", model=bridged))
    assert (await run(agent, "Hello", streamed=False)).final_output == "Hi."
    assert bridged.inputs[0] is given[0]  # the SDK's own list, not one translated back


async def test_specs_read_after_a_call_sent_a_replaced_list_are_the_tools_own() -> None:
    """A handler asks once without tools (a list put in place unread), then as it was: the
    specs read afterwards are the agent's tools once each, and an edit to one reaches the SDK."""
    seen: list[list[str]] = []

    @InvokeModelStage.wrap
    async def without_tools_first(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for _event in next_fn(context.replace(tool_specs=[])):
            pass
        async for event in next_fn(context):
            yield event

    @InvokeModelStage.wrap
    async def edits(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append([spec["name"] for spec in context.tool_specs])
        if context.tool_specs:
            context.tool_specs[0]["description"] = "Edited."
        async for event in next_fn(context):
            yield event

    model = CallRecordingModel([text_turn("First."), text_turn("Second.")])
    middleware = OpenAIAgentsMiddleware(without_tools_first, edits)
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    result = await run(agent, "Hello", streamed=False)
    assert result.final_output == "Second."
    assert seen == [[], ["delete_file"]]
    assert model.tools == [[], [("delete_file", "Edited.")]]


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_run_leaves_none_of_the_bridges_objects_to_the_cyclic_collector(
    streamed: bool,
) -> None:
    """A model call and a tool call are freed when they end (no reference cycle holds them):
    the cyclic collector would free them later, at a cost every run pays."""

    @ExecuteToolStage.wrap
    async def tool_passes(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    middleware = OpenAIAgentsMiddleware(passing_model_handler(read=True), tool_passes)
    script = [tool_turn("delete_file", {"path": "/tmp/x"}), text_turn("Done.")]
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[delete_file]))
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        await run(agent, "Hello", streamed=streamed)
        gc.collect()
        ours = {
            type(found).__qualname__
            for found in gc.garbage
            if type(found).__module__.startswith("strands_middleware")
        }
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert deleted == ["/tmp/x"]
    assert ours == set()


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_changed_result_reaches_the_sdk_with_its_usage(streamed: bool) -> None:
    def rewrite(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        usage = {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}
        message = {"role": "assistant", "content": [{"text": "Rewritten."}]}
        return result.replace(value=ModelStopReason("end_turn", message, usage, {"latencyMs": 1}))

    middleware = OpenAIAgentsMiddleware(InvokeModelStage.output(rewrite))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel([text_turn("Hi.")])))
    result = await run(agent, "Hello", streamed=streamed)
    assert result.final_output == "Rewritten."
    usage = result.context_wrapper.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (7, 3, 10)


class Provider(ModelProvider):
    def __init__(self, model: Model) -> None:
        self.model = model
        self.names: list[str | None] = []

    def get_model(self, model_name: str | None) -> Model:
        self.names.append(model_name)
        return self.model


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("name", ["gpt-test", None])
async def test_a_model_named_through_a_provider_runs_the_chain(
    name: str | None, streamed: bool
) -> None:
    log: list[Any] = []
    middleware = OpenAIAgentsMiddleware(seen_roles(log))
    provider = Provider(ScriptedOpenAIModel([text_turn("Hi.")]))
    agent = middleware.wrap(Agent("a", model=name))
    config = middleware.run_config(RunConfig(model_provider=provider, tracing_disabled=True))
    result = await run(agent, "Hello", streamed=streamed, run_config=config)
    assert result.final_output == "Hi."
    assert log[0] == ["user"]
    assert provider.names == [name]


async def test_run_config_model_object_runs_the_chain() -> None:
    log: list[Any] = []
    middleware = OpenAIAgentsMiddleware(seen_roles(log))
    config = middleware.run_config(
        RunConfig(model=ScriptedOpenAIModel([text_turn("Hi.")]), tracing_disabled=True)
    )
    result = await run(Agent("a"), "Hello", streamed=False, run_config=config)
    assert (result.final_output, log[0]) == ("Hi.", ["user"])


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_per_call_model_switch_reaches_the_sdk(streamed: bool) -> None:
    other = ScriptedOpenAIModel([text_turn("From the other model.")])

    def switch(context: InvokeModelContext) -> InvokeModelContext:
        return dataclasses.replace(context, model=other)

    middleware = OpenAIAgentsMiddleware(InvokeModelStage.input(switch))
    first = ScriptedOpenAIModel([text_turn("From the first model.")])
    result = await run(middleware.wrap(Agent("a", model=first)), "Hi", streamed=streamed)
    assert result.final_output == "From the other model."
    assert len(other.script.requests) == 1
    assert isinstance(first.script, ScriptedModel)
    assert not first.script.requests


@pytest.mark.parametrize("streamed", [False, True])
async def test_tool_input_changed_by_a_handler_reaches_the_tool(streamed: bool) -> None:
    def redirect(context: ExecuteToolContext) -> ExecuteToolContext:
        tool_use = context.tool_use
        return dataclasses.replace(context, tool_use={**tool_use, "input": {"path": "/safe"}})

    middleware = OpenAIAgentsMiddleware(ExecuteToolStage.input(redirect))
    model = ScriptedOpenAIModel([tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("ok")])
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    await run(agent, "Delete", streamed=streamed)
    assert deleted == ["/safe"]


def gate(asked: list[Any]) -> Any:
    @ExecuteToolStage.wrap
    async def approval(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        answer = context.interrupt("approve", reason={"path": context.tool_use["input"]["path"]})
        asked.append(answer.response)
        async for event in next_fn(context):
            yield event

    return approval


def paused_agent(asked: list[Any]) -> tuple[OpenAIAgentsMiddleware, Agent[Any], ScriptedModel]:
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")])
    middleware = OpenAIAgentsMiddleware(gate(asked))
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[delete_file]))
    return middleware, agent, script


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_interrupt_pauses_through_the_sdk_and_resumes_with_answers(
    streamed: bool,
) -> None:
    asked: list[Any] = []
    middleware, agent, script = paused_agent(asked)
    result = await run(agent, "Delete /a", streamed=streamed)
    assert result.final_output is None and len(result.interruptions) == 1
    [interrupt] = middleware.interrupts(result)
    assert interrupt.id.startswith("v1:middleware_execute_tool:t1:")
    assert (interrupt.name, interrupt.reason) == ("approve", {"path": "/a"})
    assert deleted == []
    state = result.to_state()
    middleware.resume(
        state, [{"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}]
    )
    done = await run(agent, state, streamed=streamed)
    assert (done.final_output, deleted, asked) == ("Done.", ["/a"], ["yes"])
    assert len(script.requests) == 2


async def test_a_saved_run_state_resumes_in_a_fresh_agent_without_the_model() -> None:
    middleware, agent, _ = paused_agent([])
    result = await run(agent, "Delete /a", streamed=False)
    [interrupt] = middleware.interrupts(result)
    saved = result.to_state().to_json()
    asked: list[Any] = []
    fresh_script = ScriptedModel([text_turn("Done.")])
    fresh = OpenAIAgentsMiddleware(gate(asked))
    fresh_agent = fresh.wrap(
        Agent("a", model=ScriptedOpenAIModel(fresh_script), tools=[delete_file])
    )
    state = await RunState.from_json(fresh_agent, json.loads(json.dumps(saved)))
    fresh.resume(state, {interrupt.id: "yes"})
    done = await run(fresh_agent, state, streamed=False)
    assert (done.final_output, deleted, asked) == ("Done.", ["/a"], ["yes"])
    assert len(fresh_script.requests) == 1


async def test_sdk_approve_answers_approve_and_reject_never_runs_the_tool() -> None:
    asked: list[Any] = []
    _, agent, _ = paused_agent(asked)
    result = await run(agent, "Delete /a", streamed=False)
    state = result.to_state()
    state.approve(result.interruptions[0])
    done = await run(agent, state, streamed=False)
    assert (done.final_output, deleted, asked) == ("Done.", ["/a"], ["approve"])

    deleted.clear()
    _, agent, script = paused_agent(asked)
    result = await run(agent, "Delete /a", streamed=False)
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message="no")
    done = await run(agent, state, streamed=False)
    assert (done.final_output, deleted) == ("Done.", [])
    assert script.requests[1].messages[-1]["content"][0]["toolResult"]["content"] == [
        {"text": "no"}
    ]


async def test_answers_for_another_run_are_refused_and_the_state_is_unchanged() -> None:
    middleware, agent, _ = paused_agent([])
    result = await run(agent, "Delete /a", streamed=False)
    state = result.to_state()
    before = state.to_json()
    wrong = "v1:middleware_execute_tool:other-call:5cf56bed-067e-5438-a1ef-dbfa3405e45d"
    with pytest.raises(InterruptResumeError, match="no paused call waits"):
        middleware.resume(state, {wrong: "yes"})
    with pytest.raises(InterruptResumeError, match="not answered"):
        middleware.resume(state, {})
    assert state.to_json() == before
    assert deleted == []


async def test_a_run_state_of_another_agent_is_refused() -> None:
    middleware, agent, _ = paused_agent([])
    result = await run(agent, "Delete /a", streamed=False)
    saved = result.to_state().to_json()
    before = json.dumps(saved, sort_keys=True)
    other = OpenAIAgentsMiddleware().wrap(Agent("b", model=ScriptedOpenAIModel([])))
    with pytest.raises(UserError, match="agent"):
        await RunState.from_json(other, saved)
    # The paused run is unchanged: its own agent still resumes it.
    assert json.dumps(saved, sort_keys=True) == before
    state = await RunState.from_json(agent, saved)
    middleware.resume(state, {i.id: "yes" for i in middleware.interrupts(state)})
    done = await run(agent, state, streamed=False)
    assert (done.final_output, deleted) == ("Done.", ["/a"])


def test_a_model_the_sdk_cannot_run_is_refused_at_wrap() -> None:
    # The SDK checks the model when the agent is built; one set later reaches wrap().
    agent = Agent("a")
    agent.model = object()  # type: ignore[assignment]
    with pytest.raises(TypeError, match=r"agents\.Model, a model name, or None"):
        OpenAIAgentsMiddleware().wrap(agent)


def test_agents_wrapped_from_one_model_and_tool_share_their_wrapped_copies() -> None:
    """Wrapping an agent per request costs its clone: the model's and tools' wrappers are made
    once per middleware (a tool changed in place since is wrapped again)."""
    model = ScriptedOpenAIModel([])
    middleware = OpenAIAgentsMiddleware()
    first = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    second = middleware.wrap(Agent("b", model=model, tools=[delete_file]))
    assert first is not second
    assert first.model is second.model
    assert first.tools[0] is second.tools[0]
    other = OpenAIAgentsMiddleware().wrap(Agent("c", model=model, tools=[delete_file]))
    assert other.model is not first.model
    assert other.tools[0] is not first.tools[0]

    changed = dataclasses.replace(delete_file)
    kept = middleware.wrap(Agent("d", tools=[changed])).tools[0]
    changed.description = "Delete a file, for good."
    again = middleware.wrap(Agent("e", tools=[changed])).tools[0]
    assert again is not kept
    assert again.description == "Delete a file, for good."


def test_agent_stream_handlers_are_refused_at_registration() -> None:
    @AgentStreamStage.wrap
    async def passthrough(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    with pytest.raises(UnsupportedStageError, match="AgentStreamStage is not supported"):
        OpenAIAgentsMiddleware(passthrough)


async def test_a_streamed_run_shows_handlers_text_and_tool_input_deltas() -> None:
    log: list[Any] = []
    middleware = OpenAIAgentsMiddleware(seen_roles(log))
    model = ScriptedOpenAIModel(
        [tool_turn("delete_file", {"path": "/a"}, "t1", text="On it."), text_turn("Done.")]
    )
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    result = await run(agent, "Delete /a", streamed=True)
    assert result.final_output == "Done."
    first_call = log[1 : log.index("ModelStopReason") + 1]
    assert "TextDeltaEvent" in first_call
    assert "ToolUseDeltaEvent" in first_call
    assert deleted == ["/a"]


async def test_a_streamed_model_failing_at_once_can_be_asked_again() -> None:
    script = ScriptedModel([ConnectionError("busy"), text_turn("Hi.")])

    @InvokeModelStage.wrap
    async def again(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        except ConnectionError:
            async for event in next_fn(context):
                yield event

    middleware = OpenAIAgentsMiddleware(again)
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script)))
    result = await run(agent, "Hello", streamed=True)
    assert result.final_output == "Hi."
    assert len(script.requests) == 2


@pytest.mark.parametrize("fresh_process", [False, True])
async def test_an_answer_the_gate_does_not_accept_is_refused_and_the_state_is_unchanged(
    fresh_process: bool,
) -> None:
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")])
    middleware = OpenAIAgentsMiddleware(ToolApproval())
    agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[delete_file]))
    result = await run(agent, "Delete /a", streamed=False)
    [interrupt] = middleware.interrupts(result)
    state = result.to_state()
    if fresh_process:  # a middleware that never saw the interrupt's name tells it by its id
        middleware = OpenAIAgentsMiddleware(ToolApproval())
        agent = middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[delete_file]))
        state = await RunState.from_json(agent, json.loads(json.dumps(state.to_json())))
    before = state.to_json()

    with pytest.raises(InterruptResumeError) as refused:
        middleware.resume(state, {interrupt.id: "yes"})
    message = str(refused.value)
    assert message.startswith(
        "an answer is not one the middleware that asked accepts, so nothing was resumed"
    )
    assert f"{interrupt.id}: ToolApproval 'approve-tool-call': the answer 'yes'" in message
    assert state.to_json() == before
    assert deleted == []

    middleware.resume(state, {interrupt.id: "approve"})
    done = await run(agent, state, streamed=False)
    assert (done.final_output, deleted) == ("Done.", ["/a"])


class OwnOutputModel(Model):
    """Answers with output items as a Responses model writes them (not from Converse)."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this model answers whole only")


def _said(text: str, *, refused: bool = False) -> ResponseOutputMessage:
    part: Any = (
        ResponseOutputRefusal(type="refusal", refusal=text)
        if refused
        else ResponseOutputText(type="output_text", text=text, annotations=[])
    )
    return ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed", content=[part]
    )


def reply_watch(seen: list[Any]) -> Any:
    """A handler noting each tool input delta's text and each reply's content."""

    @InvokeModelStage.wrap
    async def watch(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ToolUseDeltaEvent):
                seen.append(event["tool_use_delta"]["input"])
            elif isinstance(event, ModelStopReason):
                seen.append(event.message["content"])
            yield event

    return watch


async def test_a_whole_reply_streams_a_tool_input_as_the_model_wrote_it() -> None:
    seen: list[Any] = []
    watch = reply_watch(seen)
    written = '{"path":"/a"}'  # no spaces: not what json.dumps writes
    call = ResponseFunctionToolCall(
        id="fc_1", call_id="t1", type="function_call", name="delete_file", arguments=written
    )
    model = OwnOutputModel([[call], [_said("Done.")]])
    agent = OpenAIAgentsMiddleware(watch).wrap(Agent("a", model=model, tools=[delete_file]))
    result = await run(agent, "Delete /a", streamed=False)
    assert result.final_output == "Done."
    assert deleted == ["/a"]
    use = {"toolUse": {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/a"}}}
    assert seen == [written, [use], [{"text": "Done."}]]


async def test_a_refusal_reaches_handlers_as_the_replys_text() -> None:
    seen: list[Any] = []
    watch = reply_watch(seen)
    model = OwnOutputModel([[_said("I cannot help with that.", refused=True)]])
    agent = OpenAIAgentsMiddleware(watch).wrap(Agent("a", model=model))
    # Newer SDK releases end a run whose model refused (ModelRefusalError), once the
    # model call (and its chain) is over.
    with contextlib.suppress(AgentsException):
        await run(agent, "Delete everything", streamed=False)
    assert seen == [[{"text": "I cannot help with that."}]]


def closing_noted(closed: list[str], signals: list[threading.Event] | None = None) -> Any:
    """A tool Wrap handler passing the call on, noting each call's id in ``closed`` once its
    generator is closed (however the call ended), and its cancel signal in ``signals``."""

    @ExecuteToolStage.wrap
    async def noting(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if signals is not None:
            signals.append(context.cancel_signal)
        try:
            async for event in next_fn(context):
                yield event
        finally:
            closed.append(context.tool_use["toolUseId"])

    return noting


@tool_input_guardrail
def _refuse_paths(data: Any) -> ToolGuardrailFunctionOutput:
    return ToolGuardrailFunctionOutput.reject_content("Deleting is not allowed here.")


@function_tool(tool_input_guardrails=[_refuse_paths])
def guarded_delete(path: str) -> str:
    """Delete a file, unless a guardrail refuses."""
    deleted.append(path)
    return f"deleted {path}"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_call_a_tool_guardrail_rejects_ends_its_chain_and_lets_its_slot_go(
    streamed: bool,
) -> None:
    """The approval check starts a call's chain, which waits at its terminal for the SDK to
    invoke the tool. A call the SDK then never invokes (a tool input guardrail rejected it) has
    its chain ended once the task that checked it ends: its handlers are closed, so a slot one
    holds is let go, and the middleware forgets the call."""
    deleted.clear()
    closed: list[str] = []
    noting = closing_noted(closed)

    middleware = OpenAIAgentsMiddleware(ConcurrencyLimit(ExecuteToolStage, limit=1), noting)
    turns = [
        tool_turn("guarded_delete", {"path": "/a"}, "t1"),
        tool_turn("guarded_delete", {"path": "/b"}, "t2"),
        text_turn("Nothing was deleted."),
    ]
    model = ScriptedOpenAIModel(ScriptedModel(turns))
    agent = middleware.wrap(Agent("a", model=model, tools=[guarded_delete]))
    # With the first call's slot held for good, the second call's chain would wait forever.
    result = await asyncio.wait_for(run(agent, "Delete /a and /b", streamed=streamed), 10)
    assert result.final_output == "Nothing was deleted."
    assert deleted == []
    await asyncio.sleep(0)
    assert closed == ["t1", "t2"]
    assert middleware._tool_calls.pending == {}  # pyright: ignore[reportPrivateUsage]


class _FailingStart(RunHooks[Any]):
    """Run hooks whose tool start fails: the SDK never invokes the tool it approved."""

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        raise RuntimeError("no tools today")


async def test_a_call_left_uninvoked_by_a_failing_run_ends_its_chain() -> None:
    closed: list[str] = []
    signals: list[threading.Event] = []
    noting = closing_noted(closed, signals)

    middleware = OpenAIAgentsMiddleware(noting)
    model = ScriptedOpenAIModel(
        ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Done.")])
    )
    agent = middleware.wrap(Agent("a", model=model, tools=[delete_file]))
    with pytest.raises(UserError, match="no tools today"):
        await Runner.run(agent, "Delete /a", run_config=CONFIG, hooks=_FailingStart())
    await asyncio.sleep(0)
    assert closed == ["t1"]
    assert [signal.is_set() for signal in signals] == [True]  # its chain was cancelled
    assert middleware._tool_calls.pending == {}  # pyright: ignore[reportPrivateUsage]
