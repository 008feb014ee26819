"""Human-in-the-loop interrupts: what a paused run asks for and what a resume answers.

An interrupt is raised when middleware (or a tool) needs a human's answer before the run can go
on. The run stops, the caller collects the `Interrupt` objects from the result, and a later call
resumes with one ``{"interruptResponse": {"interruptId": ..., "response": ...}}`` block per
interrupt.

This module holds the interrupt data: ids, `Interrupt`, the answer shapes, and the read-only
resolution every interruptible context shares. The per-agent state that gives an answer its
lifetime is `strands_middleware.host.InterruptState`.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from ._interrupt import Interrupt
from .exceptions import (
    InterruptException,
    InterruptMisuseError,
    InterruptResponseFormatError,
    InterruptResumeError,
)

__all__ = [
    "AGENT_STREAM_INTERRUPT_PREFIX",
    "EXECUTE_TOOL_INTERRUPT_PREFIX",
    "Interrupt",
    "InterruptException",
    "InterruptLedger",
    "InterruptResponse",
    "InterruptResponseContent",
    "InterruptResponseFormatError",
    "InterruptResumeError",
    "MiddlewareInterruptResult",
    "agent_stream_interrupt_id",
    "execute_tool_interrupt_id",
    "resolve_middleware_interrupt",
]

EXECUTE_TOOL_INTERRUPT_PREFIX = "v1:middleware_execute_tool:"
"""Id prefix of interrupts raised by ExecuteToolStage middleware (one tool call's scope)."""

AGENT_STREAM_INTERRUPT_PREFIX = "v1:middleware_agent_stream:"
"""Id prefix of interrupts raised by AgentStreamStage middleware (a whole pass's scope)."""


def _name_hash(name: str) -> str:
    # uuid5 makes the id a pure function of the name: the same gate asks under the same id on
    # every resume, so the answer a caller sends back finds its interrupt again.
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


def execute_tool_interrupt_id(tool_use_id: str, name: str) -> str:
    """Return the deterministic id of a tool-middleware interrupt.

    The ``toolUseId`` makes it unique per tool call; the hashed name makes it stable across
    resumes.
    """
    return f"{EXECUTE_TOOL_INTERRUPT_PREFIX}{tool_use_id}:{_name_hash(name)}"


def agent_stream_interrupt_id(name: str) -> str:
    """Return the deterministic id of an agent-stream-middleware interrupt.

    The id has no scoping part: within one agent only one such interrupt is live at a time, so the
    name alone identifies the decision. Two agents sharing one gate and name share the id too.
    """
    return f"{AGENT_STREAM_INTERRUPT_PREFIX}{_name_hash(name)}"


@dataclass(frozen=True)
class MiddlewareInterruptResult:
    """What a middleware ``interrupt()`` returns once the run is resumed with an answer.

    Attributes:
        response: The answer the run was resumed with (or the preemptive response passed to
            ``interrupt()``).
    """

    response: Any


class InterruptResponse(TypedDict):
    """A human's answer to one interrupt.

    Attributes:
        interruptId: The `Interrupt.id` being answered.
        response: The answer; any JSON-serialisable value except ``None``.
    """

    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """One block of a resume prompt.

    Attributes:
        interruptResponse: The answer this block carries.
    """

    interruptResponse: InterruptResponse


def resolve_middleware_interrupt(
    interrupts: Mapping[str, Interrupt],
    interrupt_id: str,
    name: str,
    reason: Any = None,
    response: Any = None,
) -> MiddlewareInterruptResult:
    """Answer a middleware ``interrupt()`` call from prior responses, or pause the run.

    Both interruptible contexts (ExecuteToolStage and AgentStreamStage) share this so that they
    resolve in the same order:

    1. an answer a human already gave for ``interrupt_id`` wins, because the human has the final
       say over what the middleware proposed;
    2. otherwise a preemptive ``response`` (middleware that already knows the answer, e.g. from
       policy) is returned without pausing;
    3. otherwise `InterruptException` is raised carrying a fresh, unanswered `Interrupt`.

    It never writes to ``interrupts``. Registration happens in exactly one place, the executor
    that catches the exception (`InterruptState.register`), so a middleware that catches and
    re-raises, retries, or calls ``interrupt()`` twice cannot leave a half-registered interrupt
    behind.

    Args:
        interrupts: Where prior answers are looked up: the live `InterruptState.interrupts` for a
            tool call, or the `InterruptState.begin_pass` snapshot for the agent stream.
        interrupt_id: The deterministic id (`execute_tool_interrupt_id` /
            `agent_stream_interrupt_id`).
        name: The gate's name, carried on the raised interrupt.
        reason: What the human is shown, carried on the raised interrupt.
        response: A preemptive answer; ``None`` means "ask".

    Returns:
        The answer, wrapped.

    Raises:
        InterruptException: No answer exists yet and none was given preemptively.
    """
    existing = interrupts.get(interrupt_id)
    if existing is not None and existing.response is not None:
        return MiddlewareInterruptResult(response=existing.response)
    if response is not None:
        return MiddlewareInterruptResult(response=response)
    raise InterruptException(Interrupt(id=interrupt_id, name=name, reason=reason))


class InterruptLedger:
    """What the ``interrupt()`` calls of one stage run asked: the record a gate fails closed by.

    An interruptible context resolves through its ledger, which the host that runs the stage
    creates and reads. Three mistakes would otherwise let a gated call through silently, and the
    ledger is what lets the host see them:

    * **A swallowed interrupt.** Every `InterruptException` raised is recorded until the host
      reports it settled (it reached the executor). One still unsettled when the host is about to
      run the tool, or when the stage ends, was caught by a handler.
    * **An interrupt after the tool ran.** The host marks ``tool_started`` before it runs the
      tool; an interrupt raised after that would run the tool again on resume.
    * **Two gates, one id.** The id is derived from the name, so two gates asking under one name
      would share one answer. Resolution refuses it at once (`InterruptMisuseError`).

    Telling two gates from one gate asked twice (a retry that calls ``next_fn`` again re-runs the
    gate inside it) is done by the asker: the innermost async generator on the stack, which for a
    Wrap handler is the handler itself. A second asker while the first is still on the stack
    around it is a second gate; an asker that has finished (a retried gate) is not.
    """

    __slots__ = ("_askers", "_raised", "tool_started")

    def __init__(self) -> None:
        self.tool_started = False
        """Set by the host just before the tool runs."""
        self._raised: dict[str, tuple[Interrupt, bool]] = {}
        # Frame ids, not frames: holding frames would keep every asker's locals alive. An id is
        # only compared against frames on the current stack, where the frame it named, if still
        # alive, is the only frame that can have it.
        self._askers: dict[str, int] = {}

    def resolve(
        self,
        interrupts: Mapping[str, Interrupt],
        interrupt_id: str,
        name: str,
        reason: Any = None,
        response: Any = None,
        *,
        answer: Callable[[], MiddlewareInterruptResult] | None = None,
    ) -> MiddlewareInterruptResult:
        """`resolve_middleware_interrupt`, recording what was asked and by whom.

        ``answer``, when given, resolves instead of looking in ``interrupts``: a host whose own
        interrupt machinery answers (the strands bridge asks strands) still records through the
        ledger, so its gates fail closed like every other host's.

        Raises:
            InterruptException: No answer is available yet (recorded as raised).
            InterruptMisuseError: Another handler on the stack already asked under this id.
        """
        asker, stack = _asker_on_stack()
        earlier = self._askers.get(interrupt_id)
        if earlier is not None and earlier != asker and earlier in stack:
            raise InterruptMisuseError(
                f"two handlers asked interrupt {name!r} (id {interrupt_id}) on the same call: "
                "the id is derived from the name, so one answer would approve both. Give each "
                "gate its own name (for example ToolApproval(name=...)).",
                [Interrupt(id=interrupt_id, name=name, reason=reason)],
            )
        self._askers[interrupt_id] = asker
        try:
            if answer is not None:
                return answer()
            return resolve_middleware_interrupt(interrupts, interrupt_id, name, reason, response)
        except InterruptException as raised:
            # Keyed by the id the exception carries, which is the one the executor settles
            # (a host answering through its own machinery may issue its own ids).
            self._raised[raised.interrupt.id] = (raised.interrupt, self.tool_started)
            raise

    def settle(self, interrupt_id: str) -> None:
        """Record that the interrupt reached the executor (it pauses the run as it should)."""
        self._raised.pop(interrupt_id, None)

    @property
    def unsettled(self) -> list[Interrupt]:
        """Interrupts raised and not (yet) settled, in the order they were first raised."""
        return [interrupt for interrupt, _ in self._raised.values()]

    def raised_after_tool(self, interrupt_id: str) -> bool:
        """Whether the interrupt was raised once ``tool_started`` was set."""
        entry = self._raised.get(interrupt_id)
        return entry is not None and entry[1]


def _asker_on_stack() -> tuple[int, set[int]]:
    """The asking frame (the innermost async generator: a Wrap handler) and the whole stack."""
    asker: int | None = None
    stack: set[int] = set()
    frame = inspect.currentframe()
    while frame is not None:
        stack.add(id(frame))
        if asker is None and frame.f_code.co_flags & inspect.CO_ASYNC_GENERATOR:
            asker = id(frame)
        frame = frame.f_back
    return (asker if asker is not None else 0), stack
