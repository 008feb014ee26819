"""A cache that short-circuits the model: the second identical request never reaches it.

The Wrap handler keys the request by its messages and system prompt. On a hit it yields the
stored `ModelStopReason` itself, which is all a short-circuit is: the result event is the last
event, whoever produced it.

Run: ``python examples/model_cache.py``
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    ModelStopReason,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel, text_turn

_answers: dict[str, ModelStopReason] = {}


@InvokeModelStage.wrap
async def cache(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    key = json.dumps([context.messages, context.system_prompt], sort_keys=True)
    if key in _answers:
        print("cache: hit")
        yield _answers[key]
        return
    print("cache: miss")
    async for event in next_fn(context):
        if isinstance(event, ModelStopReason):
            _answers[key] = event
        yield event


def main() -> None:
    model = ScriptedModel([text_turn("Paris.")])
    for _ in range(2):
        agent = Agent(model=model, middleware=[cache])
        print(f"answer: {agent('Capital of France?')}")
    print(f"model calls: {len(model.requests)}")


if __name__ == "__main__":
    main()
