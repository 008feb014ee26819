"""Human-in-the-loop interrupts: what a paused run asks for and what a resume answers.

An interrupt is raised when middleware (or a tool) needs a human's answer before the run can go
on. The run stops, the caller collects the `Interrupt` objects from the result, and a later call
resumes with one ``{"interruptResponse": {"interruptId": ..., "response": ...}}`` block per
interrupt.

This module holds the interrupt data and the per-agent `InterruptState` that gives it a lifetime.
It knows nothing about stages or agents; a host's run loop drives the state through a small set
of calls, in this order:

1. ``resume(prompt)`` at the start of every invocation. While the state is *activated* (a run is
   paused) the prompt must answer every interrupt the run stopped on; otherwise it must not
   contain answers at all.
2. ``begin_pass()`` before the agent-stream middleware chain runs. It returns the snapshot that
   agent-stream middleware resolves its interrupts against.
3. While the pass runs, middleware calls `resolve_middleware_interrupt` (read-only). When it
   raises `InterruptException`, the executor that catches it calls ``register(interrupt)`` and
   ``activate()``; a paused tool call also stores a `PendingToolExecution` so the resume replays
   the tools instead of calling the model again.
   An agent-stream interrupt raised after the pass already produced its result (with no tool
   execution pending) is refused instead: the run loop calls ``deactivate()`` and raises, since
   nothing was stored to replay and a resume would call the model a second time.
4. ``end_tool_cycle()`` after a round of tools ran to completion.
5. At the end of the pass: ``deactivate()`` if the state is activated, the pass did not stop on
   an interrupt and no tool execution is pending (how an agent-stream pause ends), then
   ``end_interrupt_cycle()`` unconditionally.

The rules behind those calls exist to make one promise hold: *a gate asks the human once per
interrupt cycle and never inherits an approval from an earlier cycle*. An interrupt cycle is the
span from the interrupt that asked through to the pass that ends with nothing owed; it can cover
several invocations, one per resume round trip. Interrupt ids are deterministic (derived from the
gate's name), which is what lets a resumed answer find its interrupt, and also what would turn a
leftover answer into a standing approval if the state did not release it exactly when the cycle
ends.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, cast

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from .content import Message, ToolResult

__all__ = [
    "AGENT_STREAM_INTERRUPT_PREFIX",
    "EXECUTE_TOOL_INTERRUPT_PREFIX",
    "Interrupt",
    "InterruptException",
    "InterruptResponse",
    "InterruptResponseContent",
    "InterruptResponseFormatError",
    "InterruptResumeError",
    "InterruptState",
    "InterruptStateDataError",
    "MiddlewareInterruptResult",
    "PendingToolExecution",
    "agent_stream_interrupt_id",
    "execute_tool_interrupt_id",
    "resolve_middleware_interrupt",
]

EXECUTE_TOOL_INTERRUPT_PREFIX = "v1:middleware_execute_tool:"
"""Id prefix of interrupts raised by ExecuteToolStage middleware (one tool call's scope)."""

AGENT_STREAM_INTERRUPT_PREFIX = "v1:middleware_agent_stream:"
"""Id prefix of interrupts raised by AgentStreamStage middleware (a whole pass's scope)."""

_RESPONSE_SHAPE = (
    '[{"interruptResponse": {"interruptId": "<interrupt id>", "response": <answer>}}, ...]'
)
"""The resume prompt shape, quoted in every resume error so the fix is visible in the message."""


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


def _is_agent_stream_id(interrupt_id: str) -> bool:
    # The prefix is the only thing that tells a pass-scoped answer from a tool-scoped one; the
    # lifetime rules below key on it.
    return interrupt_id.startswith(AGENT_STREAM_INTERRUPT_PREFIX)


@dataclass
class Interrupt:
    """A request for human input that paused a run.

    Attributes:
        id: Opaque identifier; send it back in the ``interruptResponse`` that answers it.
        name: The name the raiser gave; it identifies the decision being asked for.
        reason: Anything the raiser wants the human to see (must be JSON-serialisable to persist).
        response: The human's answer, set when the run is resumed. ``None`` means "not answered
            yet", which is why a resume may not answer with ``None``.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (the shape `from_dict` reads back)."""
        return {"id": self.id, "name": self.name, "reason": self.reason, "response": self.response}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        """Rebuild an interrupt from `to_dict` output."""
        return cls(
            id=data["id"],
            name=data["name"],
            reason=data.get("reason"),
            response=data.get("response"),
        )


# Named as in the spec (no "Error" suffix) so code written against the spec reads the same here.
class InterruptException(Exception):
    """Raised to pause a run until a human answers `interrupt`.

    It subclasses `Exception`, so a broad ``except Exception`` in middleware swallows it and turns
    a pause into an error. Middleware that catches errors around ``next_fn`` or ``interrupt()``
    must re-raise it.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt)
        self.interrupt = interrupt

    def __str__(self) -> str:
        return (
            f"interrupt {self.interrupt.name!r} (id {self.interrupt.id}) is waiting for a response"
        )


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


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


class InterruptResumeError(ValueError):
    """A resume prompt does not fit the interrupt state; the state was left untouched.

    Raised by `InterruptState.resume` when a prompt answers an id the state does not know, leaves
    an owed interrupt unanswered, answers one id twice, or carries answers while nothing is
    waiting for one. Every check runs before anything is written, so after this error the caller
    can fix the prompt and call ``resume`` again.

    Attributes:
        interrupt_ids: The ids the message is about (unknown, unanswered, duplicated or unexpected
            ones), so code can react without parsing the message.
    """

    def __init__(self, message: str, interrupt_ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.interrupt_ids: tuple[str, ...] = tuple(interrupt_ids)


class InterruptResponseFormatError(InterruptResumeError, TypeError):
    """A resume prompt is not a list of well-formed ``interruptResponse`` blocks.

    It is also a `TypeError` because the prompt has the wrong shape rather than a wrong value,
    which is how hosts conventionally report it; catching `InterruptResumeError` covers it too.
    A fresh prompt (text, content blocks, messages) sent while a run is paused is reported this
    way: the state needs answers, and a new question would silently abandon the paused run.
    """


class InterruptStateDataError(ValueError):
    """Serialised interrupt state (`InterruptState.from_dict`) is malformed.

    The message names the path of the offending value (for example
    ``interrupts['v1:...'].name``) so a corrupted session record can be found and repaired.
    """


# --------------------------------------------------------------------------------------------
# Pending tool execution
# --------------------------------------------------------------------------------------------


@dataclass
class PendingToolExecution:
    """What a paused tool round needs so its resume replays the tools, not the model.

    When a tool call interrupts, the assistant turn that asked for the tools is already in the
    history. Storing it here lets the resumed run execute the outstanding tool uses directly;
    calling the model again instead would produce a second assistant turn and re-run tools whose
    side effects already happened. Results of the tool calls that finished before the pause are
    kept so they are not run twice.

    Attributes:
        assistant_message: The assistant message whose ``toolUse`` blocks are being executed.
        completed_tool_results: Results already produced in the interrupted round (including
            synthesised ones such as cancellations); the resume runs only the tool uses without
            a result here.
    """

    assistant_message: Message
    completed_tool_results: list[ToolResult]

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready deep copy (the shape `from_dict` reads back)."""
        return {
            "assistant_message": copy.deepcopy(self.assistant_message),
            "completed_tool_results": copy.deepcopy(self.completed_tool_results),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingToolExecution:
        """Rebuild a pending execution from `to_dict` output.

        Raises:
            InterruptStateDataError: The data does not have the `to_dict` shape.
        """
        return _pending_from_data(data, "pending_tool_execution")


# --------------------------------------------------------------------------------------------
# Interrupt state
# --------------------------------------------------------------------------------------------


class InterruptState:
    """One agent's interrupts and the rules that decide how long each answer lives.

    The state is *activated* while a run is paused waiting for a human. The host drives it with
    the calls described in the module docstring; everything else is read-only from outside, so
    the lifetime rules cannot be bypassed by writing to a dict.

    Two kinds of interrupt live here, told apart by id prefix:

    * **Tool-scoped** (ExecuteToolStage middleware, tools, tool hooks). Their ids embed the
      ``toolUseId``, so they can never collide with another call, and they are dropped as soon as
      the tool round they belong to has run (`end_tool_cycle`).
    * **Agent-stream** (AgentStreamStage middleware). Their ids are a pure hash of the name and
      their gate sits around the whole pass, so a gate may be re-read after a tool round inside
      the same interrupt cycle. Their answers therefore outlive `end_tool_cycle` and are released
      only when the interrupt cycle ends (`end_interrupt_cycle`).

    Equality compares the persisted part (everything `to_dict` writes); the pass snapshot is
    pass-local and deliberately not part of it. The state is mutable, so it is unhashable.
    """

    __hash__: ClassVar[None] = None  # type: ignore[assignment]  # pyright: ignore[reportIncompatibleMethodOverride]

    def __init__(self) -> None:
        self._interrupts: dict[str, Interrupt] = {}
        self._context: dict[str, Any] = {}
        self._activated = False
        self._snapshot: dict[str, Interrupt] = {}
        # The read-only views wrap dicts that are only ever mutated in place, so a view handed to
        # a context earlier keeps showing the current truth, never a stale copy.
        self._interrupts_view: Mapping[str, Interrupt] = MappingProxyType(self._interrupts)
        self._snapshot_view: Mapping[str, Interrupt] = MappingProxyType(self._snapshot)
        self.pending_tool_execution: PendingToolExecution | None = None
        """The paused tool round, if a tool call interrupted; ``None`` otherwise.

        The run loop tells a tool pause from an agent-stream pause by this field alone: an
        activated state without a pending execution was paused by agent-stream middleware, so the
        resume makes a normal model call instead of replaying tools.
        """

    # ---- read-only views ----------------------------------------------------------------------

    @property
    def activated(self) -> bool:
        """True while a run is paused and the next invocation must be a resume."""
        return self._activated

    @property
    def interrupts(self) -> Mapping[str, Interrupt]:
        """The live interrupts by id: what tool-scoped middleware resolves against.

        A read-only view that always reflects the current state.
        """
        return self._interrupts_view

    @property
    def snapshot(self) -> Mapping[str, Interrupt]:
        """The interrupts as they were when the current pass began (see `begin_pass`).

        A read-only view that always reflects the current snapshot: once the interrupt cycle ends
        it is empty, so a context kept past its pass cannot resolve a released answer.
        """
        return self._snapshot_view

    @property
    def context(self) -> dict[str, Any]:
        """Host scratch data for the current tool round (must be JSON-serialisable to persist).

        `resume` stores the accepted answers under ``"responses"`` so that a tool that forwards
        them (an agent used as a tool, for instance) can find its own. The dict is emptied by
        `end_tool_cycle` and `deactivate`, because the data belongs to the round that just ended.
        """
        return self._context

    @property
    def owed(self) -> tuple[Interrupt, ...]:
        """Interrupts still waiting for an answer, in registration order.

        This is what a paused run reports to the caller, and what the next `resume` must answer.
        """
        return tuple(i for i in self._interrupts.values() if i.response is None)

    # ---- lifecycle ----------------------------------------------------------------------------

    def activate(self) -> None:
        """Mark the run as paused: the next invocation must resume with answers.

        Call it after `register` (and, for a tool pause, after setting `pending_tool_execution`).
        """
        self._activated = True

    def deactivate(self) -> None:
        """Leave the paused state and forget everything: interrupts, context, pending tools.

        The run loop calls this when a pass that was resumed completes without pausing again and
        without a pending tool execution, which is how an agent-stream pause (that never reaches a
        tool round) ends. Clearing the interrupts here, retained agent-stream answers included, is
        what keeps the name-only agent-stream ids collision-free: a later pass that reuses a name
        finds nothing to inherit. The run loop leaves the state alone while a tool execution is
        pending, because a deliberately kept tool pause (a cancelled resume, for example) still
        owes its caller the replay, and deactivating would strand the answers the caller holds.
        """
        self._interrupts.clear()
        self._context.clear()
        self._snapshot.clear()
        self._activated = False
        self.pending_tool_execution = None

    def register(self, interrupt: Interrupt) -> Interrupt:
        """Record a raised interrupt; the single place interrupts enter the state.

        The executor that catches `InterruptException` calls this (middleware never does:
        `resolve_middleware_interrupt` is read-only). If the id is already present with an
        answer, the answer is kept: ids are deterministic, so re-raising the same gate within a
        cycle is the same question, and discarding the answer would make the human answer it
        twice. Keeping it cannot revive an answer from an earlier cycle, because none survives:
        tool-scoped answers go with their tool round (`end_tool_cycle`), agent-stream ones with
        their cycle (`end_interrupt_cycle`, or at the latest the next unactivated `begin_pass`).
        Otherwise the new interrupt replaces any unanswered entry, so the human sees the latest
        reason.

        Args:
            interrupt: The interrupt carried by the exception. A copy is stored, so later changes
                to the caller's object do not reach the state.

        Returns:
            The interrupt now stored under ``interrupt.id``.

        Raises:
            TypeError: ``interrupt`` is not an `Interrupt` with a string id.
        """
        if not isinstance(interrupt, Interrupt):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"register() expects an Interrupt, got {type(interrupt).__name__}")
        if not isinstance(interrupt.id, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"Interrupt.id must be a str, got {type(interrupt.id).__name__}")
        existing = self._interrupts.get(interrupt.id)
        if existing is not None and existing.response is not None:
            return existing
        stored = dataclasses.replace(interrupt)
        self._interrupts[interrupt.id] = stored
        return stored

    def resume(self, prompt: object) -> None:
        """Apply the answers in ``prompt`` before an invocation runs.

        Call this at the start of every invocation with the caller's prompt. While the state is
        activated the prompt must be a list of ``{"interruptResponse": {"interruptId": str,
        "response": ...}}`` blocks that answers every owed interrupt, and may re-answer ones that
        already have an answer. While it is not activated the prompt must not carry answers
        (anything else is a fresh prompt and is left to the host).

        The rules are strict because every silent alternative loses something: a fresh prompt
        would abandon the paused run, an unknown id means the answer belongs to another run or
        agent, a missing answer would only pause the run again, and answers with nothing waiting
        mean the caller believes in a pause that no longer exists. The whole prompt is validated
        before anything is written, so a rejected prompt leaves the state exactly as it was.

        Args:
            prompt: The caller's prompt, in whatever form the host accepts.

        Raises:
            InterruptResponseFormatError: Activated and the prompt is not a list of well-formed
                response blocks (a fresh prompt included).
            InterruptResumeError: An id is unknown, answered twice, or an owed interrupt is left
                unanswered; or answers arrived while nothing was waiting for them.
        """
        if not self._activated:
            unexpected = _response_ids_in(prompt)
            if unexpected is not None:
                raise InterruptResumeError(
                    "no interrupt is waiting for a response (the interrupt state is not "
                    f"activated), but the prompt answers {_quote_ids(unexpected)}: the interrupt "
                    "cycle those answers belonged to has ended or never started; start a new "
                    "invocation with a normal prompt instead",
                    unexpected,
                )
            return

        responses = self._parse_responses(prompt)
        self._check_ids(responses)

        # Everything is valid: write. Entries are replaced, not mutated, so Interrupt objects the
        # caller or an earlier snapshot holds keep the value they had.
        for interrupt_id, answer in responses:
            self._interrupts[interrupt_id] = dataclasses.replace(
                self._interrupts[interrupt_id], response=answer
            )
        self._context["responses"] = [
            {"interruptResponse": {"interruptId": interrupt_id, "response": answer}}
            for interrupt_id, answer in responses
        ]

    def end_tool_cycle(self) -> None:
        """Close a tool round that ran: drop its interrupts, context and pending execution.

        Tool-scoped answers are spent once their tools have run, so they go. Answered agent-stream
        interrupts stay: the agent-stream gate wraps the whole pass, and a later pass of the same
        interrupt cycle (after another tool pause, say) re-reads it from its snapshot; dropping it
        here would make the human approve the same thing again. Unanswered agent-stream entries
        are dropped, since nothing will answer them in this round.

        The state leaves the activated mode: a tool round that ran means the pause it was resumed
        from is over. The current pass snapshot is untouched, so a gate re-read later in this
        same pass still resolves.
        """
        kept = {
            interrupt_id: interrupt
            for interrupt_id, interrupt in self._interrupts.items()
            if _is_agent_stream_id(interrupt_id) and interrupt.response is not None
        }
        self._interrupts.clear()
        self._interrupts.update(kept)
        self._context.clear()
        self._activated = False
        self.pending_tool_execution = None

    def end_interrupt_cycle(self) -> None:
        """Release retained agent-stream answers if the interrupt cycle is over.

        Call it at the end of every pass, after the run loop's own `deactivate` decision. If the
        state is still activated the run is paused and the cycle goes on, so nothing happens;
        otherwise the cycle ended with this pass, and every agent-stream interrupt and the pass
        snapshot are released. Without this an answer would become a standing approval: ids are
        deterministic, so the same gate in a later cycle would find the old answer and never ask.

        Run it before the state is persisted (and before anything else that can fail), so what
        gets saved is the released state and an error cannot strand an old answer.
        """
        if self._activated:
            return
        self._release_agent_stream()

    def begin_pass(self) -> Mapping[str, Interrupt]:
        """Take the snapshot agent-stream middleware resolves against for this pass, and return it.

        The snapshot is a copy of the live interrupts, taken before the chain runs, because
        `end_tool_cycle` clears the live dict mid-pass and a gate that re-reads its answer after
        ``next_fn`` must still find it.

        It is populated only while the state is activated, i.e. when this pass is a resume. A
        pass that starts unactivated begins a new interrupt cycle by definition, so any
        agent-stream answer still present is a leftover of a cycle that was abandoned before
        `end_interrupt_cycle` ran (a consumer that stopped reading the stream, for instance);
        such leftovers are released here so they can neither resolve this pass's gates nor be
        carried into a later activated one.

        Returns:
            The read-only snapshot view (the same object as `snapshot`).
        """
        self._snapshot.clear()
        if self._activated:
            self._snapshot.update(
                {key: dataclasses.replace(value) for key, value in self._interrupts.items()}
            )
        else:
            self._release_agent_stream()
        return self._snapshot_view

    def set_pending_tool_results(self, completed_tool_results: Sequence[ToolResult]) -> None:
        """Replace the stored results of the pending tool round.

        A resumed tool round that is cancelled part-way keeps its pause (the human's answers are
        still owed to tools that did not run), but the tools that did finish must not run again
        on the next resume; refreshing the results here records them. With no pending execution
        there is nothing to replay, so the call does nothing.

        Args:
            completed_tool_results: Every result the round has produced so far. The list is
                copied.
        """
        if self.pending_tool_execution is None:
            return
        self.pending_tool_execution.completed_tool_results = list(completed_tool_results)

    # ---- persistence --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready deep copy of the state, so a resume can run in another process.

        The shape is ``{"activated": bool, "interrupts": {id: Interrupt.to_dict()}, "context":
        {...}, "pending_tool_execution": None | PendingToolExecution.to_dict()}``. The pass
        snapshot is not included: a resume always starts a new pass, which takes its own.
        Values the state holds (reasons, answers, context, messages) must be JSON-serialisable
        for ``json.dumps`` to accept the result and for `from_dict` to rebuild an equal state.
        """
        pending = self.pending_tool_execution
        return {
            "activated": self._activated,
            "interrupts": {
                interrupt_id: copy.deepcopy(interrupt.to_dict())
                for interrupt_id, interrupt in self._interrupts.items()
            },
            "context": copy.deepcopy(self._context),
            "pending_tool_execution": None if pending is None else pending.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InterruptState:
        """Rebuild a state from `to_dict` output (typically after ``json.loads``).

        The data is validated in full, and unknown keys are refused rather than ignored, because a
        silently dropped field could be an answer the human already gave. Agent-stream answers
        restored into an unactivated state cannot be revived: the next `begin_pass` releases them.

        Raises:
            InterruptStateDataError: The data does not have the `to_dict` shape; the message
                names the offending path.
        """
        root = _require_mapping(data, "interrupt state")
        _check_keys(
            root,
            "interrupt state",
            required=("activated", "interrupts", "context"),
            optional=("pending_tool_execution",),
        )
        activated = root["activated"]
        if not isinstance(activated, bool):
            raise InterruptStateDataError(
                f"interrupt state: 'activated' must be a bool, got {_type_name(activated)}"
            )
        interrupts_data = _require_mapping(root["interrupts"], "interrupts")
        interrupts = {
            key: _interrupt_from_data(key, value) for key, value in interrupts_data.items()
        }
        context = _require_mapping(root["context"], "context")
        pending_data = root.get("pending_tool_execution")
        pending = (
            None
            if pending_data is None
            else _pending_from_data(pending_data, "pending_tool_execution")
        )

        state = cls()
        state._interrupts.update(interrupts)
        state._context.update(copy.deepcopy(dict(context)))
        state._activated = activated
        state.pending_tool_execution = pending
        return state

    # ---- dunder -------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InterruptState):
            return NotImplemented
        return (
            self._activated == other._activated
            and self._interrupts == other._interrupts
            and self._context == other._context
            and self.pending_tool_execution == other.pending_tool_execution
        )

    def __repr__(self) -> str:
        return (
            f"InterruptState(activated={self._activated!r}, "
            f"interrupts={list(self._interrupts.values())!r}, context={self._context!r}, "
            f"pending_tool_execution={self.pending_tool_execution!r})"
        )

    # ---- private ------------------------------------------------------------------------------

    def _release_agent_stream(self) -> None:
        for interrupt_id in [i for i in self._interrupts if _is_agent_stream_id(i)]:
            del self._interrupts[interrupt_id]
        self._snapshot.clear()

    def _parse_responses(self, prompt: object) -> list[tuple[str, Any]]:
        """Check the shape of an activated resume prompt; return ``(id, answer)`` pairs."""
        if not isinstance(prompt, list):
            if _as_mapping(prompt) is not None and "interruptResponse" in cast(
                "Mapping[str, object]", prompt
            ):
                raise InterruptResponseFormatError(
                    "a resume prompt must be a list of interruptResponse blocks, got a single "
                    f"block; wrap it in a list. Expected {_RESPONSE_SHAPE}",
                    self._owed_ids(),
                )
            raise self._fresh_prompt_error(f"a {_type_name(prompt)} prompt")

        blocks = cast("list[object]", prompt)
        if blocks and not any(_is_response_block_attempt(block) for block in blocks):
            raise self._fresh_prompt_error("a prompt without interruptResponse blocks")

        problems: list[str] = []
        responses: list[tuple[str, Any]] = []
        for index, block in enumerate(blocks):
            parsed = _parse_block(block)
            if isinstance(parsed, str):
                problems.append(f"block [{index}]: {parsed}")
            else:
                responses.append(parsed)
        if problems:
            raise InterruptResponseFormatError(
                "malformed interrupt response prompt: "
                + "; ".join(problems)
                + f". Expected {_RESPONSE_SHAPE}",
                self._owed_ids(),
            )
        return responses

    def _check_ids(self, responses: list[tuple[str, Any]]) -> None:
        """Check the answered ids against the state (duplicates, unknown, missing)."""
        seen: set[str] = set()
        duplicated: list[str] = []
        for interrupt_id, _ in responses:
            if interrupt_id in seen and interrupt_id not in duplicated:
                duplicated.append(interrupt_id)
            seen.add(interrupt_id)
        if duplicated:
            raise InterruptResumeError(
                f"the prompt answers {_quote_ids(duplicated)} more than once; send exactly one "
                f"response per interrupt. Expected {_RESPONSE_SHAPE}",
                duplicated,
            )

        unknown = [
            interrupt_id for interrupt_id, _ in responses if interrupt_id not in self._interrupts
        ]
        if unknown:
            raise InterruptResumeError(
                f"the prompt answers unknown interrupt id(s) {_quote_ids(unknown)}: no interrupt "
                "with that id is registered on this agent (an answer for another run or agent?); "
                f"interrupts waiting for an answer: {self._describe_owed()}. "
                f"Expected {_RESPONSE_SHAPE}",
                unknown,
            )

        missing = [i for i in self.owed if i.id not in seen]
        if missing:
            raise InterruptResumeError(
                f"interrupt(s) {_describe(missing)} still need an answer: a resume must answer "
                "every interrupt the run stopped on, or it would only pause again. "
                f"Expected {_RESPONSE_SHAPE}",
                [i.id for i in missing],
            )

    def _fresh_prompt_error(self, what: str) -> InterruptResponseFormatError:
        return InterruptResponseFormatError(
            f"the agent is paused on interrupts and must be resumed with interrupt responses, "
            f"got {what}; interrupts waiting for an answer: {self._describe_owed()}. "
            f"Expected {_RESPONSE_SHAPE}",
            self._owed_ids(),
        )

    def _owed_ids(self) -> list[str]:
        return [i.id for i in self.owed]

    def _describe_owed(self) -> str:
        owed = self.owed
        if not owed:
            return "none (every interrupt already has an answer; resume with [] to continue)"
        return _describe(owed)


# --------------------------------------------------------------------------------------------
# Private helpers: prompt parsing
# --------------------------------------------------------------------------------------------


def _as_mapping(value: object) -> Mapping[str, object] | None:
    if isinstance(value, Mapping):
        return cast("Mapping[str, object]", value)
    return None


def _is_response_block_attempt(block: object) -> bool:
    mapping = _as_mapping(block)
    return mapping is not None and "interruptResponse" in mapping


def _response_ids_in(prompt: object) -> list[str] | None:
    """Return the ids a prompt tries to answer, or ``None`` if it carries no answers at all."""
    if isinstance(prompt, list):
        blocks = cast("list[object]", prompt)
    elif _is_response_block_attempt(prompt):
        blocks = [prompt]
    else:
        return None
    attempts = [block for block in blocks if _is_response_block_attempt(block)]
    if not attempts:
        return None
    ids: list[str] = []
    for block in attempts:
        inner = _as_mapping(cast("Mapping[str, object]", block)["interruptResponse"])
        interrupt_id = None if inner is None else inner.get("interruptId")
        ids.append(interrupt_id if isinstance(interrupt_id, str) else "<missing id>")
    return ids


def _parse_block(block: object) -> tuple[str, Any] | str:
    """Return ``(id, answer)`` for a well-formed block, else a description of what is wrong."""
    mapping = _as_mapping(block)
    if mapping is None:
        return f"expected an object, got {_type_name(block)}"
    if set(mapping) != {"interruptResponse"}:
        return f"expected exactly the key 'interruptResponse', got keys {sorted(map(str, mapping))}"
    inner = _as_mapping(mapping["interruptResponse"])
    if inner is None:
        got = _type_name(mapping["interruptResponse"])
        return f"'interruptResponse' must be an object, got {got}"
    extra = sorted(str(key) for key in inner if key not in ("interruptId", "response"))
    if extra:
        return f"'interruptResponse' has unexpected keys {extra}"
    if "interruptId" not in inner:
        return "'interruptResponse' is missing 'interruptId'"
    interrupt_id = inner["interruptId"]
    if not isinstance(interrupt_id, str):
        return f"'interruptId' must be a str, got {_type_name(interrupt_id)}"
    if "response" not in inner:
        return f"the response to {interrupt_id!r} is missing 'response'"
    answer = inner["response"]
    if answer is None:
        return (
            f"the response to {interrupt_id!r} is None, which is how an interrupt records "
            "'not answered yet'; send a value"
        )
    return interrupt_id, answer


def _quote_ids(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids)


def _describe(interrupts: Sequence[Interrupt]) -> str:
    return ", ".join(f"{i.id!r} (name {i.name!r})" for i in interrupts)


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


# --------------------------------------------------------------------------------------------
# Private helpers: decoding serialised state
# --------------------------------------------------------------------------------------------


def _require_mapping(value: object, where: str) -> Mapping[str, Any]:
    mapping = _as_mapping(value)
    if mapping is None:
        raise InterruptStateDataError(f"{where}: expected an object, got {_type_name(value)}")
    for key in mapping:
        if not isinstance(key, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise InterruptStateDataError(f"{where}: keys must be strings, got {key!r}")
    return mapping


def _check_keys(
    mapping: Mapping[str, Any], where: str, *, required: Sequence[str], optional: Sequence[str]
) -> None:
    missing = [key for key in required if key not in mapping]
    if missing:
        raise InterruptStateDataError(f"{where}: missing key(s) {missing}")
    unknown = sorted(key for key in mapping if key not in required and key not in optional)
    if unknown:
        raise InterruptStateDataError(f"{where}: unknown key(s) {unknown}")


def _interrupt_from_data(key: str, value: object) -> Interrupt:
    where = f"interrupts[{key!r}]"
    data = _require_mapping(value, where)
    _check_keys(data, where, required=("id", "name"), optional=("reason", "response"))
    for field_name in ("id", "name"):
        if not isinstance(data[field_name], str):
            got = _type_name(data[field_name])
            raise InterruptStateDataError(f"{where}.{field_name} must be a str, got {got}")
    if data["id"] != key:
        raise InterruptStateDataError(
            f"{where}.id is {data['id']!r}; an interrupt must be stored under its own id"
        )
    return Interrupt.from_dict(copy.deepcopy(dict(data)))


def _pending_from_data(value: object, where: str) -> PendingToolExecution:
    data = _require_mapping(value, where)
    _check_keys(data, where, required=("assistant_message", "completed_tool_results"), optional=())
    message = _require_mapping(data["assistant_message"], f"{where}.assistant_message")
    if message.get("role") != "assistant":
        raise InterruptStateDataError(
            f"{where}.assistant_message.role must be 'assistant', got {message.get('role')!r}"
        )
    if not isinstance(message.get("content"), list):
        got = _type_name(message.get("content"))
        raise InterruptStateDataError(
            f"{where}.assistant_message.content must be a list, got {got}"
        )
    results_value: object = data["completed_tool_results"]
    if not isinstance(results_value, list):
        raise InterruptStateDataError(
            f"{where}.completed_tool_results must be a list, got {_type_name(results_value)}"
        )
    results = cast("list[object]", results_value)
    for index, result in enumerate(results):
        result_data = _require_mapping(result, f"{where}.completed_tool_results[{index}]")
        if not isinstance(result_data.get("toolUseId"), str):
            raise InterruptStateDataError(
                f"{where}.completed_tool_results[{index}].toolUseId must be a str"
            )
    return PendingToolExecution(
        assistant_message=cast("Message", copy.deepcopy(dict(message))),
        completed_tool_results=cast("list[ToolResult]", copy.deepcopy(results)),
    )
