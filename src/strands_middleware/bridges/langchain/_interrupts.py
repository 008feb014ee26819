"""Interrupts across the LangGraph boundary: what a paused run asks, and the command resuming it.

A handler's ``context.interrupt(name, ...)`` asks through LangGraph's own ``interrupt()``, with
the payload ``{"id": <this library's id>, "name": ..., "reason": ...}``: the run pauses as any
LangGraph run does (``result["__interrupt__"]``) and the checkpointer keeps it. LangGraph answers
by its own interrupt ids, so `resume_command` turns answers keyed by this library's ids into the
``Command(resume=...)`` LangGraph takes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from langgraph.types import Command
from langgraph.types import Interrupt as HostInterrupt

from ...exceptions import InterruptResumeError
from ...host._mixin import MiddlewareHostMixin
from ...host._resume_prompt import RESPONSE_SHAPE, parse_block, response_ids_in
from ...interrupts import EXECUTE_TOOL_INTERRUPT_PREFIX, Interrupt

__all__ = ["interrupt_payload", "interrupts_of", "ours_of", "resume_command", "tool_use_id_of"]

_PAYLOAD_KEYS = {"id", "name", "reason"}


def interrupt_payload(interrupt_id: str, name: str, reason: Any) -> dict[str, Any]:
    """What the bridge hands LangGraph's ``interrupt()`` (JSON-ready, so checkpointers keep it)."""
    return {"id": interrupt_id, "name": name, "reason": reason}


def _host_interrupts(paused: Any) -> list[HostInterrupt]:
    if isinstance(paused, Mapping):
        found: Any = cast("Mapping[str, Any]", paused).get("__interrupt__", ())
    elif hasattr(paused, "interrupts"):  # a StateSnapshot from agent.aget_state(config)
        found = paused.interrupts
    else:
        found = paused
    if not isinstance(found, Sequence) or not all(
        isinstance(each, HostInterrupt) for each in cast("Sequence[object]", found)
    ):
        raise TypeError(
            "interrupts_of/resume_command take the result of agent.ainvoke(...), the snapshot "
            f"of agent.aget_state(config), or its list of LangGraph interrupts; got {paused!r}"
        )
    return list(cast("Sequence[HostInterrupt]", found))


def ours_of(host: object) -> Interrupt | None:
    """The interrupt of this library a LangGraph interrupt carries; None for anyone else's."""
    value: Any = getattr(host, "value", None)
    if isinstance(value, Mapping) and set(cast("Mapping[str, Any]", value)) == _PAYLOAD_KEYS:
        payload = cast("Mapping[str, Any]", value)
        interrupt_id = payload["id"]
        if isinstance(interrupt_id, str):
            return Interrupt(id=interrupt_id, name=str(payload["name"]), reason=payload["reason"])
    return None


def _ours(host: HostInterrupt) -> Interrupt:
    # Someone else's interrupt (a tool's own, or LangChain's middleware): its LangGraph id.
    return ours_of(host) or Interrupt(id=host.id, name="interrupt", reason=host.value)


def interrupts_of(paused: Any) -> list[Interrupt]:
    """What a paused run asks, as this library's `Interrupt` (id, name, reason).

    Interrupts this library's middleware raised carry their deterministic ids
    (``v1:middleware_execute_tool:<toolUseId>:<uuid5(name)>``); any other LangGraph interrupt is
    listed under its LangGraph id, with its value as the reason, so it can be answered too.

    Those of this library come in the order of the paused turn's tool calls, as on every other
    host, and any other after them. LangGraph runs a turn's tool calls as parallel tasks and
    lists their interrupts as the tasks reached them, which varies from run to run; given only
    the list of interrupts (no messages to take the order from), that order is kept.

    Args:
        paused: The result of ``agent.ainvoke(...)``, the snapshot of
            ``agent.aget_state(config)``, or its list of LangGraph interrupts.
    """
    ours = [_ours(host) for host in _host_interrupts(paused)]
    order = _tool_call_order(paused)
    if order:
        last = len(order)
        ours.sort(key=lambda interrupt: order.get(tool_use_id_of(interrupt.id), last))
    return ours


def _tool_call_order(paused: Any) -> dict[str, int]:
    """Each tool call of the run's last tool-calling turn, by its id: its place in the turn."""
    # A result dict, a StateSnapshot (.values) or a ``version="v2"`` GraphOutput (.value).
    state: object = getattr(paused, "values", None) or getattr(paused, "value", None)
    if isinstance(paused, Mapping):
        state = cast(object, paused)
    if not isinstance(state, Mapping):
        return {}
    messages: object = cast("Mapping[str, object]", state).get("messages")
    if not isinstance(messages, Sequence):
        return {}
    for message in reversed(cast("Sequence[object]", messages)):
        calls: Any = getattr(message, "tool_calls", None)
        if calls:
            return {str(call.get("id")): place for place, call in enumerate(calls)}
    return {}


def tool_use_id_of(interrupt_id: str) -> str:
    """The tool call an execute-tool interrupt id names (the id without its name's hash)."""
    if not interrupt_id.startswith(EXECUTE_TOOL_INTERRUPT_PREFIX):
        return ""
    return interrupt_id[len(EXECUTE_TOOL_INTERRUPT_PREFIX) :].rpartition(":")[0]


def resume_command(
    paused: Any,
    responses: list[Any] | Mapping[str, Any],
    *,
    middleware: MiddlewareHostMixin | None = None,
) -> Command[Any]:
    """The ``Command(resume=...)`` that answers a paused run, for ``agent.ainvoke(...)``.

    Args:
        paused: What `interrupts_of` takes: the paused result or the thread's state snapshot.
        responses: The answers, as this library's resume prompt (``[{"interruptResponse":
            {"interruptId": ..., "response": ...}}, ...]``) or as a mapping id -> answer.
        middleware: The `LangChainBridge` the agent runs with. Given, each answer is checked by
            the item that asked (`MiddlewareHostMixin.check_answers`), so an answer it does not
            accept (``"yes"`` to a `ToolApproval`) is refused here, while another can still be
            sent; without it such an answer reaches the run, where the gate fails closed (the
            tool does not run).

    Raises:
        InterruptResumeError: The thread is not paused (``paused`` lists no interrupt: its run
            ended, or these answers were already given); or an answer is malformed, names an
            interrupt the run is not paused on, or is not accepted by the item of
            ``middleware`` that asked. Nothing is resumed: a paused thread stays paused and
            answerable.
    """
    asked = [(_ours(host), host.id) for host in _host_interrupts(paused)]
    if not asked:
        # As on every host: answers with nothing waiting for them mean the caller believes in a
        # pause that is over. LangGraph would run nothing and return the thread as it is.
        if isinstance(responses, Mapping):
            ids = [str(key) for key in responses]
        else:
            ids = response_ids_in(responses) or []
        raise InterruptResumeError(
            "the thread is not paused on any interrupt (its run ended, or these answers were "
            "already given), so there is nothing to resume; send a new prompt instead",
            ids,
        )
    ours = {interrupt.id: interrupt for interrupt, _ in asked}
    by_id = {interrupt.id: host_id for interrupt, host_id in asked}
    answers: list[tuple[str, Any]] = []
    if isinstance(responses, Mapping):
        answers = [(str(key), value) for key, value in responses.items()]
    elif isinstance(responses, list):  # pyright: ignore[reportUnnecessaryIsInstance]
        for block in responses:
            parsed = parse_block(block)
            if isinstance(parsed, str):
                raise InterruptResumeError(
                    f"malformed interrupt response: {parsed}; send {RESPONSE_SHAPE}"
                )
            answers.append(parsed)
    else:
        raise InterruptResumeError(
            f"resume_command takes the answers as {RESPONSE_SHAPE} or a mapping id -> answer, got "
            f"{type(responses).__name__}"
        )
    if not answers:
        raise InterruptResumeError(f"no answers given; send {RESPONSE_SHAPE}")
    resume: dict[str, Any] = {}
    for interrupt_id, answer in answers:
        host_id = by_id.get(interrupt_id)
        if host_id is None:
            raise InterruptResumeError(
                f"the run is not paused on interrupt {interrupt_id!r}; it is paused on "
                f"{', '.join(repr(i) for i in by_id) or 'nothing'}",
                [interrupt_id],
            )
        if host_id in resume:
            raise InterruptResumeError(
                f"interrupt {interrupt_id!r} is answered twice", [interrupt_id]
            )
        resume[host_id] = answer
    unanswered = [ours for ours, host_id in by_id.items() if host_id not in resume]
    if unanswered:
        raise InterruptResumeError(
            f"interrupts {', '.join(repr(i) for i in unanswered)} are left unanswered: answer "
            "every interrupt the run is paused on",
            unanswered,
        )
    if middleware is not None:
        middleware.check_answers((ours[interrupt_id], answer) for interrupt_id, answer in answers)
    return Command(resume=resume)
