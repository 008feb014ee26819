"""Reading a resume prompt: the ``interruptResponse`` blocks a paused run is answered with.

Kept apart from `InterruptState` because it only inspects untrusted input and reports what is
wrong with it; every decision about the state stays in the state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from ..exceptions import InterruptResumeError
from ..interrupts import Interrupt

RESPONSE_SHAPE = (
    '[{"interruptResponse": {"interruptId": "<interrupt id>", "response": <answer>}}, ...]'
)
"""The resume prompt shape, quoted in every resume error so the fix is visible in the message."""


def as_mapping(value: object) -> Mapping[str, object] | None:
    if isinstance(value, Mapping):
        return cast("Mapping[str, object]", value)
    return None


def is_response_block_attempt(block: object) -> bool:
    mapping = as_mapping(block)
    return mapping is not None and "interruptResponse" in mapping


def response_ids_in(prompt: object) -> list[str] | None:
    """Return the ids a prompt tries to answer, or ``None`` if it carries no answers at all."""
    if isinstance(prompt, list):
        blocks = cast("list[object]", prompt)
    elif is_response_block_attempt(prompt):
        blocks = [prompt]
    else:
        return None
    attempts = [block for block in blocks if is_response_block_attempt(block)]
    if not attempts:
        return None
    ids: list[str] = []
    for block in attempts:
        inner = as_mapping(cast("Mapping[str, object]", block)["interruptResponse"])
        interrupt_id = None if inner is None else inner.get("interruptId")
        ids.append(interrupt_id if isinstance(interrupt_id, str) else "<missing id>")
    return ids


def parse_block(block: object) -> tuple[str, Any] | str:
    """Return ``(id, answer)`` for a well-formed block, else a description of what is wrong."""
    mapping = as_mapping(block)
    if mapping is None:
        return f"expected an object, got {type_name(block)}"
    if set(mapping) != {"interruptResponse"}:
        return f"expected exactly the key 'interruptResponse', got keys {sorted(map(str, mapping))}"
    inner = as_mapping(mapping["interruptResponse"])
    if inner is None:
        got = type_name(mapping["interruptResponse"])
        return f"'interruptResponse' must be an object, got {got}"
    extra = sorted(str(key) for key in inner if key not in ("interruptId", "response"))
    if extra:
        return f"'interruptResponse' has unexpected keys {extra}"
    if "interruptId" not in inner:
        return "'interruptResponse' is missing 'interruptId'"
    interrupt_id = inner["interruptId"]
    if not isinstance(interrupt_id, str):
        return f"'interruptId' must be a str, got {type_name(interrupt_id)}"
    if "response" not in inner:
        return f"the response to {interrupt_id!r} is missing 'response'"
    answer = inner["response"]
    if answer is None:
        return (
            f"the response to {interrupt_id!r} is None, which is how an interrupt records "
            "'not answered yet'; send a value"
        )
    return interrupt_id, answer


def quote_ids(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids)


def describe_interrupts(interrupts: Sequence[Interrupt]) -> str:
    return ", ".join(f"{i.id!r} (name {i.name!r})" for i in interrupts)


def type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def refuse_unaccepted(
    answered: Iterable[tuple[Interrupt, Any]], check: Callable[[Interrupt, Any], str | None]
) -> None:
    """Raise when ``check`` finds something wrong with an answer; every host words it alike.

    Args:
        answered: Each interrupt a resume answers, with its answer.
        check: What is wrong with an answer to an interrupt (a sentence), or None
            (`MiddlewareHostMixin.answer_problem`).

    Raises:
        InterruptResumeError: an answer was refused; it names every refused interrupt and what
            is wrong with its answer. The caller has changed nothing yet.
    """
    problems: list[str] = []
    refused: list[str] = []
    for interrupt, answer in answered:
        problem = check(interrupt, answer)
        if problem is not None:
            problems.append(f"{interrupt.id}: {problem}")
            refused.append(interrupt.id)
    if problems:
        raise InterruptResumeError(
            "an answer is not one the middleware that asked accepts, so nothing was "
            "resumed and the run is still paused; send the answers again, corrected: "
            + "; ".join(problems),
            refused,
        )
