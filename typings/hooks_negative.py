"""Mistakes on the reference agent's hooks a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from strands_middleware.agent import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    Agent,
    BeforeToolCallEvent,
    MessageAddedEvent,
)
from strands_middleware.testing import ScriptedModel

agent = Agent(model=ScriptedModel([]))


def refuse_deletes(event: BeforeToolCallEvent) -> None:
    event.cancel_tool = True


# A callback for one event registered for another.
agent.add_hook(AfterModelCallEvent, refuse_deletes)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
agent.hooks.add(AfterToolCallEvent, refuse_deletes)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# Something that is not a hook event class.
agent.add_hook(str, print)  # type: ignore[type-var]  # pyright: ignore[reportArgumentType]

# A lambda that reads a field its event does not have.
agent.add_hook(AfterModelCallEvent, lambda event: event.tool_use)  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownLambdaType, reportUnknownMemberType]

# The agent always supplies these fields, so an event without them is a mistake.
MessageAddedEvent(agent=agent)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
BeforeToolCallEvent(agent=agent, tool=None, invocation_state={})  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]


# A field of the wrong type.
def clear(event: AfterToolCallEvent) -> None:
    event.result = None  # type: ignore[assignment]  # pyright: ignore[reportAttributeAccessIssue]
