"""A paused ``RunState`` resumed in another process: once, and a second time caught through Redis.

Without a store a middleware object recognises a second resume in its own process only; with
``store=`` the resumed run records each call it runs there, so a second resume of the same
paused round, by any process on that server, runs none of its calls.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

import asyncio
import json
import subprocess
import sys
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, RunState, function_tool, set_tracing_disabled
from agents.exceptions import UserError

from strands_middleware import ExecuteToolContext, ExecuteToolStage, MiddlewareNext, TypedEvent
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.content import Message
from strands_middleware.exceptions import InterruptResumeError
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

from ...stores.redis_server import RedisServer

set_tracing_disabled(True)
CONFIG = RunConfig(tracing_disabled=True)
ROOT = Path(__file__).resolve().parents[3]

deleted: list[str] = []


@function_tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    deleted.append(path)
    return f"deleted {path}"


@function_tool(needs_approval=True)
def wipe(path: str) -> str:
    """Wipe a disk, with the SDK's own approval.

    Args:
        path: The disk to wipe.
    """
    deleted.append(path)
    return f"wiped {path}"


@pytest.fixture
def prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def store(redis_server: RedisServer, prefix: str) -> AsyncIterator[RedisStore]:
    opened = RedisStore.from_url(redis_server.url, prefix=prefix, timeout=2.0)
    yield opened
    await opened.aclose()


@pytest.fixture(autouse=True)
def _clean() -> None:
    deleted.clear()


def agent_of(
    middleware: OpenAIAgentsMiddleware, script: ScriptedModel, tool: Any = delete_file
) -> Agent[Any]:
    return middleware.wrap(Agent("a", model=ScriptedOpenAIModel(script), tools=[tool]))


async def run(agent: Agent[Any], prompt: Any, *, streamed: bool) -> Any:
    if not streamed:
        return await Runner.run(agent, prompt, run_config=CONFIG)
    result = Runner.run_streamed(agent, prompt, run_config=CONFIG)
    async for _event in result.stream_events():
        pass
    return result


async def paused_json(store: RedisStore, tool: Any = delete_file) -> tuple[dict[str, Any], Any]:
    """A run paused on ``tool``'s call ``call_1``: its saved state, and what to answer it with."""
    middleware = OpenAIAgentsMiddleware(ToolApproval(), store=store)
    script = ScriptedModel([tool_turn(tool.name, {"path": "/a"}, "call_1")])
    before = list(deleted)
    paused = await run(agent_of(middleware, script, tool), "Delete /a", streamed=False)
    assert deleted == before and len(paused.interruptions) == 1
    answers = {i.id: "approve" for i in middleware.interrupts(paused)}
    return json.loads(json.dumps(paused.to_state().to_json())), answers


async def resume(
    store: RedisStore, saved: dict[str, Any], answers: Any, *, streamed: bool, tool: Any
) -> tuple[Any, ScriptedModel]:
    """Resume ``saved`` as a fresh process would: a new middleware object and agent."""
    middleware = OpenAIAgentsMiddleware(ToolApproval(), store=store)
    script = ScriptedModel([text_turn("Deleted.")])
    agent = agent_of(middleware, script, tool)
    state = await RunState.from_json(agent, saved)
    if answers:
        middleware.resume(state, answers)
    else:  # the SDK's own approval
        state.approve(state.get_interruptions()[0])
    return await run(agent, state, streamed=streamed), script


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("own_approval", [False, True])
async def test_a_second_resume_with_the_store_runs_no_tool_and_asks_no_model(
    store: RedisStore, streamed: bool, own_approval: bool
) -> None:
    tool = wipe if own_approval else delete_file
    saved, answers = await paused_json(store, tool)
    if own_approval:
        answers = {}  # paused by the SDK itself: answered with its approve()
    first, _ = await resume(store, saved, answers, streamed=streamed, tool=tool)
    assert (first.final_output, deleted) == ("Deleted.", ["/a"])
    with pytest.raises(UserError) as refused:
        await resume(store, saved, answers, streamed=streamed, tool=tool)
    cause = refused.value.__cause__
    assert isinstance(cause, InterruptResumeError), refused.value
    assert "already resumed" in str(cause) and "call_1" in str(cause)
    assert deleted == ["/a"]


async def test_a_new_pause_on_the_same_call_id_is_resumable_again(store: RedisStore) -> None:
    # A model that reuses call ids: each pause is a new paused round.
    for _round in range(2):
        saved, answers = await paused_json(store)
        done, _ = await resume(store, saved, answers, streamed=False, tool=delete_file)
        assert done.final_output == "Deleted."
    assert deleted == ["/a", "/a"]


async def test_without_a_store_another_middleware_object_does_not_know(
    store: RedisStore,
) -> None:
    # What the store is for: a fresh object (another process) resumes the same state again.
    middleware = OpenAIAgentsMiddleware(ToolApproval())
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "call_1")])
    paused = await run(agent_of(middleware, script), "Delete /a", streamed=False)
    saved = paused.to_state().to_json()
    answers = {i.id: "approve" for i in middleware.interrupts(paused)}
    for _time in range(2):
        fresh = OpenAIAgentsMiddleware(ToolApproval())
        agent = agent_of(fresh, ScriptedModel([text_turn("Deleted.")]))
        state = await RunState.from_json(agent, saved)
        fresh.resume(state, answers)
        await run(agent, state, streamed=False)
    assert deleted == ["/a", "/a"]


async def test_a_pause_the_store_never_saw_is_resumed_once(store: RedisStore) -> None:
    # Paused without the store (or its record expired): the first resume claims it.
    middleware = OpenAIAgentsMiddleware(ToolApproval())
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, "call_1")])
    paused = await run(agent_of(middleware, script), "Delete /a", streamed=False)
    saved = paused.to_state().to_json()
    answers = {i.id: "approve" for i in middleware.interrupts(paused)}
    done, _ = await resume(store, saved, answers, streamed=False, tool=delete_file)
    assert (done.final_output, deleted) == ("Deleted.", ["/a"])
    for _again in range(2):  # the claim's own record, then its version, refuse the next ones
        with pytest.raises(UserError, match="already resumed"):
            await resume(store, saved, answers, streamed=False, tool=delete_file)
    assert deleted == ["/a"]


def test_a_store_that_is_not_one_is_refused() -> None:
    with pytest.raises(TypeError, match="SnapshotStore"):
        not_a_store: Any = object()
        OpenAIAgentsMiddleware(store=not_a_store)
    with pytest.raises(ValueError, match="store_ttl"):
        OpenAIAgentsMiddleware(store_ttl=0)


def resume_in_this_process(url: str, prefix: str, path: str) -> None:
    """The child process: resume the saved run once; print what ran as JSON."""

    data = json.loads(Path(path).read_text())

    async def main() -> None:
        store = RedisStore.from_url(url, prefix=prefix, timeout=2.0)
        try:
            done, script = await resume(
                store, data["saved"], data["answers"], streamed=False, tool=delete_file
            )
        finally:
            await store.aclose()
        print(json.dumps([done.final_output, deleted, len(script.requests)]))

    asyncio.run(main())


async def test_a_state_resumed_in_another_process_is_refused_here(
    store: RedisStore, redis_server: RedisServer, prefix: str, tmp_path: Path
) -> None:
    saved, answers = await paused_json(store)
    path = tmp_path / "paused.json"
    path.write_text(json.dumps({"saved": saved, "answers": answers}))
    code = (
        "from tests.bridges.openai_agents.test_resumed_elsewhere import resume_in_this_process; "
        f"resume_in_this_process({redis_server.url!r}, {prefix!r}, {str(path)!r})"
    )
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OPENAI_AGENTS_DISABLE_TRACING": "1"},
    )
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout.strip().splitlines()[-1]) == ["Deleted.", ["/a"], 1]
    with pytest.raises(UserError) as refused:
        await resume(store, saved, answers, streamed=False, tool=delete_file)
    assert isinstance(refused.value.__cause__, InterruptResumeError)
    assert deleted == []  # it ran in the child, once


listed: list[str] = []


@function_tool
def list_files(path: str) -> str:
    """List a folder.

    Args:
        path: The folder.
    """
    listed.append(path)
    return "report.txt"


def gated_deletes() -> OpenAIAgentsMiddleware:
    """Middleware gating deletions only: the listing of a round runs before it pauses."""

    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if context.tool_use["name"] == "delete_file":
            context.interrupt("approve", reason=dict(context.tool_use["input"]))
        async for event in next_fn(context):
            yield event

    return OpenAIAgentsMiddleware(ExecuteToolStage.wrap(gate))


def resume_round_in_this_process(path: str) -> None:
    """The child process: resume a saved round of two calls; print what ran as JSON."""
    data = json.loads(Path(path).read_text())

    async def main() -> None:
        middleware = gated_deletes()
        script = ScriptedModel([text_turn("Deleted.")])
        agent = middleware.wrap(
            Agent("a", model=ScriptedOpenAIModel(script), tools=[list_files, delete_file])
        )
        state = await RunState.from_json(agent, data["saved"])
        middleware.resume(state, data["answers"])
        done = await Runner.run(agent, state, run_config=CONFIG)
        [request] = script.requests
        read = [
            block["toolResult"]["toolUseId"]
            for message in request.messages
            for block in message["content"]
            if "toolResult" in block
        ]
        print(json.dumps([done.final_output, deleted, listed, read]))

    asyncio.run(main())


async def test_a_round_resumed_in_another_process_runs_only_its_paused_call(
    tmp_path: Path,
) -> None:
    listed.clear()
    both: Message = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t1", "name": "list_files", "input": {"path": "/"}}},
            {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "/a"}}},
        ],
    }
    middleware = gated_deletes()
    agent = middleware.wrap(
        Agent("a", model=ScriptedOpenAIModel([both]), tools=[list_files, delete_file])
    )
    paused = await Runner.run(agent, "Clean up", run_config=CONFIG)
    assert (listed, deleted, len(paused.interruptions)) == (["/"], [], 1)
    answers = {i.id: "yes" for i in middleware.interrupts(paused)}
    path = tmp_path / "paused.json"
    path.write_text(json.dumps({"saved": paused.to_state().to_json(), "answers": answers}))
    code = (
        "from tests.bridges.openai_agents.test_resumed_elsewhere import "
        f"resume_round_in_this_process; resume_round_in_this_process({str(path)!r})"
    )
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OPENAI_AGENTS_DISABLE_TRACING": "1"},
    )
    assert child.returncode == 0, child.stderr
    # There: the model asked once, with both results; the listing not run again.
    assert json.loads(child.stdout.strip().splitlines()[-1]) == [
        "Deleted.",
        ["/a"],
        [],
        ["t1", "t2"],
    ]
