"""A model call past tool calls this library paused, on a thread without the guard: refused.

Without `PausedThreadGuard` (a checkpointer given to ``create_agent`` as it is), LangGraph
takes a new prompt on a paused thread as a fresh start: it drops the tasks paused on
interrupts and saves the input before any node runs. The agent then reaches its model node
with a history whose last model turn asked for tool calls that never ran, followed by the new
prompt. The bridge refuses that model call before the model is asked (`DroppedPauses`).

How it knows the unanswered calls were paused by this library, and not left by anything else
(LangChain's ``HumanInTheLoopMiddleware`` pausing on its own, a tool's own ``interrupt()``, a
run ended by a hook before its tools ran): from the thread's checkpoints, not from a record of
this process. Walking back from the run's checkpoint through its parents, the first checkpoint
with interrupts among its pending writes is where the thread last paused; the model call is
refused when that pause holds this library's interrupts (the payload of `_interrupts`) on one
of the unanswered calls, whose id the interrupt's deterministic id carries. Any other pause is
someone else's, and LangGraph's behaviour stands. So a thread paused in another process is
covered, as long as the run can reach its checkpointer: LangGraph hands it to a node through
the run's config, which an async node sees from Python 3.11 on. On 3.10 the bridge falls back
on the checkpointer it noted when it paused the thread in this process (`note_pause`).

The cost: a scan of the request's messages back to the last model turn at each model call (a
few isinstance tests: 1 to 3 microseconds on a loaded machine, against milliseconds for a
scripted run); the checkpointer is read only when that turn has tool calls without results,
which a run never has at a model call except after such a dropped pause (or a hook that ended
a run early). The search reads at most 64 checkpoints back: each refused prompt adds two or
three, so a thread refused more than about twenty times over is let through.

A record of the calls this bridge paused would be cheaper to consult, but it would know only
this process and this bridge object; the checkpoints know every pause the thread kept.

The thread is not kept unchanged: LangGraph saved the new prompt before the bridge ran. The
error says so, and names the paused checkpoint, from which the calls can still be answered
(``resume_command``) or left (``aupdate_state(..., as_node="tools")``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Awaitable, Generator, Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from ...exceptions import InterruptResponseFormatError
from ...interrupts import Interrupt
from ._interrupts import tool_use_id_of
from ._paused_threads import (
    INTERRUPT_CHANNEL,
    PausedThreadGuard,
    answering,
    pause_of,
    waiting_on,
)

__all__ = ["DroppedPauses", "unanswered_calls"]

# Where LangGraph puts the checkpointer in a node's config (langgraph._internal._constants).
_CHECKPOINTER_KEY = "__pregel_checkpointer"

# How many checkpoints the search reads back from the run's own before giving up: the run's
# input and the steps of hooks before the model, plus those of earlier runs refused the same way.
_SEARCHED = 64

# How many threads' checkpointers the bridge notes as it pauses them (for Python 3.10).
_KEPT = 1024

# What the search finds: this library's interrupts on the unanswered calls, and where.
_Found = tuple[list[Interrupt], CheckpointTuple]
_Search = Generator[RunnableConfig, "CheckpointTuple | None", "_Found | None"]


def unanswered_calls(messages: Sequence[Any]) -> dict[str, str]:
    """The tool calls of the last model turn in ``messages`` with no result after it: id -> name."""
    # Run at every model call: isinstance tests and no set until a result is met keep it cheap.
    answered: set[str] | None = None
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            calls = message.tool_calls
            if not calls:
                return {}
            return {
                call_id: call["name"]
                for call in calls
                if (call_id := call["id"]) and (answered is None or call_id not in answered)
            }
        if isinstance(message, ToolMessage):
            if answered is None:
                answered = set()
            answered.add(message.tool_call_id)
    return {}


def _search(start: RunnableConfig, unanswered: Mapping[str, str]) -> _Search:
    """Walk back from ``start`` to the thread's last pause: this library's interrupts on
    ``unanswered`` calls there, and the paused checkpoint; None when the pause is not ours.

    A generator, so the sync and async paths share it: it yields each config to read and is
    sent what the checkpointer holds there.
    """
    saved = yield start
    configurable = start.get("configurable") or {}
    if saved is None and configurable.get("checkpoint_id"):
        # With durability="exit" the run's checkpoints are not saved yet: the thread's latest
        # is the one it started from.
        latest = {key: value for key, value in configurable.items() if key != "checkpoint_id"}
        saved = yield {"configurable": latest}
    for _ in range(_SEARCHED):
        if saved is None:
            return None
        if any(channel == INTERRUPT_CHANNEL for _, channel, _ in saved.pending_writes or ()):
            pause = pause_of(saved)
            ours = [
                each
                for each in (pause.interrupts if pause is not None else ())
                if tool_use_id_of(each.id) in unanswered
            ]
            return (ours, saved) if ours else None
        if saved.parent_config is None:
            return None
        saved = yield saved.parent_config
    return None


def _refusal(
    interrupts: Sequence[Interrupt], unanswered: Mapping[str, str], paused: CheckpointTuple
) -> InterruptResponseFormatError:
    calls = sorted({tool_use_id_of(each.id) for each in interrupts})
    named = ", ".join(f"{unanswered[call]!r} ({call})" for call in calls)
    where = dict(paused.config.get("configurable") or {})
    return InterruptResponseFormatError(
        f"this thread was paused on {waiting_on(interrupts)}, on tool call(s) {named}. LangGraph "
        "took a new prompt on it as a fresh start: it has already saved the prompt on the "
        "thread and dropped the paused calls, so the thread has changed; the run is stopped "
        "before the model is asked, as it would answer past calls that never ran. The paused "
        f"checkpoint is still there: paused = await agent.aget_state({{'configurable': {where!r}}})"
        f". Answer the calls from it: {answering('paused', 'paused.config')}; or leave them: "
        "await agent.aupdate_state(paused.config, {'messages': [ToolMessage('not run', "
        "tool_call_id=...)]}, as_node='tools'), then send the prompt again; or send it on a new "
        "thread_id. To have such a prompt refused with the thread unchanged, give create_agent "
        "checkpointer=bridge.guard_paused_threads(checkpointer)",
        [each.id for each in interrupts],
    )


class DroppedPauses:
    """The bridge's check at each model call for tool calls it paused that a new prompt dropped."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # thread_id -> the checkpointer of the run that paused there, in this process.
        self._savers: OrderedDict[str, BaseCheckpointSaver[Any]] = OrderedDict()

    def note_pause(self, config: Mapping[str, Any]) -> None:
        """Note the checkpointer of a run a tool call of this bridge paused (``config``: the
        tool's run config), for where a node is not given it (async nodes on Python 3.10)."""
        configurable: Mapping[str, Any] = config.get("configurable") or {}
        saver: Any = configurable.get(_CHECKPOINTER_KEY)
        thread_id = configurable.get("thread_id")
        if not isinstance(saver, BaseCheckpointSaver) or thread_id is None:
            return
        with self._lock:
            self._savers[str(thread_id)] = saver
            self._savers.move_to_end(str(thread_id))
            while len(self._savers) > _KEPT:
                self._savers.popitem(last=False)

    def _where(
        self, runtime: Any, messages: Sequence[Any]
    ) -> tuple[BaseCheckpointSaver[Any], RunnableConfig, dict[str, str]] | None:
        """The checkpointer and the run's checkpoint to search from, and the unanswered calls;
        None when there is nothing to search (no unanswered call, no thread, no checkpointer)."""
        unanswered = unanswered_calls(messages)
        if not unanswered:
            return None
        info: Any = getattr(runtime, "execution_info", None)  # None outside a graph
        thread_id: Any = getattr(info, "thread_id", None)
        if thread_id is None:
            return None
        config = var_child_runnable_config.get() or {}
        saver: Any = (config.get("configurable") or {}).get(_CHECKPOINTER_KEY)
        if not isinstance(saver, BaseCheckpointSaver):
            with self._lock:
                saver = self._savers.get(str(thread_id))
            if saver is None:
                return None
        if isinstance(saver, PausedThreadGuard):
            # Read past the guard, which takes a read as the start of a run.
            saver = saver.saver
        # The model task's namespace ends with its own segment: the graph's is the rest.
        namespace = str(getattr(info, "checkpoint_ns", "") or "").rpartition("|")[0]
        start: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": namespace,
                "checkpoint_id": getattr(info, "checkpoint_id", None),
            }
        }
        return cast("BaseCheckpointSaver[Any]", saver), start, unanswered

    def check(self, runtime: Any, messages: Sequence[Any]) -> None:
        """Refuse a model call (synchronous path) past tool calls this library paused.

        Raises:
            InterruptResponseFormatError: The last model turn of ``messages`` has tool calls
                without results that the thread's last pause holds this library's interrupts on.
        """
        where = self._where(runtime, messages)
        if where is None:
            return
        saver, start, unanswered = where
        search = _search(start, unanswered)
        try:
            config = next(search)
            while True:
                config = search.send(saver.get_tuple(config))
        except StopIteration as ended:
            found: _Found | None = ended.value
        if found is not None:
            raise _refusal(found[0], unanswered, found[1])

    def acheck(self, runtime: Any, messages: Sequence[Any]) -> Awaitable[None] | None:
        """`check` for the async path: None when there is nothing to read (no await needed),
        else what to await.

        Raises:
            InterruptResponseFormatError: (from the awaitable) as `check`.
        """
        where = self._where(runtime, messages)
        return None if where is None else _asearch(*where)


async def _asearch(
    saver: BaseCheckpointSaver[Any], start: RunnableConfig, unanswered: dict[str, str]
) -> None:
    search = _search(start, unanswered)
    try:
        config = next(search)
        while True:
            config = search.send(await saver.aget_tuple(config))
    except StopIteration as ended:
        found: _Found | None = ended.value
    if found is not None:
        raise _refusal(found[0], unanswered, found[1])
