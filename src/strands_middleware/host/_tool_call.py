"""Running ExecuteToolStage at a host's tool-call point.

The executor side of the spec lives here, so that every host gets it right the same way: tool
exceptions become error results inside the terminal, unknown tools still run the chain, the tool
gets the executor's cancel signal (and a call cancelled with its run's task sets it: `result`,
`run_tool_call`), and interrupts (from middleware or from the tool) are
registered here and nowhere else, then surfaced as one `ToolInterruptEvent`.

Two rules of this library's own sit on top, in `run_tool_stage`, which every host runs (the
strands bridge included), so they hold the same everywhere:

* **Never silent.** A handler's own failure is not only a message to the model: the tool call
  ends with an error result the model reads (the run goes on, as it does when the tool itself
  fails, because one broken call should not end a production run) and the failure is logged at
  ERROR on the ``strands_middleware`` logger, with its traceback, naming the handler, the stage
  and the phase, so it reaches whoever runs the agent.
* **Fail closed.** A gate's interrupt that did not reach the executor never lets the tool run:
  one swallowed by a handler (a broad ``except Exception``) is found before the tool would run
  and again when the stage ends; one raised after the tool ran is refused, since a resume would
  run the tool again; two gates asking under one id are refused when the second asks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import aclosing
from functools import partial
from typing import Any, TypeVar, cast

from ..content import ToolUse
from ..engine._chain import OpenedChain
from ..engine._registry import MiddlewareRegistry, missing_result
from ..engine._stage import Middleware, MiddlewareWrapPhase
from ..events import ToolInterruptEvent, ToolResultEvent, TypedEvent
from ..exceptions import InterruptException, InterruptMisuseError, MissingResultError
from ..interrupts import Interrupt, InterruptLedger
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..tools import AgentTool
from ._changes import UNTRACKED, Handed, Untracked
from ._interrupt_state import InterruptState

__all__ = [
    "ToolStagePoint",
    "copy_containers",
    "copy_tool_use",
    "make_tool_terminal",
    "run_tool_call",
    "run_tool_stage",
    "tool_call_context",
]

_logger = logging.getLogger("strands_middleware")

ToolTerminal = Callable[[ExecuteToolContext], AsyncGenerator[TypedEvent, None]]

_C = TypeVar("_C", bound=ExecuteToolContext)
_V = TypeVar("_V")

_NO_INTERRUPTS: Mapping[str, Interrupt] = {}


def copy_tool_use(tool_use: ToolUse) -> ToolUse:
    """A copy of a tool call whose dicts and lists are new all the way down.

    Deep enough that a handler editing ``context.tool_use`` (its ``input`` included) cannot
    change the host's own dict, which is the model's request in the agent's history. Values that
    are not dicts, lists or tuples are shared rather than copied: a host may put objects in the
    input that cannot be copied (strands passes the agent itself to a directly called tool).
    """
    return copy_containers(tool_use)


def copy_containers(value: _V) -> _V:
    """``value`` with its dicts, lists and tuples new all the way down, other values shared.

    Cheaper than ``copy.deepcopy`` (no memo, no per-class dispatch), for Converse data a
    bridge hands out and keeps an untouched copy of.
    """
    return cast(_V, _copied(value))


def _copied(value: object) -> object:
    # A string, most of what Converse data holds, is shared without a call for it.
    if isinstance(value, dict):
        items = cast("dict[object, object]", value).items()
        return {key: item if item.__class__ is str else _copied(item) for key, item in items}
    if isinstance(value, list):
        return [
            item if item.__class__ is str else _copied(item) for item in cast("list[object]", value)
        ]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in cast("tuple[object, ...]", value))
    return value


def tool_call_context(
    agent: Any,
    *,
    tool: AgentTool | None,
    tool_use: ToolUse,
    invocation_state: dict[str, Any],
    cancel_signal: threading.Event,
    interrupts: Mapping[str, Interrupt],
) -> ExecuteToolContext:
    """Build the context of one tool call, with ``tool_use`` copied by `copy_tool_use`."""
    return _tool_context(
        ExecuteToolContext,
        {},
        agent=agent,
        tool=tool,
        tool_use=tool_use,
        invocation_state=invocation_state,
        cancel_signal=cancel_signal,
        interrupts=interrupts,
    )


def _tool_context(
    context_type: type[_C],
    extra: dict[str, Any],
    /,
    *,
    agent: Any,
    tool: AgentTool | None,
    tool_use: ToolUse,
    invocation_state: dict[str, Any],
    cancel_signal: threading.Event,
    interrupts: Mapping[str, Interrupt],
) -> _C:
    # The one place a tool call's context is made, on every host.
    return context_type(
        agent=agent,
        tool=tool,
        tool_use=copy_tool_use(tool_use),
        invocation_state=invocation_state,
        cancel_signal=cancel_signal,
        _interrupts=interrupts,
        **extra,
    )


class ToolStagePoint:
    """One tool call at a host's stage point: the handlers' context, the chain, what changed.

    A bridge makes one per tool call with the call translated to Converse (``tool_use`` is
    copied here, so handlers cannot edit the host's request), runs the stage around its own
    tool call with the rules every host shares (`run_tool_stage`), and sends the host what
    `changed` reports, translated back. A host whose contexts ask interrupts its own way passes
    its subclass of `ExecuteToolContext` as ``context_type`` and that class's own fields in
    ``extra``. A bridge that never asks `changed` (its terminal reads the context as it
    arrives) passes ``tracks_changes=False``, and the point keeps no record of what it handed
    out.

    Attributes:
        context: The context the handlers receive.
    """

    __slots__ = ("_given", "_handed", "_ran", "_registry", "context")

    def __init__(
        self,
        registry: MiddlewareRegistry,
        *,
        agent: Any,
        tool: AgentTool | None,
        tool_use: ToolUse,
        invocation_state: dict[str, Any],
        cancel_signal: threading.Event,
        interrupts: Mapping[str, Interrupt] = _NO_INTERRUPTS,
        context_type: type[ExecuteToolContext] = ExecuteToolContext,
        tracks_changes: bool = True,
        **extra: Any,
    ) -> None:
        self._registry = registry
        self._given = tool_use
        self.context = _tool_context(
            context_type,
            extra,
            agent=agent,
            tool=tool,
            tool_use=tool_use,
            invocation_state=invocation_state,
            cancel_signal=cancel_signal,
            interrupts=interrupts,
        )
        self._handed: Handed | Untracked = Handed(self.context) if tracks_changes else UNTRACKED
        # The context's interrupt ledger is new until the first run (made here, handed to no
        # one): that run uses it, where `run_tool_stage` copies the context to give it one.
        self._ran = False

    def changed(self, ours: ExecuteToolContext) -> dict[str, Any]:
        """The fields of ``ours`` (what reached the terminal) the handlers changed, by name.

        ``tool_use`` counts as changed when it differs in value from the host's call (handlers
        get a copy they may edit in place, so identity says nothing); any other field when it
        holds another object. ``cancel_signal`` is the executor's: a host keeps its own whatever
        this says.

        Raises:
            RuntimeError: The point was made with ``tracks_changes=False``.
        """
        changes = self._handed.changed(ours)
        if ours.tool_use == self._given:
            changes.pop("tool_use", None)
        else:
            changes["tool_use"] = ours.tool_use
        return changes

    def run(self, terminal: ToolTerminal) -> AsyncGenerator[TypedEvent, None]:
        """Run the stage around ``terminal`` (see `run_tool_stage`): the result comes last.

        Raises:
            InterruptException: the call paused; the host registers the interrupt.
        """
        return self._rules(self.context, terminal)

    def open(self, terminal: ToolTerminal) -> OpenedChain[TypedEvent]:
        """`run` as a block that closes the stream on leaving (``async with ... as stream``)."""
        return OpenedChain(
            ExecuteToolStage, None, self.context, partial(self._rules, terminal=terminal)
        )

    def _rules(
        self, context: ExecuteToolContext, terminal: ToolTerminal
    ) -> AsyncGenerator[TypedEvent, None]:
        if self._ran:
            return run_tool_stage(self._registry, context, terminal)
        self._ran = True
        return _run_stage(self._registry, context, terminal)

    async def result(self, terminal: ToolTerminal) -> ToolResultEvent:
        """Run the stage to its end and return its result.

        A host that cancels a run by cancelling its task cancels the call with it: the call's
        cancel signal is set as the cancellation leaves the stage (its handlers closed), so a
        handler's work, or a tool of this library's, still running in a thread learns of it, as
        ``cancel_signal`` promises.

        Raises:
            InterruptException: the call paused; the host pauses the run its own way.
            MissingResultError: a tool of the host paused the call with a `ToolInterruptEvent`
                rather than an exception, which a host using this method cannot register.
            asyncio.CancelledError: the call was cancelled (its signal is set).
        """
        result: ToolResultEvent | None = None
        try:
            async with aclosing(self.run(terminal)) as events:
                async for event in events:
                    if isinstance(event, ToolResultEvent):
                        result = event
        except asyncio.CancelledError:
            self.context.cancel_signal.set()
            raise
        if result is None:
            raise missing_result(ExecuteToolStage)
        return result


def make_tool_terminal(
    cancel_signal: threading.Event,
) -> Callable[[ExecuteToolContext], AsyncGenerator[TypedEvent, None]]:
    """The tool call itself, bound to the executor's own cancel signal.

    The signal is captured here rather than read from the context, so a handler that replaces
    ``context.cancel_signal`` cannot cut the tool off from the agent's cancellation.
    """

    async def terminal(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        tool_use = context.tool_use
        tool = context.tool
        if tool is None:
            yield ToolResultEvent.error(tool_use["toolUseId"], f"Unknown tool: {tool_use['name']}")
            return
        produced = False
        stream: Any = None
        try:
            stream = tool.stream(tool_use, context.invocation_state, cancel_signal=cancel_signal)
            async for event in stream:
                if isinstance(event, ToolResultEvent):
                    produced = True
                yield event
        except InterruptException:
            raise
        except Exception as exc:  # the model should read a failure, not crash the loop
            yield ToolResultEvent.from_exception(tool_use["toolUseId"], exc)
            return
        finally:
            # A tool's stream is closed with the call, even when the call is abandoned early.
            aclose: Any = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if not produced:
            problem = RuntimeError(
                f"tool {tool_use['name']!r} ended without yielding a ToolResultEvent: a tool's "
                "stream must end with the ToolResultEvent that answers the call"
            )
            yield ToolResultEvent.from_exception(tool_use["toolUseId"], problem)

    return terminal


def run_tool_stage(
    registry: MiddlewareRegistry, context: ExecuteToolContext, terminal: ToolTerminal
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage around ``terminal`` with the rules every host shares (module docstring).

    The stream ends with the result (the last `ToolResultEvent`; it is held until the stage has
    ended and been checked) or is halted by a tool's `ToolInterruptEvent`. A handler's failure,
    a misused interrupt or a chain without a result ends it with an error result instead, logged
    at ERROR. The host's terminal runs only if no interrupt was swallowed before it. The run
    keeps its interrupts' record on a copy of ``context`` of its own, so a host may run one
    context more than once.

    Raises:
        InterruptException: middleware (or the tool) paused the call; the host registers it.
    """
    return _run_stage(registry, dataclasses.replace(context, _ledger=InterruptLedger()), terminal)


async def _run_stage(
    registry: MiddlewareRegistry, context: ExecuteToolContext, terminal: ToolTerminal
) -> AsyncGenerator[TypedEvent, None]:
    """`run_tool_stage` on a context whose interrupt ledger no run has used yet."""
    ledger = context._ledger  # pyright: ignore[reportPrivateUsage]

    def guarded(ours: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        swallowed = _swallowed(ledger, ours)
        if swallowed is not None:
            raise swallowed
        ledger.tool_started = True
        return terminal(ours)

    failure: Exception | None = None
    result: ToolResultEvent | None = None
    try:
        async with registry.open(ExecuteToolStage, context, guarded) as events:
            async for event in events:
                if isinstance(event, ToolResultEvent):
                    result = event
                    continue
                yield event
                if isinstance(event, ToolInterruptEvent):
                    return  # the tool paused: the call has no result until it is resumed
        failure = _swallowed(ledger, context)
        if failure is None and result is None:
            failure = missing_result(ExecuteToolStage)
    except InterruptException as paused:
        failure = _misplaced(ledger, paused, context)
        if failure is None:
            raise
        failure.__cause__ = paused
    except Exception as error:  # a handler failed: see "Never silent" above
        failure = error
    if failure is None:
        if result is not None:
            yield result
        return
    _log_failure(registry, context, failure)
    yield ToolResultEvent.from_exception(context.tool_use["toolUseId"], failure)


def _call(context: ExecuteToolContext) -> str:
    return f"tool call {context.tool_use['toolUseId']!r} ({context.tool_use['name']})"


def _swallowed(ledger: InterruptLedger, context: ExecuteToolContext) -> InterruptMisuseError | None:
    """An error for interrupts raised that never reached the executor, or None."""
    unsettled = ledger.unsettled
    if not unsettled:
        return None
    names = ", ".join(f"{i.name!r} (id {i.id})" for i in unsettled)
    if any(ledger.raised_after_tool(i.id) for i in unsettled):
        consequence = "it was raised after the tool ran, and the run was not paused"
    elif ledger.tool_started:
        consequence = "the run was not paused"
    else:
        consequence = "the run was not paused and the tool was not run"
    return InterruptMisuseError(
        f"interrupt {names} raised by ExecuteToolStage middleware on {_call(context)} never "
        f"reached the executor, so {consequence}: a handler caught the InterruptException, most "
        "likely with a broad `except Exception` around context.interrupt() or next_fn. Let it "
        "through: put `except CONTROL_FLOW_EXCEPTIONS: raise` (strands_middleware.exceptions) "
        "before `except Exception`.",
        unsettled,
    )


def _misplaced(
    ledger: InterruptLedger, paused: InterruptException, context: ExecuteToolContext
) -> InterruptMisuseError | None:
    """None if the interrupt may pause the call (the host registers it), else why not."""
    interrupt = paused.interrupt
    late = ledger.raised_after_tool(interrupt.id)
    ledger.settle(interrupt.id)
    if late:
        return InterruptMisuseError(
            f"ExecuteToolStage middleware raised interrupt {interrupt.name!r} (id "
            f"{interrupt.id}) on {_call(context)} after the tool ran; pausing now would run the "
            "tool again on resume, so the interrupt is refused. Interrupt before calling next_fn "
            "(an approval gate asks first, then runs the tool).",
            [interrupt],
        )
    return _swallowed(ledger, context)


def _log_failure(
    registry: MiddlewareRegistry, context: ExecuteToolContext, failure: Exception
) -> None:
    culprit = registry.failing_handler(ExecuteToolStage, failure)
    if culprit is not None:
        where = f"middleware handler {culprit.name} ({culprit.phase.where})"
    else:
        where = "ExecuteToolStage middleware"
        if isinstance(failure, MissingResultError):
            where = f"{where} (Wrap handlers, outermost first: {', '.join(_wrap_names(registry))})"
    _logger.error(
        "%s failed on %s; the call ends with an error result the model reads: %s: %s",
        where,
        _call(context),
        type(failure).__name__,
        failure,
        exc_info=failure,
    )


def _wrap_names(registry: MiddlewareRegistry) -> list[str]:
    return [
        Middleware(phase, handler).name
        for phase, handler in registry.handlers(ExecuteToolStage)
        if isinstance(phase, MiddlewareWrapPhase)
    ]


async def run_tool_call(
    registry: MiddlewareRegistry,
    context: ExecuteToolContext,
    interrupt_state: InterruptState,
    cancel_signal: threading.Event,
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage and yield its events, registering any interrupt it raises.

    Ends with either the result (the last `ToolResultEvent` yielded) or exactly one
    `ToolInterruptEvent` carrying the registered interrupts; nothing follows an interrupt. A
    failing handler, a chain without a result and a misused interrupt end it with an error
    result, logged at ERROR (see `run_tool_stage`). A call cancelled (its run's task was) sets
    ``cancel_signal`` as the cancellation leaves the stage, as `ToolStagePoint.result` does.
    """
    stream = run_tool_stage(registry, context, make_tool_terminal(cancel_signal))
    try:
        async with aclosing(stream) as events:
            async for event in events:
                if isinstance(event, ToolInterruptEvent):
                    registered = [interrupt_state.register(i) for i in event.interrupts]
                    yield ToolInterruptEvent(event.tool_use, registered)
                    return
                yield event
    except InterruptException as exc:
        yield ToolInterruptEvent(context.tool_use, [interrupt_state.register(exc.interrupt)])
    except asyncio.CancelledError:
        cancel_signal.set()
        raise
