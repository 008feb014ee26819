"""A per-call model switch: long requests go to a bigger model, without touching the agent.

An Input handler replaces ``context.model`` for one call; the terminal streams whatever model
the context holds, and ``agent.model`` stays as it was.

Run: ``python examples/model_switch.py``
"""

from __future__ import annotations

from strands_middleware import InvokeModelContext, InvokeModelStage
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel, text_turn

small = ScriptedModel([text_turn("Short answer from the small model.")])
large = ScriptedModel([text_turn("Long answer from the large model.")])


@InvokeModelStage.input
def route_by_length(context: InvokeModelContext) -> InvokeModelContext:
    words = sum(
        len(str(block.get("text", "")).split())
        for message in context.messages
        for block in message["content"]
    )
    if words > 8:
        print(f"route: {words} words -> large model")
        return context.replace(model=large)
    print(f"route: {words} words -> small model")
    return context


def main() -> None:
    agent = Agent(model=small, middleware=[route_by_length])
    print(agent("Hi there"))
    agent.messages.clear()
    print(agent("Please explain in detail how a middleware chain unwinds on cancellation"))
    print(f"agent.model is still the small one: {agent.model is small}")


if __name__ == "__main__":
    main()
