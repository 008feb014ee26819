"""Tool calls: short circuits, rewrites, retries, unknown tools and tools that raise."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator
from typing import Any

from ...content import ToolResult, ToolUse
from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...events import ToolResultEvent, TypedEvent
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...testing import text_turn, tool_turn
from ...tools import tool
from .._clause import Trial, clause, expect
from .._harness import Capability
from . import _sources as cite
from ._probes import last_tool_results, texts, tool_results, tracked

__all__ = [
    "cancel_sets_the_signal_tool_handlers_hold",
    "raising_tool_becomes_an_error_result",
    "tool_context_describes_the_call",
    "tool_handlers_can_run_the_tool_themselves",
    "tool_input_rewrite_reaches_the_tool",
    "tool_next_fn_twice_runs_the_tool_again",
    "tool_output_rewrite_reaches_the_model",
    "tool_switch_to_a_tool_of_this_library",
    "tool_use_edits_do_not_reach_the_history",
    "unknown_tool_can_be_answered_by_middleware",
    "unknown_tool_runs_the_chain_with_tool_none",
    "wrap_short_circuit_skips_the_tool",
]

_ADD = tool_turn("add", {"a": 1, "b": 2}, "t1")

# How long a cancelled call may take to unwind after its run ended, in seconds.
_SIGNAL_WAIT = 2.0


def _results_sent(built_requests: list[Any]) -> list[ToolResult]:
    return last_tool_results(built_requests[1]) if len(built_requests) > 1 else []


@clause(cite.RESULT_ENCODING, cite.HANDLER_SHAPES)
async def wrap_short_circuit_skips_the_tool(trial: Trial) -> None:
    """A Wrap handler that yields its own ToolResultEvent without calling next_fn answers the
    call: the tool does not run and the model reads the handler's result."""

    async def cached(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "success",
                "content": [{"text": "3 (cached)"}],
            }
        )

    built = trial.build(
        [_ADD, text_turn("3")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.wrap(cached)],
    )
    await built.agent.run("Add 1 and 2")
    expect(not trial.tools.calls, f"the tool ran: {trial.tools.calls}")
    sent = _results_sent(built.script.requests)
    expect(
        [texts(result) for result in sent] == ["3 (cached)"],
        f"the model read tool results {sent}",
    )


@clause(cite.CONTEXT_TRANSFORMATION, cite.BUILT_IN_STAGES)
async def tool_input_rewrite_reaches_the_tool(trial: Trial) -> None:
    """A tool_use an Input handler replaces is what the tool runs with; the history keeps the
    model's own request."""

    def bump(context: ExecuteToolContext) -> ExecuteToolContext:
        tool_use: ToolUse = {**context.tool_use, "input": {"a": 40, "b": 2}}
        return context.replace(tool_use=tool_use)

    built = trial.build(
        [_ADD, text_turn("42")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.input(bump)],
    )
    await built.agent.run("Add 1 and 2")
    ran = trial.tools.called("add")
    expect(ran == [{"a": 40, "b": 2}], f"the tool ran with {ran}")
    sent = _results_sent(built.script.requests)
    expect([texts(r) for r in sent] == ["42"], f"the model read tool results {sent}")
    requested = [
        block["toolUse"]["input"]
        for message in built.agent.messages
        for block in message["content"]
        if "toolUse" in block
    ]
    expect(requested == [{"a": 1, "b": 2}], f"the history's tool request became {requested}")


@clause(cite.RESULT_ENCODING, cite.HANDLER_SHAPES)
async def tool_output_rewrite_reaches_the_model(trial: Trial) -> None:
    """A tool call's Output handler that replaces the result changes what the model reads."""

    def annotate(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        tool_result = result.value.tool_result
        rewritten: ToolResult = {**tool_result, "content": [{"text": "three"}]}
        return result.replace(value=ToolResultEvent(rewritten))

    built = trial.build(
        [_ADD, text_turn("3")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.output(annotate)],
    )
    await built.agent.run("Add 1 and 2")
    sent = _results_sent(built.script.requests)
    expect([texts(r) for r in sent] == ["three"], f"the model read tool results {sent}")
    kept = [texts(r) for r in tool_results(built.agent.messages)]
    expect(kept == ["three"], f"the history keeps tool results {kept}")


@clause(cite.CLEANUP_RULE, cite.CLEANUP)
async def tool_next_fn_twice_runs_the_tool_again(trial: Trial) -> None:
    """A tool-stage Wrap handler that calls next_fn twice gets a fresh inner chain each time: the
    inner handlers and the tool run twice, and the last result is the call's."""
    log: list[str] = []

    async def twice(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for _event in next_fn(context):
            pass
        second: ToolUse = {**context.tool_use, "input": {"a": 2, "b": 2}}
        async for event in next_fn(context.replace(tool_use=second)):
            yield event

    built = trial.build(
        [_ADD, text_turn("4")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.wrap(twice), tracked(ExecuteToolStage, "inner", log)],
    )
    await built.agent.run("Add 1 and 2")
    ran = trial.tools.called("add")
    expect(ran == [{"a": 1, "b": 2}, {"a": 2, "b": 2}], f"the tool ran with {ran}")
    opened, closed = log.count("open inner"), log.count("close inner")
    expect(opened == 2 and closed == 2, f"the inner handler opened {opened}x, closed {closed}x")
    sent = _results_sent(built.script.requests)
    expect([texts(r) for r in sent] == ["4"], f"the model read tool results {sent}")


@clause(cite.UNKNOWN_TOOLS)
async def unknown_tool_runs_the_chain_with_tool_none(trial: Trial) -> None:
    """A call of a tool the agent does not have still runs the chain, with context.tool None, and
    the model reads an error result naming the tool."""
    seen: list[object] = []

    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.tool)
        return context

    built = trial.build(
        [tool_turn("teleport", {}, "t1"), text_turn("Sorry.")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.input(watch)],
    )
    await built.agent.run("Teleport me")
    expect(seen == [None], f"the handlers saw tool {seen!r}, expected [None]")
    sent = _results_sent(built.script.requests)
    expect(
        len(sent) == 1 and sent[0]["status"] == "error" and "teleport" in texts(sent[0]),
        f"the model read tool results {sent}",
    )


@clause(cite.UNKNOWN_TOOLS)
async def unknown_tool_can_be_answered_by_middleware(trial: Trial) -> None:
    """A Wrap handler can answer a call of a tool the agent does not have; the model reads its
    answer."""

    async def mock(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if context.tool is None:
            yield ToolResultEvent(
                {
                    "toolUseId": context.tool_use["toolUseId"],
                    "status": "success",
                    "content": [{"text": "teleported"}],
                }
            )
            return
        async for event in next_fn(context):
            yield event

    built = trial.build(
        [tool_turn("teleport", {}, "t1"), text_turn("Done.")],
        middleware=[ExecuteToolStage.wrap(mock)],
    )
    await built.agent.run("Teleport me")
    sent = _results_sent(built.script.requests)
    expect(
        len(sent) == 1 and sent[0]["status"] == "success" and texts(sent[0]) == "teleported",
        f"the model read tool results {sent}",
    )


@clause(cite.TOOL_EXCEPTIONS, cite.BUILT_IN_STAGES)
async def raising_tool_becomes_an_error_result(trial: Trial) -> None:
    """A tool that raises becomes an error ToolResultEvent that handlers observe (keeping the
    exception) and the model reads; the run goes on."""
    seen: list[ToolResultEvent] = []

    def watch(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        seen.append(result.value)
        return result

    built = trial.build(
        [tool_turn("fail", {"reason": "disk on fire"}, "t1"), text_turn("Oh no.")],
        tools=[trial.tools.fail],
        middleware=[ExecuteToolStage.output(watch)],
    )
    report = await built.agent.run("Try it")
    expect(report.text == "Oh no.", f"the run ended with {report.text!r}")
    expect(len(seen) == 1, f"the Output handler saw {len(seen)} results")
    result = seen[0]
    expect(
        result.tool_result["status"] == "error" and "disk on fire" in texts(result.tool_result),
        f"the handler saw {result.tool_result}",
    )
    expect(
        isinstance(result.exception, ValueError),
        f"the result's exception is {result.exception!r}, not the tool's ValueError",
    )
    sent = _results_sent(built.script.requests)
    expect(len(sent) == 1 and sent[0]["status"] == "error", f"the model read tool results {sent}")


@clause(cite.BUILT_IN_STAGES, cite.PER_STAGE_RESULTS)
async def tool_context_describes_the_call(trial: Trial) -> None:
    """A tool call's context names the tool that will run and the model's request (id, name,
    input), and carries the executor's cancel signal."""
    seen: list[ExecuteToolContext] = []

    def watch(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context)
        return context

    built = trial.build(
        [_ADD, text_turn("3")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.input(watch)],
    )
    await built.agent.run("Add 1 and 2")
    expect(len(seen) == 1, f"the Input handler ran {len(seen)}x")
    context = seen[0]
    name = getattr(context.tool, "tool_name", None)
    expect(name == "add", f"context.tool is {context.tool!r}, named {name!r}")
    use = context.tool_use
    expect(
        (use.get("toolUseId"), use.get("name"), use.get("input"))
        == ("t1", "add", {"a": 1, "b": 2}),
        f"context.tool_use is {use}",
    )
    signal = context.cancel_signal
    expect(
        callable(getattr(signal, "is_set", None)) and not signal.is_set(),
        f"context.cancel_signal is {signal!r}, not an unset event",
    )


@clause(cite.DEFENSIVE_COPIES, cite.FAIL_CLOSED)
async def tool_use_edits_do_not_reach_the_history(trial: Trial) -> None:
    """A handler editing context.tool_use in place (its input included) cannot change the
    model's request in the agent's history."""

    def vandal(context: ExecuteToolContext) -> ExecuteToolContext:
        context.tool_use["input"]["a"] = 100
        context.tool_use["name"] = "renamed"
        return context

    built = trial.build(
        [_ADD, text_turn("3")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.input(vandal)],
    )
    await built.agent.run("Add 1 and 2")
    requested = [
        dict(block["toolUse"])
        for message in built.agent.messages
        for block in message["content"]
        if "toolUse" in block
    ]
    expect(
        [(use["name"], use["input"]) for use in requested] == [("add", {"a": 1, "b": 2})],
        f"the history's tool request became {requested}",
    )


async def _until_the_tool_waits(
    trial: Trial, script: list[Any], tools: list[Any], prompt: str
) -> tuple[Any, asyncio.Future[Any], list[threading.Event]]:
    """Start a run whose tool handlers note each call's cancel signal, and return once its
    ``wait_for_cancel`` tool waits (or the run ended first): the built agent, the run, the
    signals noted."""
    signals: list[threading.Event] = []

    def note(context: ExecuteToolContext) -> ExecuteToolContext:
        signals.append(context.cancel_signal)
        return context

    built = trial.build(script, tools=tools, middleware=[ExecuteToolStage.input(note)])
    run = asyncio.ensure_future(built.agent.run(prompt))
    waiting = asyncio.ensure_future(trial.tools.waiting.wait())
    await asyncio.wait({run, waiting}, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    return built, run, signals


async def _cancelling_the_task_sets_the_signal(trial: Trial) -> None:
    """On a host without `HostAgent.cancel`, a run is cancelled by cancelling its task: that
    sets the cancel signal the running call's handlers hold, once the cancellation has left the
    call (a handler's work, or a tool of this library's, still running in a thread learns of it
    there)."""
    _, run, signals = await _until_the_tool_waits(
        trial,
        [tool_turn("wait_for_cancel", {}, "t1"), text_turn("Not cancelled.")],
        [trial.tools.wait_for_cancel],
        "Wait",
    )
    try:
        expect(trial.tools.waiting.is_set(), f"the run ended before its tool waited: {run!r}")
        expect(len(signals) == 1, f"the tool handlers ran {len(signals)}x, expected 1")
        expect(not signals[0].is_set(), "the call's cancel signal was set before any cancel")
    finally:
        run.cancel()
        with contextlib.suppress(BaseException):
            await run
    expect(run.cancelled(), f"the cancelled run ended otherwise: {run!r}")
    # A host may end the run before the call it cancelled has unwound (the OpenAI Agents SDK
    # leaves its tool tasks cancelling after the run): the signal is set once the call has,
    # which the loop goes on doing while a thread waits for it.
    set_in_time = await asyncio.to_thread(signals[0].wait, _SIGNAL_WAIT)
    expect(set_in_time, "cancelling the run's task left its call's cancel signal unset")


@clause(
    cite.BUILT_IN_STAGES,
    cite.HOST_PROMISES,
    needs=Capability.CANCEL,
    otherwise=_cancelling_the_task_sets_the_signal,
)
async def cancel_sets_the_signal_tool_handlers_hold(trial: Trial) -> None:
    """Tool handlers hold the run's own cancel signal: the same one for every call of the run,
    and `HostAgent.cancel()` sets it while a tool is running (without it, cancelling the run's
    task sets the signal of the call it cancels)."""
    built, run, signals = await _until_the_tool_waits(
        trial,
        [_ADD, tool_turn("wait_for_cancel", {}, "t2"), text_turn("Not cancelled.")],
        [trial.tools.add, trial.tools.wait_for_cancel],
        "Add, then wait",
    )
    try:
        expect(trial.tools.waiting.is_set(), f"the run ended before its tool waited: {run!r}")
        built.agent.cancel()
        expect(len(signals) == 2, f"the tool handlers ran {len(signals)}x, expected 2")
        expect(signals[1].is_set(), "cancel() did not set the signal the running call holds")
        expect(
            signals[0] is signals[1],
            "each tool call was handed a cancel signal of its own, not the run's",
        )
        # The run stops at its next step; a host that leaves the waiting tool alone is
        # cancelled below (cleanup clauses check what happens then).
        await asyncio.wait({run}, timeout=2.0)
    finally:
        run.cancel()
        with contextlib.suppress(BaseException):
            await run


def _multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b


@clause(cite.CONTEXT_TRANSFORMATION, cite.CONVERSE_ONLY)
async def tool_switch_to_a_tool_of_this_library(trial: Trial) -> None:
    """An Input handler can point a tool call at a tool of this library (``@tool``): that tool
    answers the call, and the model reads its result."""

    def switch(context: ExecuteToolContext) -> ExecuteToolContext:
        return context.replace(tool=tool(_multiply))

    built = trial.build(
        [tool_turn("add", {"a": 2, "b": 3}, "t1"), text_turn("ok")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.input(switch)],
    )
    await built.agent.run("Go")
    expect(not trial.tools.calls, f"the agent's own tool ran: {trial.tools.calls}")
    sent = _results_sent(built.script.requests)
    expect([texts(r) for r in sent] == ["6"], f"the model read {sent}")


@clause(cite.CONVERSE_ONLY, cite.HANDLER_SHAPES)
async def tool_handlers_can_run_the_tool_themselves(trial: Trial) -> None:
    """``context.tool`` has this library's tool shape: a handler reads its name and Converse
    spec and runs it with ``stream(tool_use, invocation_state)``, its events this library's."""
    specs: list[tuple[str, list[str]]] = []
    foreign: list[str] = []

    async def run_it_myself(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        expect(context.tool is not None, "the handler was given no tool")
        assert context.tool is not None
        specs.append((context.tool.tool_name, sorted(context.tool.tool_spec)))
        async for event in context.tool.stream(context.tool_use, context.invocation_state):
            if not isinstance(event, TypedEvent):
                foreign.append(type(event).__name__)
            yield event

    built = trial.build(
        [tool_turn("add", {"a": 2, "b": 3}, "t1"), text_turn("ok")],
        tools=[trial.tools.add],
        middleware=[ExecuteToolStage.wrap(run_it_myself)],
    )
    await built.agent.run("Go")
    expect(specs == [("add", ["description", "inputSchema", "name"])], f"the tool was {specs}")
    expect(not foreign, f"the tool's stream gave events of no class of this library: {foreign}")
    sent = _results_sent(built.script.requests)
    expect([texts(r) for r in sent] == ["5"], f"the model read {sent}")
