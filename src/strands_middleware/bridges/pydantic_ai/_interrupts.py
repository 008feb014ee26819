"""Interrupts on pydantic-ai: its approval deferral, carrying this library's ids and reasons.

A handler's ``context.interrupt()`` that has no answer yet defers the tool call for approval
(pydantic-ai's ``ApprovalRequired``), so the run ends with pydantic-ai's own
``DeferredToolRequests``: plain data, saved with the message history as JSON. The deferral's
metadata holds this library's interrupts (id, name, reason) and the answers given so far for
that call. `interrupts_of` reads them back; `resume_results` turns answers keyed by interrupt
id into the ``DeferredToolResults`` a resumed run takes, which approve the call and carry the
answers, so the gate finds its answer when pydantic-ai runs the call again. The model is not
asked again: pydantic-ai resumes at the deferred calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults, ToolApproved

from ...exceptions import InterruptResponseFormatError, InterruptResumeError
from ...host._mixin import MiddlewareHostMixin
from ...host._resume_prompt import RESPONSE_SHAPE, parse_block, quote_ids
from ...interrupts import Interrupt

__all__ = ["METADATA_KEY", "answers_of", "deferral", "interrupts_of", "resume_results"]

METADATA_KEY = "strands_middleware"
"""The key of this library's entry in a deferred call's metadata."""


def answers_of(metadata: Any) -> dict[str, Interrupt]:
    """The answered interrupts a resumed call's metadata carries, by id."""
    if not isinstance(metadata, Mapping):
        return {}
    entry = cast("Mapping[str, Any]", metadata).get(METADATA_KEY)
    if not isinstance(entry, Mapping):
        return {}
    answered = cast("Mapping[str, Any]", entry).get("answered", [])
    found: dict[str, Interrupt] = {}
    for data in cast("list[dict[str, Any]]", answered):
        interrupt = Interrupt.from_dict(data)
        found[interrupt.id] = interrupt
    return found


def deferral(interrupt: Interrupt, answered: Mapping[str, Interrupt]) -> ApprovalRequired:
    """pydantic-ai's approval deferral for ``interrupt`` (with the call's earlier answers)."""
    return ApprovalRequired(
        metadata={
            METADATA_KEY: {
                "interrupts": [interrupt.to_dict()],
                "answered": [i.to_dict() for i in answered.values()],
            }
        }
    )


def _entry(requests: DeferredToolRequests, tool_call_id: str) -> Mapping[str, Any] | None:
    metadata = requests.metadata.get(tool_call_id)
    if not isinstance(metadata, Mapping):
        return None
    entry = metadata.get(METADATA_KEY)
    return cast("Mapping[str, Any]", entry) if isinstance(entry, Mapping) else None


def interrupts_of(requests: DeferredToolRequests) -> list[Interrupt]:
    """This library's interrupts a paused run waits on, in the order of its deferred calls.

    Calls deferred by pydantic-ai itself (a tool with ``requires_approval``, say) are not
    listed: answer them in the ``DeferredToolResults`` as pydantic-ai documents.
    """
    found: list[Interrupt] = []
    for call in requests.approvals:
        entry = _entry(requests, call.tool_call_id)
        if entry is not None:
            found.extend(Interrupt.from_dict(data) for data in entry["interrupts"])
    return found


def _answers(responses: Mapping[str, Any] | Sequence[Any]) -> dict[str, Any]:
    if isinstance(responses, Mapping):
        return dict(responses)
    if isinstance(responses, (str, bytes)):
        raise InterruptResponseFormatError(
            f"answers must be a mapping of interrupt id to answer or {RESPONSE_SHAPE}, got a str"
        )
    answers: dict[str, Any] = {}
    for block in responses:
        parsed = parse_block(block)
        if isinstance(parsed, str):
            raise InterruptResponseFormatError(
                f"a resume block is malformed ({parsed}); expected {RESPONSE_SHAPE}"
            )
        interrupt_id, answer = parsed
        if interrupt_id in answers:
            raise InterruptResumeError(
                f"interrupt {interrupt_id!r} is answered twice", [interrupt_id]
            )
        answers[interrupt_id] = answer
    return answers


def resume_results(
    requests: DeferredToolRequests,
    responses: Mapping[str, Any] | Sequence[Any],
    *,
    results: DeferredToolResults | None = None,
    middleware: MiddlewareHostMixin | None = None,
) -> DeferredToolResults:
    """The ``DeferredToolResults`` that resume a paused run with answers to its interrupts.

    Example:
        ```python
        from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware

        approvals = PydanticAIMiddleware(ToolApproval())
        agent = pydantic_ai.Agent(model, tools=[delete_file], capabilities=[approvals])
        paused = await agent.run("Clean up", output_type=[str, DeferredToolRequests])
        state = paused.all_messages_json(), paused.output   # plain data: save it anywhere
        ...
        answers = {i.id: "approve" for i in interrupts_of(paused.output)}
        done = await agent.run(
            message_history=paused.all_messages(),
            deferred_tool_results=resume_results(paused.output, answers, middleware=approvals),
            output_type=[str, DeferredToolRequests],
        )
        ```

    Args:
        requests: The paused run's output (``DeferredToolRequests``).
        responses: Answers by interrupt id, or the ``interruptResponse`` blocks every host of
            this library resumes with.
        results: Results for calls pydantic-ai deferred itself, to add these to.
        middleware: The `PydanticAIMiddleware` the agent runs with. Given, each answer is
            checked by the item that asked (`MiddlewareHostMixin.check_answers`), so an answer
            it does not accept (``"yes"`` to a `ToolApproval`) is refused here, while another
            can still be sent; without it such an answer reaches the run, where the gate fails
            closed (the tool does not run).

    Raises:
        InterruptResumeError: an answer names no interrupt of ``requests``, one of them is
            left unanswered (an answer of ``None`` counts as none), or ``middleware`` has an
            item that does not accept its answer. Nothing is built; ``requests`` (and
            ``results``) are left as they were.
        InterruptResponseFormatError: the blocks are not well-formed.
    """
    answers = _answers(responses)
    owed = interrupts_of(requests)
    unknown = sorted(set(answers) - {i.id for i in owed})
    if unknown:
        raise InterruptResumeError(
            f"no paused call waits on interrupt {quote_ids(unknown)}; it waits on "
            f"{quote_ids([i.id for i in owed]) or 'nothing of this library'}",
            unknown,
        )
    missing = [i.id for i in owed if answers.get(i.id) is None]
    if missing:
        raise InterruptResumeError(
            f"interrupt {quote_ids(missing)} is not answered: answer every interrupt of the "
            "paused run",
            missing,
        )
    if middleware is not None:
        middleware.check_answers((i, answers[i.id]) for i in owed)
    out = results if results is not None else DeferredToolResults()
    for call in requests.approvals:
        entry = _entry(requests, call.tool_call_id)
        if entry is None:
            continue
        answered = [*entry.get("answered", [])]
        for data in entry["interrupts"]:
            interrupt = Interrupt.from_dict(data)
            answered.append({**interrupt.to_dict(), "response": answers[interrupt.id]})
        out.approvals[call.tool_call_id] = ToolApproved()
        out.metadata[call.tool_call_id] = {METADATA_KEY: {"answered": answered}}
    return out
