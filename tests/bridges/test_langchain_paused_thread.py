"""A new prompt on a LangChain thread paused on this library's interrupts.

Through `LangChainBridge.guard_paused_threads` it is refused with this library's error, and the
thread is left exactly as it was (every row the checkpointer holds), still answerable; checked
under each of LangGraph's durability modes, with the in-memory and the sqlite checkpointer.
Without the guard, LangGraph's own behaviour is what the docs say it is.
"""

from __future__ import annotations

import asyncio
import pickle
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool as as_langchain_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import interrupt

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


def prompt(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


@asynccontextmanager
async def checkpointer(kind: str, folder: Path) -> AsyncIterator[tuple[Any, Callable[[], Any]]]:
    """A checkpointer of ``kind`` and a function returning everything it holds."""
    if kind == "memory":
        memory = InMemorySaver()
        yield (
            memory,
            lambda: pickle.dumps(
                (
                    sorted((key, sorted(spaces.items())) for key, spaces in memory.storage.items()),
                    sorted(memory.writes.items()),
                    sorted(memory.blobs.items()),
                )
            ),
        )
        return
    path = str(folder / "checkpoints.sqlite")

    def rows() -> Any:
        with closing(sqlite3.connect(path)) as connection:
            return [
                list(connection.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4"))
                for table in ("checkpoints", "writes")
            ]

    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        yield saver, rows


def gated(script: ScriptedModel, bridge: LangChainBridge, saver: BaseCheckpointSaver[Any]) -> Any:
    return create_agent(
        ScriptedChatModel(script),
        tools=[delete_file],
        middleware=[bridge],
        checkpointer=bridge.guard_paused_threads(saver),
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
async def test_a_new_prompt_on_a_paused_thread_is_refused_and_the_thread_is_unchanged(
    durability: str, kind: str, tmp_path: Path
) -> None:
    ran.clear()
    script = ScriptedModel(
        [
            tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
            text_turn("gone"),
            text_turn("anything else?"),
        ]
    )
    bridge = LangChainBridge(ToolApproval())
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with checkpointer(kind, tmp_path) as (saver, held):
        agent = gated(script, bridge, saver)
        paused = await agent.ainvoke(prompt("clean"), config, durability=durability)
        owed = interrupts_of(paused)
        before = held()
        with pytest.raises(InterruptResponseFormatError) as refused:
            await agent.ainvoke(prompt("never mind"), config, durability=durability)
        assert isinstance(refused.value, InterruptResumeError)
        assert refused.value.interrupt_ids == tuple(i.id for i in owed)
        message = str(refused.value)
        assert "paused on 1 interrupt(s)" in message and "resume_command(" in message
        assert "new thread_id" in message
        assert held() == before  # not a row more: no checkpoint, no write
        assert len(script.requests) == 1  # the model was not asked
        assert ran == []
        snapshot = await agent.aget_state(config)
        assert interrupts_of(snapshot) == owed
        answers = {i.id: "approve" for i in owed}
        done = await agent.ainvoke(
            resume_command(snapshot, answers, middleware=bridge), config, durability=durability
        )
        assert done["messages"][-1].content == "gone"
        assert ran == ["/a"]
        # A stale resume is still refused, and a new prompt is answered now the thread is free.
        with pytest.raises(InterruptResumeError, match="not paused on any interrupt"):
            resume_command(await agent.aget_state(config), answers)
        fresh = await agent.ainvoke(prompt("thanks"), config, durability=durability)
        assert fresh["messages"][-1].content == "anything else?"
        assert ran == ["/a"]


@pytest.mark.parametrize("how", ["invoke", "astream"])
async def test_a_synchronous_or_streamed_new_prompt_is_refused_the_same_way(
    how: str, tmp_path: Path
) -> None:
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1")])
    bridge = LangChainBridge(ToolApproval())
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with checkpointer("memory", tmp_path) as (saver, held):
        agent = gated(script, bridge, saver)
        owed = interrupts_of(await agent.ainvoke(prompt("clean"), config))
        before = held()
        with pytest.raises(InterruptResponseFormatError):
            if how == "invoke":  # the checkpointer's synchronous methods
                await asyncio.to_thread(agent.invoke, prompt("never mind"), config)
            else:
                async for _ in agent.astream(prompt("never mind"), config, stream_mode="messages"):
                    pass
        assert held() == before
        assert len(script.requests) == 1
        assert interrupts_of(await agent.aget_state(config)) == owed


async def test_a_resume_that_pauses_again_is_not_refused_nor_a_prompt_once_answered() -> None:
    ran.clear()
    script = ScriptedModel(
        [
            tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
            text_turn("gone"),
            text_turn("anything else?"),
        ]
    )
    bridge = LangChainBridge(ToolApproval(), ToolApproval(name="second-look"))
    agent = gated(script, bridge, InMemorySaver())
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    await agent.ainvoke(prompt("clean"), config)
    for name in ("approve-tool-call", "second-look"):
        paused = await agent.aget_state(config)
        [asked] = interrupts_of(paused)
        assert asked.name == name
        done = await agent.ainvoke(resume_command(paused, {asked.id: "approve"}), config)
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
    fresh = await agent.ainvoke(prompt("thanks"), config)
    assert fresh["messages"][-1].content == "anything else?"


async def test_a_prompt_from_an_addressed_paused_checkpoint_is_refused_too() -> None:
    """A run from a checkpoint named by its id (a fork) on top of a paused one: the same
    refusal, and the thread keeps its head."""
    ran.clear()
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1")])
    bridge = LangChainBridge(ToolApproval())
    saver = InMemorySaver()
    agent = gated(script, bridge, saver)
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    await agent.ainvoke(prompt("clean"), config)
    paused = await agent.aget_state(config)
    with pytest.raises(InterruptResponseFormatError):
        await agent.ainvoke(prompt("never mind"), paused.config)
    assert (await agent.aget_state(config)).config == paused.config
    assert len(script.requests) == 1


async def test_a_paused_run_left_on_purpose_lets_the_next_prompt_through() -> None:
    """Recording the paused call's result with ``aupdate_state`` leaves the run: not a prompt,
    so the guard lets it through, and the next prompt is answered."""
    ran.clear()
    script = ScriptedModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("something else")]
    )
    bridge = LangChainBridge(ToolApproval())
    agent = gated(script, bridge, InMemorySaver())
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    await agent.ainvoke(prompt("clean"), config)
    left = ToolMessage("not run: the user moved on", tool_call_id="t1", status="error")
    await agent.aupdate_state(config, {"messages": [left]}, as_node="tools")
    assert interrupts_of(await agent.aget_state(config)) == []
    done = await agent.ainvoke(prompt("do something else"), config)
    assert done["messages"][-1].content == "something else"
    assert ran == []


async def test_a_thread_paused_on_another_interrupt_is_left_to_langgraph() -> None:
    """The guard refuses only for this library's interrupts: one a tool asked by itself keeps
    LangGraph's behaviour (the new prompt starts over)."""
    ran.clear()
    script = ScriptedModel(
        [tool_turn("ask_first", {"path": "/b"}, tool_use_id="t1"), text_turn("started over")]
    )
    bridge = LangChainBridge()
    agent: Any = create_agent(
        ScriptedChatModel(script),
        tools=[ask_first],
        middleware=[bridge],
        checkpointer=bridge.guard_paused_threads(InMemorySaver()),
    )
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    paused = await agent.ainvoke(prompt("clean"), config)
    assert paused["__interrupt__"]
    done = await agent.ainvoke(prompt("never mind"), config)
    assert done["messages"][-1].content == "started over"
    assert interrupts_of(await agent.aget_state(config)) == []


async def test_without_the_guard_the_thread_takes_the_prompt_and_the_bridge_stops_the_run() -> None:
    """What the docs say of a checkpointer given as it is: LangGraph saves the prompt and drops
    the pending approval; the bridge refuses the run before the model is asked (the refusal
    itself is tested in test_langchain_dropped_pause.py)."""
    ran.clear()
    script = ScriptedModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("other thing")]
    )
    agent: Any = create_agent(
        ScriptedChatModel(script),
        tools=[delete_file],
        middleware=[LangChainBridge(ToolApproval())],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": uuid.uuid4().hex}}
    await agent.ainvoke(prompt("clean"), config)
    with pytest.raises(InterruptResponseFormatError, match="already saved the prompt"):
        await agent.ainvoke(prompt("never mind"), config)
    now = await agent.aget_state(config)
    assert interrupts_of(now) == []  # the approval is gone from the thread's head
    assert now.values["messages"][-1].content == "never mind"
    assert len(script.requests) == 1
    assert ran == []


def test_a_narrowed_serialiser_reaches_the_wrapped_checkpointer() -> None:
    """LangGraph narrows a checkpointer's serialiser as it compiles a graph (``with_allowlist``):
    the wrapped checkpointer, which serialises, gets it, and the guard keeps its records."""
    allowed = [("my_package", "Other")]
    saver = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=allowed))
    guard: Any = LangChainBridge().guard_paused_threads(saver)
    narrowed: Any = guard.with_allowlist([("my_package", "MyState")])
    assert type(narrowed) is type(guard)
    assert narrowed.saver is not saver and narrowed.saver.storage is saver.storage
    assert narrowed.serde is narrowed.saver.serde
    assert narrowed.serde is not saver.serde  # the narrowed one
    # The bridge reads the records the narrowed guard keeps: one set, shared.
    assert narrowed._records is guard._records
