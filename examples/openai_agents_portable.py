"""One middleware object, unchanged, on the reference agent and on the OpenAI Agents SDK.

The same three objects (a Wrap handler logging every model call, ``ToolApproval`` on
``delete_file``, a ``Cache``) are registered on a reference `Agent` and given to an
`OpenAIAgentsMiddleware` wrapping an SDK ``Agent``. Each host plays the same script (no network,
the SDK's tracing off): it pauses before the delete, resumes with the same answer blocks, and
prints the same lines. On the SDK the paused run is saved with ``RunState.to_json()`` and
resumed from JSON in a fresh agent, as another process would.

Run: ``python examples/openai_agents_portable.py`` (needs the openai-agents extra)
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator
from typing import Any

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # offline: no trace export

from agents import Agent as SDKAgent
from agents import Runner, RunState, function_tool, set_tracing_disabled

from strands_middleware import InvokeModelContext, InvokeModelStage, ModelStopReason, TypedEvent
from strands_middleware.agent import Agent
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import Cache, ToolApproval
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

set_tracing_disabled(True)

DELETED: list[str] = []
LOG: list[str] = []


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    DELETED.append(path)
    return f"deleted {path}"


@InvokeModelStage.wrap
async def log_calls(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        if isinstance(event, ModelStopReason):
            LOG.append(f"{len(context.messages)} messages -> {event.stop_reason}")
        yield event


# The objects both hosts run: built once.
STACK: list[Any] = [log_calls, ToolApproval(tools=["delete_file"]), Cache()]


def script() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_turn("delete_file", {"path": "/tmp/report.txt"}, tool_use_id="call-1"),
            text_turn("The report is gone."),
        ]
    )


def answers(ids: list[str]) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": i, "response": "approve"}} for i in ids]


async def on_reference_agent() -> None:
    agent = Agent(model=script(), tools=[tool(delete_file)], middleware=STACK)
    paused = await agent.invoke_async("Delete /tmp/report.txt")
    print(f"[reference] paused: asks {[i.name for i in paused.interrupts]}")
    done = await agent.invoke_async(answers([i.id for i in paused.interrupts]))
    print(f"[reference] done: {str(done)!r}, deleted {DELETED}")


async def on_openai_agents_sdk() -> None:
    played = script()
    middleware = OpenAIAgentsMiddleware(*STACK)
    sdk_tool = function_tool(delete_file)
    agent = middleware.wrap(
        SDKAgent("assistant", model=ScriptedOpenAIModel(played), tools=[sdk_tool])
    )
    paused = await Runner.run(agent, "Delete /tmp/report.txt")
    owed = middleware.interrupts(paused)
    print(f"[openai-agents] paused: asks {[i.name for i in owed]}")
    saved = json.dumps(paused.to_state().to_json())

    # A fresh agent (as in another process) resumes from the saved JSON.
    fresh = OpenAIAgentsMiddleware(*STACK)
    agent = fresh.wrap(SDKAgent("assistant", model=ScriptedOpenAIModel(played), tools=[sdk_tool]))
    state = await RunState.from_json(agent, json.loads(saved))
    fresh.resume(state, answers([i.id for i in owed]))
    done = await Runner.run(agent, state)
    print(f"[openai-agents] done: {done.final_output!r}, deleted {DELETED}")


async def main() -> None:
    for host in (on_reference_agent, on_openai_agents_sdk):
        DELETED.clear()
        LOG.clear()
        await host()
        print(f"  model calls logged: {LOG}")


if __name__ == "__main__":
    asyncio.run(main())
