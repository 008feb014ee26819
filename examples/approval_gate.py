"""A human approval gate: a tool call pauses on ``interrupt()`` and resumes with an answer.

The gate is a Wrap handler on ExecuteToolStage. It calls ``context.interrupt()`` before
``next_fn``: the first time, that raises, the run stops with ``stop_reason == "interrupt"`` and
the result lists what to answer. The caller resumes with one ``interruptResponse`` block per
interrupt; on that pass the same ``interrupt()`` call returns the answer, and the gate either
runs the tool or tells the model it was denied.

Run: ``python examples/approval_gate.py``
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    MiddlewareNext,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent, AgentResult
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"{path} deleted"


@ExecuteToolStage.wrap
async def require_approval(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    # Before next_fn: once the tool has run, pausing would make the resume run it again.
    answer = context.interrupt("approve-tool-call", reason=dict(context.tool_use))
    if answer.response != "approve":
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "error",
                "content": [{"text": f"A human denied this call: {answer.response}"}],
            }
        )
        return
    async for event in next_fn(context):
        yield event


def answers(result: AgentResult, response: str) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": response}}
        for interrupt in result.interrupts
    ]


def main() -> None:
    model = ScriptedModel(
        [
            tool_turn("delete_file", {"path": "/tmp/report.txt"}, tool_use_id="call-1"),
            text_turn("The report is gone."),
        ]
    )
    agent = Agent(model=model, tools=[delete_file], middleware=[require_approval])

    paused = agent("Please delete /tmp/report.txt")
    print(f"stop_reason={paused.stop_reason}")
    for interrupt in paused.interrupts:
        print(f"asks: {interrupt.name} about {interrupt.reason['input']}")

    done = agent(answers(paused, "approve"))
    print(f"stop_reason={done.stop_reason} answer={done}")


if __name__ == "__main__":
    main()
