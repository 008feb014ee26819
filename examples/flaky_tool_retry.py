"""A retry around a flaky tool: the Wrap handler calls ``next_fn`` again on an error result.

Each ``next_fn`` call opens a fresh inner chain, so a retry is just a loop. The terminal turns
the tool's exception into an error result, which is what the handler inspects; an
``InterruptException`` is never an error result, so a retry like this cannot swallow a pause.

Run: ``python examples/flaky_tool_retry.py``
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    MiddlewareNext,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

_calls = {"count": 0}


@tool
def fetch_price(symbol: str) -> str:
    """Fetch a price; fails the first two times, like a busy upstream.

    Args:
        symbol: The ticker symbol.
    """
    _calls["count"] += 1
    if _calls["count"] < 3:
        raise ConnectionError("upstream busy")
    return f"{symbol}: 101.5"


@ExecuteToolStage.wrap
async def retry_errors(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    attempts = 3
    for attempt in range(1, attempts + 1):
        result: ToolResultEvent | None = None
        async for event in next_fn(context):
            if isinstance(event, ToolResultEvent):
                result = event
            else:
                yield event
        assert result is not None
        if result.tool_result["status"] == "success" or attempt == attempts:
            print(f"retry: attempt {attempt} -> {result.tool_result['status']}")
            yield result
            return
        print(f"retry: attempt {attempt} failed ({result.exception}), trying again")


def main() -> None:
    model = ScriptedModel(
        [tool_turn("fetch_price", {"symbol": "ACME"}, tool_use_id="p1"), text_turn("ACME: 101.5")]
    )
    agent = Agent(model=model, tools=[fetch_price], middleware=[retry_errors])
    print(f"answer: {agent('Price of ACME?')}")


if __name__ == "__main__":
    main()
