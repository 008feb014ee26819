"""The stage points a bridge calls: the context they build, the result check, what changed."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.exceptions import InterruptException, MissingResultError
from strands_middleware.host import ModelStagePoint, ToolStagePoint, invoke_model_terminal
from strands_middleware.host._changes import Handed, public_fields
from strands_middleware.testing import ScriptedModel, text_turn

USER: Any = [{"role": "user", "content": [{"text": "hi"}]}]


def model_point(
    registry: MiddlewareRegistry, model: Any = None, *, tracks_changes: bool = True
) -> ModelStagePoint:
    return ModelStagePoint(
        registry,
        agent="agent",
        messages=list(USER),
        system_prompt="sys",
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=model or ScriptedModel([text_turn("hello")]),
        tracks_changes=tracks_changes,
    )


async def test_the_model_point_runs_the_chain_and_returns_its_result() -> None:
    point = model_point(MiddlewareRegistry())
    result = await point.result(invoke_model_terminal)
    assert result.message == text_turn("hello")


@pytest.mark.parametrize("how", ["result", "run"])
async def test_a_model_chain_without_a_result_is_missing_result_error(how: str) -> None:
    @InvokeModelStage.wrap
    async def drop(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if not isinstance(event, ModelStopReason):
                yield event

    registry = MiddlewareRegistry()
    registry.use(drop)
    point = model_point(registry)
    with pytest.raises(MissingResultError, match="'invokeModel'"):
        if how == "result":
            await point.result(invoke_model_terminal)
        else:
            _ = [event async for event in point.run(invoke_model_terminal)]


def test_what_changed_names_replaced_fields_and_lists_edited_in_place() -> None:
    point = model_point(MiddlewareRegistry())
    context = point.context
    assert point.changed(context) == {}
    other = ScriptedModel([])
    choice: Any = {"any": {}}
    replaced = context.replace(model=other, tool_choice=choice)
    assert point.changed(replaced) == {"model": other, "tool_choice": choice}
    context.messages.append({"role": "user", "content": [{"text": "more"}]})
    assert set(point.changed(context)) == {"messages"}


def test_a_field_added_to_a_context_is_covered_without_a_change_here() -> None:
    @dataclasses.dataclass
    class Wider(InvokeModelContext):
        projected: int = 0
        _bookkeeping: int = 0

    assert public_fields(Wider)[-1] == "projected"
    assert "_bookkeeping" not in public_fields(Wider)
    base = model_point(MiddlewareRegistry()).context
    wider = Wider(**{name: getattr(base, name) for name in public_fields(InvokeModelContext)})
    handed = Handed(wider)
    assert handed.changed(dataclasses.replace(wider, _bookkeeping=1)) == {}
    assert handed.changed(dataclasses.replace(wider, projected=5)) == {"projected": 5}


async def test_the_tool_point_copies_the_call_and_reports_a_call_edited_in_place() -> None:
    call: Any = {"toolUseId": "t1", "name": "echo", "input": {"text": "a"}}
    point = ToolStagePoint(
        MiddlewareRegistry(),
        agent="agent",
        tool=None,
        tool_use=call,
        invocation_state={},
        cancel_signal=threading.Event(),
    )
    context = point.context
    assert context.tool_use == call and context.tool_use is not call
    assert point.changed(context) == {}
    context.tool_use["input"]["text"] = "b"
    assert call["input"]["text"] == "a"
    assert point.changed(context) == {"tool_use": context.tool_use}
    result = await point.result(_echo)
    assert result.tool_result["content"] == [{"text": "b"}]


async def test_a_tool_call_cancelled_with_its_task_sets_its_cancel_signal() -> None:
    # Hosts that cancel a run by cancelling its task (pydantic-ai, LangChain, the OpenAI Agents
    # SDK) run the call through `result`: the signal is the only way a thread learns of it.
    signal = threading.Event()
    started = asyncio.Event()
    seen_closing: list[bool] = []

    async def waits(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            seen_closing.append(signal.is_set())
        yield ToolResultEvent.error(context.tool_use["toolUseId"], "never")

    point = ToolStagePoint(
        MiddlewareRegistry(),
        agent="agent",
        tool=None,
        tool_use={"toolUseId": "t1", "name": "wait", "input": {}},
        invocation_state={},
        cancel_signal=signal,
    )
    call = asyncio.ensure_future(point.result(waits))
    await asyncio.wait_for(started.wait(), 5)
    assert not signal.is_set()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # Set as the cancellation leaves the stage: the terminal's cleanup ran before it.
    assert seen_closing == [False]
    assert signal.is_set()


async def test_a_tool_call_that_ends_leaves_its_cancel_signal_unset() -> None:
    signal = threading.Event()
    point = ToolStagePoint(
        MiddlewareRegistry(),
        agent="agent",
        tool=None,
        tool_use={"toolUseId": "t1", "name": "echo", "input": {"text": "a"}},
        invocation_state={},
        cancel_signal=signal,
    )
    await point.result(_echo)
    assert not signal.is_set()


async def _echo(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
    text = context.tool_use["input"]["text"]
    yield ToolResultEvent(
        {
            "toolUseId": context.tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": text}],
        }
    )


def test_a_tool_point_builds_a_hosts_own_context_class() -> None:
    @dataclasses.dataclass
    class HostContext(ExecuteToolContext):
        _host: Any = None

    point = ToolStagePoint(
        MiddlewareRegistry(),
        agent="agent",
        tool=None,
        tool_use={"toolUseId": "t1", "name": "echo", "input": {}},
        invocation_state={},
        cancel_signal=threading.Event(),
        context_type=HostContext,
        _host="host",
    )
    assert isinstance(point.context, HostContext)
    assert getattr(point.context, "_host") == "host"  # noqa: B009
    assert ExecuteToolStage.result_event is ToolResultEvent


SPEC: Any = {"name": "echo", "description": "Echo.", "inputSchema": {"json": {"type": "object"}}}


async def test_a_model_point_given_translations_makes_them_when_a_handler_reads_them() -> None:
    translated: list[str] = []

    def translate() -> Any:
        translated.append("messages")
        return list(USER)

    def translate_specs() -> Any:
        translated.append("tool_specs")
        return [dict(SPEC)]

    seen: list[Any] = []

    @InvokeModelStage.wrap
    async def reads(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append(context.projected_input_tokens)  # the estimate reads the request
        async for event in next_fn(context):
            yield event

    def point_of(registry: MiddlewareRegistry) -> ModelStagePoint:
        return ModelStagePoint(
            registry,
            agent="agent",
            messages=translate,
            system_prompt=None,
            tool_specs=translate_specs,
            tool_choice=None,
            invocation_state={},
            model=ScriptedModel([text_turn("hello")]),
            tracks_changes=False,
        )

    async def passes(
        context: InvokeModelContext,
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in invoke_model_terminal(context.replace(messages=[], tool_specs=[])):
            yield event

    quiet = point_of(MiddlewareRegistry())
    await quiet.result(passes)
    assert translated == []  # nothing read the request: no translation
    assert not quiet.seen(quiet.context, "messages")
    assert not quiet.seen(quiet.context, "tool_specs")

    registry = MiddlewareRegistry()
    registry.use(reads)
    point = point_of(registry)
    assert translated == []
    await point.result(invoke_model_terminal)
    assert sorted(translated) == ["messages", "tool_specs"]
    # "hi": one token; the spec's JSON, 85 characters: 43
    assert seen == [1 + 43]
    assert point.seen(point.context, "messages")
    assert point.seen(point.context, "tool_specs")
    assert point.context.messages == USER
    assert point.context.tool_specs == [SPEC]


@pytest.mark.parametrize("option", ["copy_request", "tracks_changes"])
def test_a_translation_made_on_read_cannot_be_copied_or_tracked(option: str) -> None:
    settings: dict[str, Any] = {"copy_request": False, "tracks_changes": False, option: True}
    with pytest.raises(ValueError, match=f"messages given as a function .* but {option}=True"):
        ModelStagePoint(
            MiddlewareRegistry(),
            agent="agent",
            messages=lambda: pytest.fail("read to be copied or tracked"),
            system_prompt=None,
            tool_specs=[],
            tool_choice=None,
            invocation_state={},
            model=ScriptedModel([]),
            **settings,
        )


def test_points_that_keep_no_record_refuse_to_say_what_changed() -> None:
    registry = MiddlewareRegistry()
    model = model_point(registry, tracks_changes=False)
    with pytest.raises(RuntimeError, match="tracks_changes=False"):
        model.changed(model.context)
    tool = ToolStagePoint(
        registry,
        agent="agent",
        tool=None,
        tool_use={"toolUseId": "t1", "name": "echo", "input": {}},
        invocation_state={},
        cancel_signal=threading.Event(),
        tracks_changes=False,
    )
    with pytest.raises(RuntimeError, match="tracks_changes=False"):
        tool.changed(tool.context)


async def test_a_tool_point_run_again_keeps_nothing_of_its_first_run() -> None:
    # The first run uses the point's own context; a later one a copy with a new interrupt
    # record: an approval asked on the second run pauses it, though the tool ran on the first.
    asking: list[bool] = []

    @ExecuteToolStage.wrap
    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if asking:
            context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    registry = MiddlewareRegistry()
    registry.use(gate)
    call: Any = {"toolUseId": "t1", "name": "echo", "input": {"text": "a"}}
    point = ToolStagePoint(
        registry,
        agent="agent",
        tool=None,
        tool_use=call,
        invocation_state={},
        cancel_signal=threading.Event(),
    )
    first = await point.result(_echo)
    assert first.tool_result["content"] == [{"text": "a"}]
    asking.append(True)
    with pytest.raises(InterruptException):
        await point.result(_echo)
