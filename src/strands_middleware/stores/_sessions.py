"""`SessionStore`: save a paused run in a store, and resume it on whichever worker claims it.

A run that pauses for a human (``stop_reason == "interrupt"``) can be answered minutes later,
through another request, on another worker. The worker that paused it saves it; the worker that
receives the answer claims it and resumes it. The rules:

* **A claim is exactly once.** Claiming takes the saved run and deletes it in one atomic step,
  so of any number of workers racing for one session, one gets the run and the others get
  ``None``: the paused tools run once and the model is not asked twice.
* **Saves are versioned.** Every save of a session gets the next version number; a claim may
  name the version it answers (``claim(id, version=v)``), so an answer to an earlier pause can
  never resume a later one. Versions count on for as long as the session lives (``ttl``).
* **What is saved is data.** The run is encoded as JSON (``bytes`` in base64, see
  `strands_middleware.stores._codec`), never pickled, and checked again when it is read.
* **Unclaimed runs expire** after ``ttl`` seconds, so an abandoned pause does not stay forever.
* **A lost reply loses the run.** A claim the server ran but whose reply never arrived (the
  connection dropped) raises `StoreError`, and the run it took is gone: no store call is
  retried, because a retried claim would find nothing. Keep what was saved until a resume
  succeeds if a run must never be lost.

For the reference agent, `PausedRun` is what to save: its history and its interrupt state.
For a ``strands.Agent``, save what strands' own snapshot API captures (it includes strands'
interrupt state, which is where the bridge's pauses live) and load it back on the claiming
worker::

    await sessions.save(run_id, agent.take_snapshot(preset="session").to_dict())
    claimed = await sessions.claim(run_id)
    agent.load_snapshot(Snapshot.from_dict(claimed.data))
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..exceptions import InterruptStateDataError
from ..host._interrupt_state import InterruptState
from ..interrupts import Interrupt
from . import _codec as codec
from ._protocols import SnapshotStore

if TYPE_CHECKING:
    from ..content import Messages

__all__ = ["ClaimedSession", "PausedRun", "SessionStore"]

_FORMAT_KEY = "paused_run"
_FORMAT = 1


class _PausableAgent(Protocol):
    """An agent whose run can be saved: the reference ``Agent`` is one."""

    @property
    def messages(self) -> Messages: ...

    @property
    def interrupt_state(self) -> InterruptState: ...


@dataclass
class PausedRun:
    """A paused run of the reference agent: its history and its interrupt state.

    Example:
        ```python
        result = await agent.invoke_async("Delete the report")
        if result.stop_reason == "interrupt":
            await sessions.save(run_id, PausedRun.of(agent))
        ...
        claimed = await sessions.claim(run_id)          # on any worker
        if claimed is not None:
            run = claimed.run()
            agent = Agent(model=model, tools=tools, messages=run.messages,
                          interrupt_state=run.interrupt_state)
            responses = [{"interruptResponse": {"interruptId": i.id, "response": "approve"}}
                         for i in run.interrupts]
            result = await agent.invoke_async(responses)
        ```

    Attributes:
        messages: The agent's history when it paused.
        interrupts: What the run waits on (read-only; see the property).
        interrupt_state: What the run owes and what it stored to resume without asking the
            model again.
    """

    messages: Messages
    interrupt_state: InterruptState

    @property
    def interrupts(self) -> tuple[Interrupt, ...]:
        """The interrupts the run waits on, in the order asked: answer each to resume it.

        The same interrupts (ids, names, reasons) the paused result listed, as
        ``interrupt_state.owed`` holds them::

            claimed = await sessions.claim(run_id)
            run = claimed.run()
            answers = [{"interruptResponse": {"interruptId": i.id, "response": "approve"}}
                       for i in run.interrupts]
        """
        return self.interrupt_state.owed

    @classmethod
    def of(cls, agent: _PausableAgent) -> PausedRun:
        """A copy of ``agent``'s paused run, independent of the agent from here on.

        Raises:
            ValueError: ``agent`` is not paused (its interrupt state owes nothing).
        """
        state = agent.interrupt_state
        if not state.activated:
            raise ValueError(
                "PausedRun.of(agent): the agent is not paused, so there is nothing to resume; "
                "save a run whose result has stop_reason == 'interrupt'"
            )
        return cls(copy.deepcopy(agent.messages), InterruptState.from_dict(state.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (``bytes`` aside), the shape `from_dict` reads back."""
        return {
            _FORMAT_KEY: _FORMAT,
            "messages": copy.deepcopy(self.messages),
            "interrupt_state": self.interrupt_state.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PausedRun:
        """Rebuild a run from `to_dict` output.

        Raises:
            InterruptStateDataError: ``data`` is not a saved `PausedRun` (the message says
                what is wrong).
        """
        if data.get(_FORMAT_KEY) != _FORMAT:
            raise InterruptStateDataError(
                f"not a saved PausedRun: expected {_FORMAT_KEY!r}: {_FORMAT}, got keys "
                f"{sorted(data)}; a session saved from another source (a strands snapshot, "
                "say) is read from ClaimedSession.data"
            )
        messages = cast(object, data.get("messages"))
        if not isinstance(messages, list):
            raise InterruptStateDataError(
                f"a saved PausedRun's 'messages' must be a list, got {type(messages).__name__}"
            )
        state = cast(object, data.get("interrupt_state"))
        if not isinstance(state, Mapping):
            raise InterruptStateDataError(
                "a saved PausedRun's 'interrupt_state' must be a mapping, got "
                f"{type(state).__name__}"
            )
        return cls(
            cast("Messages", messages),
            InterruptState.from_dict(cast("Mapping[str, Any]", state)),
        )


@dataclass(frozen=True)
class ClaimedSession:
    """A session one worker claimed: it alone holds it now.

    Attributes:
        session_id: The id it was saved under.
        version: The version that was claimed.
        data: What was saved (a `PausedRun` as its dict, or whatever mapping was saved).
    """

    session_id: str
    version: int
    data: dict[str, Any]

    def run(self) -> PausedRun:
        """The saved `PausedRun`.

        Raises:
            InterruptStateDataError: what was saved is not a `PausedRun`.
        """
        return PausedRun.from_dict(self.data)


class SessionStore:
    """Paused runs in a store, each claimed by exactly one worker (see the module notes).

    Example:
        ```python
        sessions = SessionStore(RedisStore.from_url("redis://localhost:6379/0"), ttl=3600)
        version = await sessions.save(run_id, PausedRun.of(agent))
        claimed = await sessions.claim(run_id, version=version)   # None if another got it
        ```

    Args:
        store: Where runs are kept: a `SnapshotStore` (``RedisStore``, `InMemoryStore`).
        ttl: Seconds an unclaimed run is kept.
    """

    def __init__(self, store: SnapshotStore, *, ttl: float) -> None:
        if not isinstance(cast(object, store), SnapshotStore):
            raise TypeError(
                "SessionStore(store=...) takes a SnapshotStore, with async snapshot_put and "
                f"snapshot_take (a RedisStore or an InMemoryStore), got {store!r}"
            )
        given = cast(object, ttl)
        if (
            isinstance(given, bool)
            or not isinstance(given, (int, float))
            or not math.isfinite(given)
            or given <= 0
        ):
            raise ValueError(f"SessionStore(ttl=...) must be a number of seconds > 0, got {ttl!r}")
        self.store = store
        self.ttl = float(ttl)

    def __repr__(self) -> str:
        return f"SessionStore({self.store!r}, ttl={self.ttl})"

    async def save(self, session_id: str, run: PausedRun | Mapping[str, Any]) -> int:
        """Save ``run`` under ``session_id``, replacing an unclaimed one.

        Returns:
            The version saved, which `claim` may name.

        Raises:
            TypeError: ``run`` holds a value JSON cannot encode.
        """
        _check_id(session_id)
        data = run.to_dict() if isinstance(run, PausedRun) else dict(run)
        try:
            encoded = codec.dumps(data)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"SessionStore cannot save session {session_id!r}: {error}; a saved run must be "
                "JSON data (bytes are allowed)"
            ) from error
        return await self.store.snapshot_put(session_id, encoded, self.ttl)

    async def claim(self, session_id: str, *, version: int | None = None) -> ClaimedSession | None:
        """Take the run saved under ``session_id``; no other claim will get it.

        Args:
            session_id: The id it was saved under.
            version: Claim it only if this is its version.

        Returns:
            The claimed session, or ``None``: nothing saved, expired, claimed by another
            worker already, or of another version.

        Raises:
            InterruptStateDataError: what was stored is not a saved session (it was written by
                something else); it is gone from the store all the same.
        """
        _check_id(session_id)
        if version is not None and (
            isinstance(cast(object, version), bool)
            or not isinstance(cast(object, version), int)
            or version < 1
        ):
            raise ValueError(
                f"SessionStore.claim(version=...) must be a version save returned, got {version!r}"
            )
        taken = await self.store.snapshot_take(session_id, version)
        if taken is None:
            return None
        claimed_version, encoded = taken
        try:
            data = cast(object, codec.loads(encoded))
        except ValueError as error:
            raise InterruptStateDataError(
                f"session {session_id!r} (version {claimed_version}) is not JSON: {error}"
            ) from error
        if not isinstance(data, dict):
            raise InterruptStateDataError(
                f"session {session_id!r} (version {claimed_version}) holds a "
                f"{type(data).__name__}, not a saved run"
            )
        return ClaimedSession(session_id, claimed_version, cast("dict[str, Any]", data))


def _check_id(session_id: object) -> None:
    if not isinstance(session_id, str) or not session_id:
        raise TypeError(f"a session id is a non-empty str, got {session_id!r}")
