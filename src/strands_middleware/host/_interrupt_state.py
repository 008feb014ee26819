"""The per-agent interrupt state: which interrupts are owed, and how long each answer lives.

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
   the tools instead of calling the model again. An agent-stream interrupt raised after the pass
   already produced its result (with no tool execution pending) is refused instead: the run loop
   calls ``deactivate()`` and raises, since nothing was stored to replay and a resume would call
   the model a second time.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, cast

from ..exceptions import InterruptResponseFormatError, InterruptResumeError, InterruptStateDataError
from ..interrupts import AGENT_STREAM_INTERRUPT_PREFIX, Interrupt
from ._resume_prompt import (
    RESPONSE_SHAPE,
    as_mapping,
    describe_interrupts,
    is_response_block_attempt,
    parse_block,
    quote_ids,
    refuse_unaccepted,
    response_ids_in,
    type_name,
)
from ._state_decoding import (
    check_keys,
    interrupt_from_data,
    pending_parts_from_data,
    require_mapping,
)

if TYPE_CHECKING:
    from ..content import Message, ToolResult

__all__ = ["InterruptState", "PendingToolExecution"]


def _is_agent_stream_id(interrupt_id: str) -> bool:
    # The prefix is the only thing that tells a pass-scoped answer from a tool-scoped one; the
    # lifetime rules below key on it.
    return interrupt_id.startswith(AGENT_STREAM_INTERRUPT_PREFIX)


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
        message, results = pending_parts_from_data(data, "pending_tool_execution")
        return cls(assistant_message=message, completed_tool_results=results)


# ---- interrupt state -------------------------------------------------------------------------


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

    def resume(
        self, prompt: object, check: Callable[[Interrupt, Any], str | None] | None = None
    ) -> None:
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
            check: Asked about each answer with the interrupt it answers; returns what is
                wrong with the answer (a sentence), or None to accept it. The host passes the
                checks of the middleware that asked (`MiddlewareHostMixin.answer_problem`), so
                an answer the asker would not understand is refused here, while the caller
                can still send another, rather than failing the call later.

        Raises:
            InterruptResponseFormatError: Activated and the prompt is not a list of well-formed
                response blocks (a fresh prompt included).
            InterruptResumeError: An id is unknown, answered twice, or an owed interrupt is left
                unanswered; or answers arrived while nothing was waiting for them; or ``check``
                refused an answer.
        """
        if not self._activated:
            unexpected = response_ids_in(prompt)
            if unexpected is not None:
                raise InterruptResumeError(
                    "no interrupt is waiting for a response (the interrupt state is not "
                    f"activated), but the prompt answers {quote_ids(unexpected)}: the interrupt "
                    "cycle those answers belonged to has ended or never started; start a new "
                    "invocation with a normal prompt instead",
                    unexpected,
                )
            return

        responses = self._parse_responses(prompt)
        self._check_ids(responses)
        if check is not None:
            refuse_unaccepted(((self._interrupts[i], answer) for i, answer in responses), check)

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
        root = require_mapping(data, "interrupt state")
        check_keys(
            root,
            "interrupt state",
            required=("activated", "interrupts", "context"),
            optional=("pending_tool_execution",),
        )
        activated = root["activated"]
        if not isinstance(activated, bool):
            raise InterruptStateDataError(
                f"interrupt state: 'activated' must be a bool, got {type_name(activated)}"
            )
        interrupts_data = require_mapping(root["interrupts"], "interrupts")
        interrupts = {
            key: interrupt_from_data(key, value) for key, value in interrupts_data.items()
        }
        context = require_mapping(root["context"], "context")
        pending_data = root.get("pending_tool_execution")
        pending = (
            None
            if pending_data is None
            else PendingToolExecution(
                *pending_parts_from_data(pending_data, "pending_tool_execution")
            )
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
            if as_mapping(prompt) is not None and "interruptResponse" in cast(
                "Mapping[str, object]", prompt
            ):
                raise InterruptResponseFormatError(
                    "a resume prompt must be a list of interruptResponse blocks, got a single "
                    f"block; wrap it in a list. Expected {RESPONSE_SHAPE}",
                    self._owed_ids(),
                )
            raise self._fresh_prompt_error(f"a {type_name(prompt)} prompt")

        blocks = cast("list[object]", prompt)
        if blocks and not any(is_response_block_attempt(block) for block in blocks):
            raise self._fresh_prompt_error("a prompt without interruptResponse blocks")

        problems: list[str] = []
        responses: list[tuple[str, Any]] = []
        for index, block in enumerate(blocks):
            parsed = parse_block(block)
            if isinstance(parsed, str):
                problems.append(f"block [{index}]: {parsed}")
            else:
                responses.append(parsed)
        if problems:
            raise InterruptResponseFormatError(
                "malformed interrupt response prompt: "
                + "; ".join(problems)
                + f". Expected {RESPONSE_SHAPE}",
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
                f"the prompt answers {quote_ids(duplicated)} more than once; send exactly one "
                f"response per interrupt. Expected {RESPONSE_SHAPE}",
                duplicated,
            )

        unknown = [
            interrupt_id for interrupt_id, _ in responses if interrupt_id not in self._interrupts
        ]
        if unknown:
            raise InterruptResumeError(
                f"the prompt answers unknown interrupt id(s) {quote_ids(unknown)}: no interrupt "
                "with that id is registered on this agent (an answer for another run or agent?); "
                f"interrupts waiting for an answer: {self._describe_owed()}. "
                f"Expected {RESPONSE_SHAPE}",
                unknown,
            )

        missing = [i for i in self.owed if i.id not in seen]
        if missing:
            raise InterruptResumeError(
                f"interrupt(s) {describe_interrupts(missing)} still need an answer: a resume must "
                "answer every interrupt the run stopped on, or it would only pause again. "
                f"Expected {RESPONSE_SHAPE}",
                [i.id for i in missing],
            )

    def _fresh_prompt_error(self, what: str) -> InterruptResponseFormatError:
        return InterruptResponseFormatError(
            f"the agent is paused on interrupts and must be resumed with interrupt responses, "
            f"got {what}; interrupts waiting for an answer: {self._describe_owed()}. "
            f"Expected {RESPONSE_SHAPE}",
            self._owed_ids(),
        )

    def _owed_ids(self) -> list[str]:
        return [i.id for i in self.owed]

    def _describe_owed(self) -> str:
        owed = self.owed
        if not owed:
            return "none (every interrupt already has an answer; resume with [] to continue)"
        return describe_interrupts(owed)
