"""A new prompt on a paused LangChain thread whose checkpointer has no guard.

LangGraph saves the prompt and drops the calls the bridge paused before any node runs; the
bridge then refuses the run at its model call, before the model is asked, naming the paused
calls and the paused checkpoint, from which they can still be answered or left. Driven through
``create_agent`` with ``InMemorySaver`` and `ToolApproval`, with this library's scripted chat
model and with a plain ``BaseChatModel`` written here.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.tools import tool as as_langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt
from pydantic import Field

from strands_middleware.bridges.langchain import LangChainBridge, interrupts_of, resume_command
from strands_middleware.bridges.langchain.testing import ScriptedChatModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.exceptions import InterruptResponseFormatError, InterruptResumeError
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

ran: list[str] = []


@as_langchain_tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


@as_langchain_tool
def ask_first(path: str) -> str:
    """Delete a file once a human says so (LangGraph's own interrupt, not this library's)."""
    if interrupt(f"delete {path}?") != "yes":
        return "kept"
    ran.append(path)
    return f"deleted {path}"


class TurnModel(BaseChatModel):
    """A chat model of LangChain's own kind: answers each call with the next of ``turns``
    (text, or ``(tool name, args, call id)`` for a tool call); ``log`` notes each call."""

    turns: list[Any]
    log: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "turn-model"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self.bind(**kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = self.turns[len(self.log)]
        self.log.append(list(messages))
        if isinstance(turn, str):
            reply = AIMessage(content=turn)
        else:
            name, args, call_id = turn
            reply = AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])
        return ChatResult(generations=[ChatGeneration(message=reply)])


class Model:
    """One of the two chat models, with how many calls it was asked."""

    def __init__(self, kind: str, turns: list[Any]) -> None:
        if kind == "scripted":
            self.script = ScriptedModel(
                [
                    tool_turn(turn[0], turn[1], tool_use_id=turn[2])
                    if isinstance(turn, tuple)
                    else text_turn(turn)
                    for turn in turns
                ]
            )
            self.chat: BaseChatModel = ScriptedChatModel(self.script)
        else:
            self.chat = TurnModel(turns=turns)
        self.kind = kind

    @property
    def asked(self) -> int:
        if self.kind == "scripted":
            return len(self.script.requests)
        chat: Any = self.chat
        return len(chat.log)


def prompt(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def agent_of(model: Model, bridge: LangChainBridge, saver: InMemorySaver, **kwargs: Any) -> Any:
    return create_agent(
        model.chat,
        tools=kwargs.pop("tools", [delete_file]),
        middleware=[*kwargs.pop("middleware", []), bridge],
        checkpointer=saver,
    )


async def send(agent: Any, inputs: Any, config: Any, *, sync: bool) -> Any:
    if sync:
        return await asyncio.to_thread(agent.invoke, inputs, config)
    return await agent.ainvoke(inputs, config)


def thread() -> Any:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


GONE = [("delete_file", {"path": "/a"}, "t1"), "gone", "anything else?"]


def assert_refusal(refused: InterruptResponseFormatError, paused: Any) -> None:
    assert isinstance(refused, InterruptResumeError)
    assert refused.interrupt_ids == tuple(i.id for i in interrupts_of(paused))
    message = str(refused)
    assert "paused on 1 interrupt(s) waiting for an answer: 'approve-tool-call'" in message
    assert "tool call(s) 'delete_file' (t1)" in message
    assert "already saved the prompt on the thread" in message
    assert "before the model is asked" in message
    assert repr(dict(paused.config["configurable"])) in message  # the paused checkpoint
    assert "resume_command(paused, answers, middleware=bridge), paused.config" in message
    assert "as_node='tools'" in message and "new thread_id" in message
    assert "guard_paused_threads(checkpointer)" in message


@pytest.mark.parametrize("kind", ["scripted", "native"])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_a_new_prompt_on_a_paused_thread_is_refused_before_the_model_and_can_be_answered(
    durability: str, kind: str
) -> None:
    ran.clear()
    model = Model(kind, GONE)
    bridge = LangChainBridge(ToolApproval())
    agent = agent_of(model, bridge, InMemorySaver())
    config = thread()
    await agent.ainvoke(prompt("clean"), config, durability=durability)
    paused = await agent.aget_state(config)
    for _ in range(2):  # refused again while the calls stay unanswered
        with pytest.raises(InterruptResponseFormatError) as refused:
            await agent.ainvoke(prompt("never mind"), config, durability=durability)
        assert_refusal(refused.value, paused)
    assert model.asked == 1  # the model was not asked past the paused call
    assert ran == []
    # Without the guard the thread took the prompts, as the error says.
    taken = (await agent.aget_state(config)).values["messages"]
    assert [m.content for m in taken if isinstance(m, HumanMessage)][-1] == "never mind"
    # The paused checkpoint still answers: the resume runs the approved call.
    snapshot = await agent.aget_state(paused.config)
    answers = {i.id: "approve" for i in interrupts_of(snapshot)}
    done = await agent.ainvoke(
        resume_command(snapshot, answers, middleware=bridge), snapshot.config, durability=durability
    )
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
    fresh = await agent.ainvoke(prompt("thanks"), config, durability=durability)
    assert fresh["messages"][-1].content == "anything else?"
    assert model.asked == 3


@pytest.mark.parametrize("kind", ["scripted", "native"])
@pytest.mark.parametrize("how", ["invoke", "stream", "astream"])
async def test_a_synchronous_or_streamed_new_prompt_is_refused_the_same_way(
    how: str, kind: str
) -> None:
    ran.clear()
    model = Model(kind, GONE)
    bridge = LangChainBridge(ToolApproval())
    agent = agent_of(model, bridge, InMemorySaver())
    config = thread()
    await agent.ainvoke(prompt("clean"), config)
    paused = await agent.aget_state(config)
    with pytest.raises(InterruptResponseFormatError) as refused:
        if how == "invoke":
            await asyncio.to_thread(agent.invoke, prompt("never mind"), config)
        elif how == "stream":
            await asyncio.to_thread(list, agent.stream(prompt("never mind"), config))
        else:
            async for _ in agent.astream(prompt("never mind"), config, stream_mode="messages"):
                pass
    assert_refusal(refused.value, paused)
    assert model.asked == 1
    assert ran == []


async def test_a_thread_paused_by_another_bridge_object_is_refused_from_its_checkpoints() -> None:
    """As in another process: a bridge that never paused the thread finds the pause in the
    thread's checkpoints (an async node is given the checkpointer from Python 3.11 on)."""
    ran.clear()
    saver = InMemorySaver()
    config = thread()
    first = Model("scripted", GONE)
    await agent_of(first, LangChainBridge(ToolApproval()), saver).ainvoke(prompt("clean"), config)
    later = Model("native", GONE[1:])
    bridge = LangChainBridge(ToolApproval())
    agent = agent_of(later, bridge, saver)
    paused = await agent.aget_state(config)
    if sys.version_info < (3, 11):
        # What the docs say: on 3.10 only the process that paused the thread knows its
        # checkpointer at the model call, so LangGraph's behaviour stands here.
        done = await agent.ainvoke(prompt("never mind"), config)
        assert done["messages"][-1].content == "gone"
        return
    with pytest.raises(InterruptResponseFormatError) as refused:
        await agent.ainvoke(prompt("never mind"), config)
    assert_refusal(refused.value, paused)
    # The synchronous path reads the same checkpoints.
    with pytest.raises(InterruptResponseFormatError):
        await asyncio.to_thread(agent.invoke, prompt("never mind"), config)
    assert later.asked == 0
    answers = {i.id: "deny" for i in interrupts_of(paused)}
    done = await agent.ainvoke(resume_command(paused, answers, middleware=bridge), paused.config)
    assert done["messages"][-1].content == "gone"
    assert ran == []  # denied: the tool did not run


async def test_paused_calls_left_with_a_result_where_they_paused_let_the_prompt_through() -> None:
    ran.clear()
    model = Model("scripted", [("delete_file", {"path": "/a"}, "t1"), "something else"])
    agent = agent_of(model, LangChainBridge(ToolApproval()), InMemorySaver())
    config = thread()
    await agent.ainvoke(prompt("clean"), config)
    paused = await agent.aget_state(config)
    with pytest.raises(InterruptResponseFormatError):
        await agent.ainvoke(prompt("do something else"), config)
    left = ToolMessage("not run: the user moved on", tool_call_id="t1", status="error")
    await agent.aupdate_state(paused.config, {"messages": [left]}, as_node="tools")
    done = await agent.ainvoke(prompt("do something else"), config)
    assert done["messages"][-1].content == "something else"
    assert [m.type for m in done["messages"]] == ["human", "ai", "tool", "human", "ai"]
    assert ran == []


async def test_calls_paused_by_langchain_or_a_tool_itself_are_left_to_langgraph() -> None:
    """Only this library's pauses are refused: a new prompt past LangChain's own
    ``HumanInTheLoopMiddleware``, or a tool's own ``interrupt()``, starts over as LangGraph
    makes it, while the bridge's own pause in the same agent is refused."""
    ran.clear()
    model = Model(
        "native",
        [
            ("ask_first", {"path": "/b"}, "t1"),
            "started over",
            ("review_me", {"path": "/c"}, "t2"),
            "started over again",
            ("delete_file", {"path": "/a"}, "t3"),
        ],
    )

    @as_langchain_tool
    def review_me(path: str) -> str:
        """Delete a file once LangChain's review says so."""
        ran.append(path)
        return f"deleted {path}"

    bridge = LangChainBridge(ToolApproval(tools={"delete_file"}))
    agent = agent_of(
        model,
        bridge,
        InMemorySaver(),
        tools=[delete_file, ask_first, review_me],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"review_me": True})],
    )
    # LangChain's review runs synchronously here: its interrupt() needs the run's config,
    # which LangGraph gives an async hook only from Python 3.11 on.
    for ending, sync in (("started over", False), ("started over again", True)):
        config = thread()
        paused = await send(agent, prompt("clean"), config, sync=sync)
        assert paused["__interrupt__"]
        done = await send(agent, prompt("never mind"), config, sync=sync)
        assert done["messages"][-1].content == ending
    config = thread()
    await agent.ainvoke(prompt("clean"), config)
    with pytest.raises(InterruptResponseFormatError, match=r"'delete_file' \(t3\)"):
        await agent.ainvoke(prompt("never mind"), config)
    assert model.asked == 5
    assert ran == []


async def test_a_resume_after_a_pause_answered_in_turn_is_not_refused() -> None:
    """Tool calls answered by their results (a resume, a second gate) are not unanswered."""
    ran.clear()
    model = Model("native", GONE)
    bridge = LangChainBridge(ToolApproval(), ToolApproval(name="second-look"))
    agent = agent_of(model, bridge, InMemorySaver())
    config = thread()
    await agent.ainvoke(prompt("clean"), config)
    paused = await agent.aget_state(config)
    with pytest.raises(InterruptResponseFormatError):
        await agent.ainvoke(prompt("never mind"), config)
    for name in ("approve-tool-call", "second-look"):
        [asked] = interrupts_of(paused)
        assert asked.name == name
        done = await agent.ainvoke(resume_command(paused, {asked.id: "approve"}), paused.config)
        # A resume that pauses again stays on the paused checkpoint, a fork of the thread's
        # latest (the refused run): read it where it is.
        paused = await agent.aget_state(paused.config)
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
    assert (await agent.aget_state(config)).values["messages"][-1].content == "gone"
