"""Interrupts across the strands boundary: strands' `Interrupt` and `InterruptException` and ours.

Both carry the same id, name, reason and response; the spec's deterministic ids are shared by
both libraries, so an answer for one is an answer for the other.
"""

from __future__ import annotations

from typing import Any, cast

from strands.interrupt import Interrupt as HostInterrupt
from strands.interrupt import InterruptException as HostInterruptException

from ...exceptions import InterruptException
from ...host._resume_prompt import parse_block
from ...interrupts import Interrupt

__all__ = [
    "answers_to",
    "interrupt_exception_in",
    "interrupt_exception_out",
    "interrupt_in",
    "interrupt_out",
    "interrupts_out",
]


def interrupt_in(interrupt: Any) -> Interrupt:
    """A strands interrupt as this library's."""
    return Interrupt(
        id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response
    )


def interrupt_out(interrupt: Interrupt) -> HostInterrupt:
    """This library's interrupt as a strands one."""
    return HostInterrupt(
        id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response
    )


def interrupts_out(ours: Any, hosts: Any) -> Any:
    """strands' own list when ``ours`` still says what ``hosts`` said, else new interrupts."""
    if ours is None:
        return None
    if (
        hosts is not None
        and len(ours) == len(hosts)
        and all(interrupt_in(host) == mine for mine, host in zip(ours, hosts, strict=True))
    ):
        return hosts
    return [interrupt_out(interrupt) for interrupt in ours]


def interrupt_exception_in(error: HostInterruptException) -> InterruptException:
    """A strands interrupt exception as the one handlers see."""
    return InterruptException(interrupt_in(error.interrupt))


def interrupt_exception_out(error: InterruptException) -> HostInterruptException:
    """Our interrupt exception as the one strands registers."""
    return HostInterruptException(interrupt_out(error.interrupt))


def answers_to(agent: Any, prompt: Any) -> list[tuple[Interrupt, Any]]:
    """The interrupts ``prompt`` answers on a paused strands ``agent``, each with its answer.

    Empty when the agent is not paused or the prompt is no list of answers. A block strands
    would reject (malformed, or for an interrupt it does not hold) is left out: strands says
    what is wrong with it when it reads the prompt.
    """
    # strands keeps its pause in the agent's interrupt state and has no public reader for it.
    state = getattr(agent, "_interrupt_state", None)
    if state is None or not getattr(state, "activated", False) or not isinstance(prompt, list):
        return []
    asked: Any = getattr(state, "interrupts", {})
    answered: list[tuple[Interrupt, Any]] = []
    for block in cast("list[object]", prompt):
        parsed = parse_block(block)
        if isinstance(parsed, str):
            continue
        interrupt_id, answer = parsed
        host = asked.get(interrupt_id)
        if host is not None:
            answered.append((interrupt_in(host), answer))
    return answered
