"""Quickstart: an agent with a tool and three kinds of middleware, on a scripted model.

The model is `ScriptedModel`, which plays back two assistant turns (a tool call, then an
answer) as a real Converse stream, so this runs with no network. Three middleware print what
they see: an Input handler on the model call, a Wrap handler timing the model call, and an
Output handler on the tool call. Each line starts with the stage and phase that printed it, as
error messages and logs name them: ``invokeModel`` is ``InvokeModelStage`` (a model call),
``executeTool`` is ``ExecuteToolStage`` (a tool call), and ``.Input`` / ``.Wrap`` / ``.Output``
are the phases, in the order they run.

Run: ``make demo`` (or ``python examples/quickstart.py``)
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator

from strands_middleware import (
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def label(where: str) -> str:
    """The tag a line starts with: the stage and phase that printed it (or who else did)."""
    return f"[{where}]".ljust(21)


@InvokeModelStage.input
def concise(context: InvokeModelContext) -> InvokeModelContext:
    where = label(InvokeModelStage.Input.where)
    print(f"{where} model call with {len(context.messages)} message(s); asking for brevity")
    return context.replace(system_prompt="Answer in one short sentence.")


@InvokeModelStage.wrap
async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    started = time.perf_counter()
    count = 0
    async for event in next_fn(context):
        count += 1
        yield event
    elapsed = (time.perf_counter() - started) * 1000
    where = label(InvokeModelStage.Wrap.where)
    print(f"{where} model call streamed {count} events in {elapsed:.1f} ms")


@ExecuteToolStage.output
def audit(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
    tool_result = result.value.tool_result
    text = tool_result["content"][0].get("text")
    where = label(ExecuteToolStage.Output.where)
    print(f"{where} tool {tool_result['toolUseId']} returned {tool_result['status']}: {text}")
    return result


def main() -> None:
    model = ScriptedModel(
        [
            tool_turn("add", {"a": 2, "b": 40}, tool_use_id="t1"),
            text_turn("2 + 40 is 42."),
        ]
    )
    agent = Agent(model=model, tools=[add], middleware=[concise, timing, audit])
    result = agent("What is 2 + 40?")
    print(f"{label('agent result')} stop_reason={result.stop_reason} answer={result}")
    print(f"{label('model request')} system prompt: {model.requests[-1].system_prompt!r}")


if __name__ == "__main__":
    main()
