"""Redis stops answering mid-run: the documented error, within the timeout, and no lost message."""

from __future__ import annotations

import time
from typing import Any

import pytest

from strands_middleware.agent import Agent, BeforeModelCallEvent
from strands_middleware.catalog import CallLimit, ConcurrencyLimit, RateLimit
from strands_middleware.exceptions import StoreError, StoreWarning
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import text_turn, tool_turn
from strands_middleware.tools import tool

from .agents import ConfiguredModel
from .redis_server import RedisServer

TIMEOUT = 0.5


def agent_on(store: RedisStore, server: RedisServer, outage: str, **options: Any) -> Agent:
    """An agent whose tool takes the server down (``"freeze"`` or ``"stop"``) while it runs."""

    @tool
    def archive(path: str) -> str:
        """Archive a file."""
        server.pause() if outage == "freeze" else server.stop()
        return f"archived {path}"

    return Agent(
        model=ConfiguredModel(
            [tool_turn("archive", {"path": "/tmp/report.txt"}), text_turn("Archived.")]
        ),
        tools=[archive],
        middleware=[
            ConcurrencyLimit(limit=4, store=store, name="model", lease=10, **options),
            RateLimit(rate=100, burst=10, store=store, name="model", **options),
            CallLimit(model_calls=10, store=store, key="agent", **options),
        ],
    )


def roles_and_blocks(agent: Agent) -> list[tuple[str, list[str]]]:
    return [
        (message["role"], [next(iter(block)) for block in message["content"]])
        for message in agent.messages
    ]


async def test_a_frozen_server_fails_the_next_model_call_within_the_timeout_and_keeps_history(
    private_redis: RedisServer, prefix: str, figures: list[str]
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=TIMEOUT)
    agent = agent_on(store, private_redis, "freeze")
    asked: list[float] = []
    agent.add_hook(BeforeModelCallEvent, lambda event: asked.append(time.monotonic()))
    try:
        with pytest.raises(StoreError) as error:
            await agent.invoke_async("Archive the report")
        failed = time.monotonic() - asked[-1]
    finally:
        private_redis.resume()
    assert str(error.value).startswith(
        f"ConcurrencyLimit(name='model') could not use its store: RedisStore({private_redis.url}, "
        f"prefix='{prefix}') did not answer slot_acquire within {TIMEOUT:g} s. To let calls "
        "through while the store is down, pass on_store_error='allow'"
    )
    figures.append(
        f"store outage: StoreError {failed:.3f} s after the model call began "
        f"(RedisStore timeout {TIMEOUT:g} s)"
    )
    assert failed < TIMEOUT + 2  # bounded by the timeout, with room for a loaded machine
    # Nothing the agent had is lost: the prompt, the tool call and its result.
    assert roles_and_blocks(agent) == [
        ("user", ["text"]),
        ("assistant", ["toolUse"]),
        ("user", ["toolResult"]),
    ]
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [
        {"text": "archived /tmp/report.txt"}
    ]
    # With the server back, the same agent goes on from where it stopped.
    result = await agent.invoke_async("Go on")
    assert str(result) == "Archived."
    await store.aclose()


async def test_a_stopped_server_fails_at_once_with_the_cause(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=TIMEOUT)
    agent = agent_on(store, private_redis, "stop")
    with pytest.raises(StoreError, match=r"could not slot_acquire: ConnectionError"):
        await agent.invoke_async("Archive the report")
    assert len(agent.messages) == 3
    await store.aclose()


async def test_failing_open_finishes_the_run_without_the_store(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=TIMEOUT)
    agent = agent_on(store, private_redis, "stop", on_store_error="allow")
    with pytest.warns(StoreWarning, match=r"let a call through without its store") as caught:
        result = await agent.invoke_async("Archive the report")
    assert str(result) == "Archived."
    assert {str(warning.message).split(" ")[0] for warning in caught} >= {
        "ConcurrencyLimit(name='model')",
        "RateLimit(name='model')",
        "CallLimit(key='agent')",
    }
    await store.aclose()
