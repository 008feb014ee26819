"""A LangChain run's ``context=`` mapping starts the ``invocation_state`` its handlers share."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool as as_langchain_tool

from strands_middleware import ExecuteToolStage, InvokeModelContext, InvokeModelStage
from strands_middleware.bridges.langchain import LangChainBridge
from strands_middleware.bridges.langchain.testing import ScriptedChatModel
from strands_middleware.stages._execute_tool import ExecuteToolContext
from strands_middleware.testing import text_turn, tool_turn


@as_langchain_tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


async def test_the_runs_context_reaches_every_stage_and_stays_as_given() -> None:
    states: list[dict[str, Any]] = []

    @InvokeModelStage.input
    def on_model(context: InvokeModelContext) -> InvokeModelContext:
        states.append(context.invocation_state)
        context.invocation_state["written"] = True
        return context

    @ExecuteToolStage.input
    def on_tool(context: ExecuteToolContext) -> ExecuteToolContext:
        states.append(context.invocation_state)
        return context

    model = ScriptedChatModel([tool_turn("delete_file", {"path": "/a"}), text_turn("done")])
    bridge = LangChainBridge(on_model, on_tool)
    agent = create_agent(model, tools=[delete_file], middleware=[bridge])
    given = {"context_window": 32_000}
    await agent.ainvoke({"messages": [HumanMessage(content="go")]}, context=given)
    assert len(states) == 3 and all(state is states[0] for state in states)
    assert states[0] == {"context_window": 32_000, "written": True}
    assert given == {"context_window": 32_000}  # a handler's writes stay in the run's state
    # A run without a mapping for its context starts empty.
    states.clear()
    model = ScriptedChatModel([text_turn("done")])
    agent = create_agent(model, middleware=[LangChainBridge(on_model)])
    await agent.ainvoke({"messages": [HumanMessage(content="go")]})
    assert states == [{"written": True}]
