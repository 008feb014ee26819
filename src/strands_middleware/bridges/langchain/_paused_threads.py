"""A new prompt on a thread paused on this library's interrupts: refused, the thread unchanged.

LangGraph takes any new input on a paused thread as a fresh start: before a node runs, it
drops the tasks paused on interrupts and saves the input as the thread's next checkpoint, so
no middleware can refuse the prompt while the paused run is still there to answer. Only the
checkpointer sees that input before anything is kept, so the refusal lives there:
`PausedThreadGuard` wraps the checkpointer the agent is given
(``LangChainBridge.guard_paused_threads(saver)``).

How it tells a new prompt from a resume, whatever the durability mode:

* reading a thread's checkpoint (LangGraph reads the latest one as each run starts), it notes
  whether the checkpoint is paused on this library's interrupts: a task with one of its
  interrupts among the checkpoint's writes and no output of its own;
* a checkpoint saved on top of a paused one is a new prompt when its metadata says so
  (``source == "input"``, ``durability="sync"``/``"async"``) or when it carries a newer version
  of the graph's input channel ``__start__`` (``durability="exit"`` saves one checkpoint, at the
  end). A resume writes no input, and a deliberate ``aupdate_state`` is not a prompt: both pass.
  That checkpoint is refused (the error below, raised from the save), and so is everything else
  the run tries to keep, until the thread is next read;
* the bridge stops the run at its first model call (`check_model_call`) when the request still
  holds a tool call this library paused on without its result: the model is not asked. Without
  it, with ``durability="async"``/``"exit"``, LangGraph learns of the refused save only when the
  run ends; the thread is unchanged all the same.

The cost: one scan of a checkpoint's writes each time it is read, a dictionary look-up for each
checkpoint and write saved, and at each model call a look-up by thread (a scan of the request's
messages only on a thread that was paused): about 40 microseconds per ``ainvoke``, under 0.5% of
a scripted run on ``InMemorySaver``.

Why not in a node: a ``before_agent`` hook runs after LangGraph has saved the input and dropped
the paused tasks; putting the thread back (removing the prompt, pausing the calls again) would
add checkpoints and give the interrupts new LangGraph ids, so the thread would not be as it was.
Why the model-call stop as well: a refused save stops the run at once only with
``durability="sync"`` (LangGraph awaits each save after a step); with ``"async"`` and ``"exit"``
it surfaces when the run ends, after the model was asked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.constants import START

from ...exceptions import InterruptResponseFormatError
from ...interrupts import Interrupt
from ._interrupts import ours_of, tool_use_id_of

__all__ = [
    "INTERRUPT_CHANNEL",
    "PausedThreadGuard",
    "PausedThreads",
    "answering",
    "pause_of",
    "refusal",
    "waiting_on",
]

# LangGraph's writes that say what happened to a task rather than what it produced
# (langgraph._internal._constants): a task with only these is unfinished.
INTERRUPT_CHANNEL = "__interrupt__"
_CONTROL_WRITES = frozenset({INTERRUPT_CHANNEL, "__resume__", "__error__", "__error_source_node__"})

# How many paused checkpoints, and threads with a refused run, the records keep at once.
_KEPT = 1024


@dataclass(frozen=True)
class _Pause:
    """A checkpoint paused on this library's interrupts."""

    interrupts: tuple[Interrupt, ...]
    start_version: object


def pause_of(saved: CheckpointTuple) -> _Pause | None:
    """What ``saved`` is paused on of this library's interrupts (None: nothing)."""
    asked: dict[str, list[object]] = {}
    finished: set[str] = set()
    for task_id, channel, value in saved.pending_writes or ():
        if channel == INTERRUPT_CHANNEL:
            asked.setdefault(task_id, []).extend(_listed(value))
        elif channel not in _CONTROL_WRITES:
            finished.add(task_id)
    ours = [
        mine
        for task_id, interrupts in asked.items()
        if task_id not in finished
        for each in interrupts
        if (mine := ours_of(each)) is not None
    ]
    if not ours:
        return None
    versions = saved.checkpoint["channel_versions"]
    return _Pause(tuple(ours), versions.get(START))


def _listed(value: object) -> list[object]:
    # LangGraph writes a task's interrupts as a list (a single one in older releases).
    if isinstance(value, (list, tuple)):
        return list(cast("Sequence[object]", value))
    return [value]


def _thread_of(config: RunnableConfig) -> tuple[str, str]:
    configurable: Mapping[str, Any] = config.get("configurable") or {}
    return str(configurable.get("thread_id")), str(configurable.get("checkpoint_ns", ""))


def waiting_on(interrupts: Sequence[Interrupt]) -> str:
    """How a refusal names the interrupts a thread is paused on (shared by both refusals)."""
    listed = ", ".join(f"{i.name!r} ({i.id})" for i in interrupts)
    return f"{len(interrupts)} interrupt(s) waiting for an answer: {listed}"


def answering(snapshot: str, config: str) -> str:
    """The call answering a paused thread, given the snapshot read and the run's config."""
    return f"agent.ainvoke(resume_command({snapshot}, answers, middleware=bridge), {config})"


def refusal(interrupts: Sequence[Interrupt]) -> InterruptResponseFormatError:
    """The error of a new prompt on a thread paused on ``interrupts``."""
    return InterruptResponseFormatError(
        f"this thread is paused on {waiting_on(interrupts)}. A new prompt would drop them, so it "
        "is refused and nothing of its run is saved: the thread is still paused as it was. "
        f"Answer them: {answering('await agent.aget_state(config)', 'config')}; "
        "to leave the paused run, answer with a refusal (the tool does not run) and then send "
        "the prompt, or send it on a new thread_id",
        [i.id for i in interrupts],
    )


class PausedThreads:
    """What the guards of one bridge know: paused checkpoints and threads with a refused run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # (thread_id, checkpoint_ns, checkpoint_id) -> what that checkpoint is paused on.
        self._paused: OrderedDict[tuple[str, str, str], _Pause] = OrderedDict()
        # thread_id -> what its latest checkpoint, as last read, is paused on.
        self._latest: OrderedDict[str, _Pause] = OrderedDict()
        # (thread_id, checkpoint_ns) -> the pause a run in progress there was refused on.
        self._refused: OrderedDict[tuple[str, str], _Pause] = OrderedDict()

    def read(self, config: RunnableConfig, saved: CheckpointTuple | None) -> None:
        """Note a checkpoint read through a guard (``config`` as the reader gave it)."""
        thread, namespace = _thread_of(config)
        latest = not (config.get("configurable") or {}).get("checkpoint_id")
        pause = None if saved is None else pause_of(saved)
        with self._lock:
            # LangGraph reads the thread as a run starts: any refused run is over.
            self._refused.pop((thread, namespace), None)
            if latest and namespace == "":
                self._latest.pop(thread, None)
            if pause is None or saved is None:
                return
            if latest and namespace == "":
                _keep(self._latest, thread, pause)
            _keep(self._paused, (thread, namespace, str(saved.checkpoint["id"])), pause)

    def check_save(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata
    ) -> None:
        """Refuse a checkpoint that would put a new prompt on a paused one (or one of a run
        already refused).

        Raises:
            InterruptResponseFormatError: The checkpoint is refused; nothing is saved.
        """
        thread, namespace = _thread_of(config)
        parent = str((config.get("configurable") or {}).get("checkpoint_id") or "")
        with self._lock:
            pause = self._refused.get((thread, namespace))
            if pause is None:
                pause = self._paused.get((thread, namespace, parent)) if parent else None
                if pause is None:
                    return
                prompted = metadata.get("source") == "input" or (
                    checkpoint["channel_versions"].get(START) != pause.start_version
                )
                if not prompted:
                    return
                _keep(self._refused, (thread, namespace), pause)
        raise refusal(pause.interrupts)

    def keeps_writes(self, config: RunnableConfig) -> bool:
        """Whether a task's writes may be saved: not while the thread's run is refused."""
        with self._lock:
            return _thread_of(config) not in self._refused

    def check_model_call(self, thread_id: str | None, messages: Sequence[Any]) -> None:
        """Refuse a model call that would answer past a tool call still paused on this
        library's interrupts (the run began with a new prompt on a paused thread).

        Raises:
            InterruptResponseFormatError: The thread's latest checkpoint, as this run read it,
                is paused on interrupts of calls ``messages`` holds without their results.
        """
        if thread_id is None or not self._latest:
            return
        with self._lock:
            pause = self._latest.get(thread_id)
        if pause is None:
            return
        if not _still_paused({tool_use_id_of(i.id) for i in pause.interrupts}, messages):
            return
        with self._lock:
            _keep(self._refused, (thread_id, ""), pause)
        raise refusal(pause.interrupts)


def _still_paused(calls: set[str], messages: Sequence[Any]) -> bool:
    """Whether ``messages`` hold one of ``calls`` (tool-call ids) without its result after it."""
    open_calls: set[str] = set()
    for message in messages:
        kind = getattr(message, "type", None)
        if kind == "ai":
            asked: Any = getattr(message, "tool_calls", None) or []
            open_calls.update(
                call_id
                for call in cast("list[Mapping[str, Any]]", asked)
                if (call_id := call.get("id")) in calls
            )
        elif kind == "tool":
            open_calls.discard(str(getattr(message, "tool_call_id", "")))
    return bool(open_calls)


def _keep(records: OrderedDict[Any, Any], key: object, value: object) -> None:
    records[key] = value
    records.move_to_end(key)
    while len(records) > _KEPT:
        records.popitem(last=False)


class PausedThreadGuard(BaseCheckpointSaver[Any]):
    """The checkpointer given to ``create_agent``, refusing a new prompt on a paused thread.

    Made by `LangChainBridge.guard_paused_threads`; every call goes to the wrapped
    checkpointer (``saver``), except a new prompt on a thread paused on this library's
    interrupts, which is refused with `InterruptResponseFormatError` (an
    `InterruptResumeError`) before the thread changes.
    """

    def __init__(self, saver: BaseCheckpointSaver[Any], records: PausedThreads) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver
        self._records = records

    @property
    def config_specs(self) -> list[Any]:
        specs: Any = cast(Any, self.saver).config_specs
        return list(specs)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.saver.get_next_version(current, channel)

    # ---- reads: noted, then passed on --------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        saved = self.saver.get_tuple(config)
        self._records.read(config, saved)
        return saved

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        saved = await self.saver.aget_tuple(config)
        self._records.read(config, saved)
        return saved

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.saver.list(config, filter=filter, before=before, limit=limit)

    def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        return self.saver.alist(config, filter=filter, before=before, limit=limit)

    # ---- saves: checked first ----------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self._records.check_save(config, checkpoint, metadata)
        return self.saver.put(config, checkpoint, metadata, new_versions)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self._records.check_save(config, checkpoint, metadata)
        return await self.saver.aput(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        # A refused run's writes are dropped: it has no checkpoint for them to belong to.
        if self._records.keeps_writes(config):
            self.saver.put_writes(config, writes, task_id, task_path)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        if self._records.keeps_writes(config):
            await self.saver.aput_writes(config, writes, task_id, task_path)

    # ---- the rest: the wrapped checkpointer's ------------------------------------------------

    def with_allowlist(self, extra_allowlist: Any) -> BaseCheckpointSaver[Any]:
        # LangGraph narrows a checkpointer's serialiser when it compiles a graph: the wrapped
        # checkpointer is the one that serialises.
        narrowed: Any = getattr(self.saver, "with_allowlist", None)
        if narrowed is None:
            return self
        saver = cast("BaseCheckpointSaver[Any]", narrowed(extra_allowlist))
        return self if saver is self.saver else PausedThreadGuard(saver, self._records)

    def delete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.saver.adelete_thread(thread_id)

    # Added to checkpointers by later LangGraph releases; their signatures vary by release.

    def delete_for_runs(self, *args: Any, **kwargs: Any) -> Any:
        return cast(Any, self.saver).delete_for_runs(*args, **kwargs)

    async def adelete_for_runs(self, *args: Any, **kwargs: Any) -> Any:
        return await cast(Any, self.saver).adelete_for_runs(*args, **kwargs)

    def copy_thread(self, *args: Any, **kwargs: Any) -> Any:
        return cast(Any, self.saver).copy_thread(*args, **kwargs)

    async def acopy_thread(self, *args: Any, **kwargs: Any) -> Any:
        return await cast(Any, self.saver).acopy_thread(*args, **kwargs)

    def prune(self, *args: Any, **kwargs: Any) -> Any:
        return cast(Any, self.saver).prune(*args, **kwargs)

    async def aprune(self, *args: Any, **kwargs: Any) -> Any:
        return await cast(Any, self.saver).aprune(*args, **kwargs)

    def get_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return cast(Any, self.saver).get_delta_channel_history(*args, **kwargs)

    async def aget_delta_channel_history(self, *args: Any, **kwargs: Any) -> Any:
        return await cast(Any, self.saver).aget_delta_channel_history(*args, **kwargs)
