"""`ExecuteToolStage`: one tool call, from the model's ``toolUse`` to its `ToolResultEvent`."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from typing_extensions import TypedDict, Unpack

from ..content import ToolUse
from ..engine._result import MiddlewareResult
from ..engine._stage import MiddlewareStage
from ..events import ToolResultEvent, TypedEvent
from ..interrupts import (
    Interrupt,
    InterruptLedger,
    MiddlewareInterruptResult,
    execute_tool_interrupt_id,
)
from ..tools import AgentTool

__all__ = ["ExecuteToolChanges", "ExecuteToolContext", "ExecuteToolResult", "ExecuteToolStage"]

_NO_INTERRUPTS: Mapping[str, Interrupt] = MappingProxyType({})


class ExecuteToolChanges(TypedDict, total=False):
    """The fields ``ExecuteToolContext.replace`` accepts."""

    tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any]
    cancel_signal: threading.Event


@dataclass
class ExecuteToolContext:
    """What ExecuteToolStage handlers receive: the tool call about to run.

    ``tool_use`` is the host's copy of the model's request: its dicts and lists are new, so an
    edit cannot reach the agent's history, while other values in ``input`` are shared (they may
    be objects that cannot be copied). An in-place edit does reach this call's tool; building a
    new ``tool_use`` and ``replace()``-ing it in says so more plainly. ``tool`` is
    None when the model asked for a tool the agent does not have: the chain still runs, so
    middleware can observe or mock it, and the terminal answers with an "Unknown tool" error.

    ``cancel_signal`` belongs to the executor: handlers may watch it, but replacing it does not
    change the signal the tool is given.

    Call ``interrupt()`` to hold the call for a human's answer.

    Attributes:
        agent: The host agent running the tool.
        tool: The tool to run, or None for an unknown tool.
        tool_use: The model's request: ``toolUseId``, ``name``, ``input``.
        invocation_state: Per-invocation state shared with hooks and the tool.
        cancel_signal: Set when the run is being cancelled: by the host's own cancel (the
            reference agent's ``cancel()``, strands' ``Agent.cancel()``), or by cancelling the
            task running it, as the cancellation leaves the call.
    """

    agent: Any
    tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any]
    cancel_signal: threading.Event = field(default_factory=threading.Event, repr=False)
    _interrupts: Mapping[str, Interrupt] = field(default_factory=lambda: _NO_INTERRUPTS, repr=False)
    # Shared by every replace() of this context (the host reads it when the stage ends), so a
    # copy a handler passes on records into the same ledger.
    _ledger: InterruptLedger = field(default_factory=InterruptLedger, repr=False, compare=False)

    def interrupt(
        self, name: str, *, reason: Any = None, response: Any = None
    ) -> MiddlewareInterruptResult:
        """Ask a human before the tool runs; returns their answer once the run is resumed.

        The first call raises `InterruptException`, which pauses the run; the executor registers
        the interrupt and the agent's result lists it. When the caller resumes with an answer for
        its id, the same call returns it wrapped in `MiddlewareInterruptResult`. A ``response``
        given here is used when no human answer exists (a preemptive answer).

        Call it before ``next_fn``: once the tool has run, pausing would run it again on resume,
        so the host refuses it. Do not wrap it in a broad ``except Exception``: that swallows the
        pause, and the host then refuses to run the tool. The id is
        ``v1:middleware_execute_tool:<toolUseId>:<uuid5(name)>``, so ``name`` must be stable
        across resumes and distinct for each decision: two handlers asking under one name on
        the same call is an error.

        Raises:
            InterruptException: no answer is available yet.
            InterruptMisuseError: another handler around this one asked under the same name.
        """
        interrupt_id = execute_tool_interrupt_id(self.tool_use["toolUseId"], name)
        return self._ledger.resolve(self._interrupts, interrupt_id, name, reason, response)

    def replace(self, **changes: Unpack[ExecuteToolChanges]) -> ExecuteToolContext:
        """Return a copy with only the given fields changed (``dataclasses.replace`` works too).

        Example:
            ```python
            @ExecuteToolStage.input
            def clamp(context: ExecuteToolContext) -> ExecuteToolContext:
                tool_use = {**context.tool_use, "input": {**context.tool_use["input"], "limit": 10}}
                return context.replace(tool_use=tool_use)
            ```
        """
        return dataclasses.replace(self, **changes)


class ExecuteToolResult(MiddlewareResult[ToolResultEvent]):
    """What ``ExecuteToolStage.Output`` handlers receive: the call's `ToolResultEvent`.

    Read the event as ``result.result`` or ``result.value``; build a new one with
    ``result.replace(result=...)`` (or ``value=``) or ``ExecuteToolResult(result=event)``.
    """


ExecuteToolStage = MiddlewareStage[
    ExecuteToolContext, ToolResultEvent, TypedEvent, ExecuteToolResult
]("executeTool", result_type=ExecuteToolResult, result_event=ToolResultEvent)
"""A tool call. Its result is the `ToolResultEvent` the tool (or a handler) produces.

A tool that raises is turned into an error result inside the terminal, so handlers always see a
result. The stage is interruptible through ``context.interrupt()``; a tool's own interrupt flows
through as a `ToolInterruptEvent`, which halts the stage.
"""
