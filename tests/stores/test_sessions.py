"""SessionStore: a paused run saved by one worker is resumed, once, by whichever claims it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import strands
from strands import Snapshot

from strands_middleware.agent import Agent
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.bridges.strands.testing import ScriptedStrandsModel
from strands_middleware.catalog import ToolApproval
from strands_middleware.exceptions import InterruptStateDataError
from strands_middleware.stores import InMemoryStore, PausedRun, SessionStore
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import text_turn, tool_turn

from .agents import approvals, deleted, deletion_script, paused_agent_parts


@pytest.fixture(autouse=True)
def _forget_deletions() -> None:
    deleted.clear()


async def paused_agent() -> Agent:
    tools, middleware = paused_agent_parts()
    agent = Agent(model=deletion_script(), tools=tools, middleware=middleware)
    result = await agent.invoke_async("Delete the report")
    assert result.stop_reason == "interrupt"
    return agent


async def test_a_run_paused_on_one_agent_is_resumed_by_a_fresh_agent_that_claims_it(
    redis_store: RedisStore,
) -> None:
    sessions = SessionStore(redis_store, ttl=60)
    paused = await paused_agent()
    assert await sessions.save("run-1", PausedRun.of(paused)) == 1

    claimed = await sessions.claim("run-1")
    assert claimed is not None
    assert (claimed.session_id, claimed.version) == ("run-1", 1)
    run = claimed.run()
    # The claiming worker builds its agent with the same tools and middleware; the model is the
    # paused agent's, whose script goes on where it stopped.
    tools, middleware = paused_agent_parts()
    resumed = Agent(
        model=paused.model,
        tools=tools,
        middleware=middleware,
        messages=run.messages,
        interrupt_state=run.interrupt_state,
    )
    result = await resumed.invoke_async(approvals(list(run.interrupt_state.owed)))
    assert (result.stop_reason, str(result)) == ("end_turn", "Done.")
    assert deleted == ["/tmp/report.txt"]  # the tool ran, once; the model was not asked again
    assert [message["role"] for message in resumed.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert await sessions.claim("run-1") is None  # a second claimant gets nothing


async def test_a_saved_run_is_a_copy_the_paused_agent_can_no_longer_change() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=60)
    paused = await paused_agent()
    run = PausedRun.of(paused)
    paused.messages.clear()
    await sessions.save("run", run)
    claimed = await sessions.claim("run")
    assert claimed is not None and len(claimed.run().messages) == 2


async def test_an_answer_to_an_earlier_pause_claims_nothing() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=60)
    paused = await paused_agent()
    first = await sessions.save("run", PausedRun.of(paused))
    second = await sessions.save("run", PausedRun.of(paused))  # paused again, saved again
    assert (first, second) == (1, 2)
    assert await sessions.claim("run", version=first) is None
    claimed = await sessions.claim("run", version=second)
    assert claimed is not None and claimed.version == 2


async def test_of_many_workers_racing_for_one_session_exactly_one_gets_it(
    redis_store: RedisStore,
) -> None:
    sessions = SessionStore(redis_store, ttl=60)
    await sessions.save("run", PausedRun.of(await paused_agent()))
    claims = await asyncio.gather(*(sessions.claim("run") for _ in range(25)))
    assert sum(claim is not None for claim in claims) == 1


async def test_a_session_not_claimed_within_its_ttl_is_gone() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=0.05)
    await sessions.save("run", {"any": "data"})
    await asyncio.sleep(0.2)
    assert await sessions.claim("run") is None


async def test_only_a_paused_agent_can_be_saved_as_a_paused_run() -> None:
    agent = Agent(model=deletion_script())
    with pytest.raises(ValueError, match=r"PausedRun\.of\(agent\): the agent is not paused"):
        PausedRun.of(agent)


async def test_any_json_mapping_can_be_saved_and_is_read_back_as_data() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=60)
    await sessions.save("run", {"snapshot": {"bytes": b"\x00\x01", "n": [1, 2]}})
    claimed = await sessions.claim("run")
    assert claimed is not None
    assert claimed.data == {"snapshot": {"bytes": b"\x00\x01", "n": [1, 2]}}
    with pytest.raises(InterruptStateDataError, match=r"not a saved PausedRun"):
        claimed.run()


async def test_what_json_cannot_hold_is_refused_when_saving() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=60)
    with pytest.raises(TypeError, match=r"SessionStore cannot save session 'run': .*object"):
        await sessions.save("run", {"handle": object()})


async def test_stored_bytes_that_are_not_a_session_are_reported(redis_store: RedisStore) -> None:
    await redis_store.snapshot_put("run", b"\x80\x04not json", 60)
    with pytest.raises(InterruptStateDataError, match=r"session 'run' \(version 1\) is not JSON"):
        await SessionStore(redis_store, ttl=60).claim("run")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"store": object(), "ttl": 1}, TypeError, r"SessionStore\(store=\.\.\.\) takes a"),
        ({"store": InMemoryStore(), "ttl": 0}, ValueError, r"SessionStore\(ttl=\.\.\.\) must be"),
        ({"store": InMemoryStore(), "ttl": True}, ValueError, r"SessionStore\(ttl=\.\.\.\)"),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        SessionStore(**kwargs)


async def test_a_bad_session_id_or_version_is_refused() -> None:
    sessions = SessionStore(InMemoryStore(), ttl=60)
    with pytest.raises(TypeError, match="a session id is a non-empty str"):
        await sessions.claim("")
    with pytest.raises(ValueError, match=r"claim\(version=\.\.\.\) must be a version"):
        await sessions.claim("run", version=0)


# ---- a strands.Agent, through strands' own snapshot API ----------------------------------------


def remove(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    deleted.append(path)
    return f"deleted {path}"


def strands_agent(model: ScriptedStrandsModel) -> strands.Agent:
    agent = strands.Agent(
        model=model,
        tools=[strands.tool(remove)],  # pyright: ignore[reportUnknownMemberType]
        callback_handler=None,
    )
    StrandsBridge.of(agent).use(ToolApproval(tools=["remove"]))
    return agent


async def test_a_paused_strands_agent_is_saved_as_a_snapshot_and_resumed_elsewhere(
    redis_store: RedisStore,
) -> None:
    sessions = SessionStore(redis_store, ttl=60)
    model = ScriptedStrandsModel(
        [tool_turn("remove", {"path": "/tmp/report.txt"}), text_turn("Done.")]
    )
    paused = strands_agent(model)
    result = await paused.invoke_async("Delete the report")
    assert result.stop_reason == "interrupt"
    answers = approvals(list(result.interrupts or []))
    await sessions.save("run", paused.take_snapshot(preset="session").to_dict())

    claimed = await sessions.claim("run")
    assert claimed is not None
    resumed = strands_agent(model)  # a fresh agent on the claiming worker
    resumed.load_snapshot(Snapshot.from_dict(claimed.data))
    done = await resumed.invoke_async(answers)
    assert (done.stop_reason, str(done).strip()) == ("end_turn", "Done.")
    assert deleted == ["/tmp/report.txt"]
    assert len(model.script.requests) == 2  # the resume did not ask the model again
    assert await sessions.claim("run") is None


async def test_a_paused_run_lists_the_interrupts_it_waits_on() -> None:
    paused = await paused_agent()
    owed = list(paused.interrupt_state.owed)
    sessions = SessionStore(InMemoryStore(), ttl=60)
    await sessions.save("run", PausedRun.of(paused))
    claimed = await sessions.claim("run")
    assert claimed is not None
    run = claimed.run()
    assert [(i.id, i.name, i.reason) for i in run.interrupts] == [
        (i.id, i.name, i.reason) for i in owed
    ]
    assert run.interrupts  # the deletion is waiting for a human
    resumed = Agent(
        model=paused.model,
        tools=paused_agent_parts()[0],
        middleware=paused_agent_parts()[1],
        messages=run.messages,
        interrupt_state=run.interrupt_state,
    )
    result = await resumed.invoke_async(approvals(list(run.interrupts)))
    assert result.stop_reason == "end_turn"
