"""The catalog's shared items given a store: names, shared state, encoding and store failures.

Two item objects on one store stand for two processes: they share nothing but the store.
"""

from __future__ import annotations

import asyncio
import pickle
import warnings
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog import (
    SUMMARY_HEADER,
    Cache,
    CallLimit,
    CallLimitExceeded,
    ConcurrencyLimit,
    RateLimit,
    Summarize,
    UsageBudget,
    UsageBudgetExceeded,
)
from strands_middleware.catalog._result_codec import decode_result, encode_result
from strands_middleware.content import Usage
from strands_middleware.exceptions import StoreError, StoreWarning
from strands_middleware.stores import InMemoryStore
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

from .agents import ConfiguredModel, delete_file, deleted
from .redis_server import RedisServer

USAGE: Usage = {"inputTokens": 6, "outputTokens": 4, "totalTokens": 10}


def model_context(text: str = "hi", agent: object = None) -> InvokeModelContext:
    return InvokeModelContext(
        agent=agent,
        messages=[{"role": "user", "content": [{"text": text}]}],
        system_prompt=None,
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=ConfiguredModel([]),
    )


def tool_context(name: str = "search", tool_use_id: str = "t1") -> ExecuteToolContext:
    return ExecuteToolContext(
        agent=None,
        tool=None,
        tool_use={"toolUseId": tool_use_id, "name": name, "input": {"q": "x"}},
        invocation_state={},
        cancel_signal=None,
    )


def stop(text: str = "ok") -> ModelStopReason:
    return ModelStopReason(
        "end_turn", {"role": "assistant", "content": [{"text": text}]}, USAGE, {"latencyMs": 1}
    )


class Terminal:
    """A model terminal that counts its calls and the calls running at once."""

    def __init__(self, pause: float = 0.0) -> None:
        self.calls = 0
        self.running = 0
        self.most_running = 0
        self.pause = pause

    async def __call__(self, context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        self.calls += 1
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await asyncio.sleep(self.pause)
            yield stop()
        finally:
            self.running -= 1


async def answer_tool(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
    yield ToolResultEvent(
        {
            "toolUseId": context.tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": "r"}],
        }
    )


def registry_with(*middleware: Any) -> MiddlewareRegistry:
    registry = MiddlewareRegistry()
    registry.use(*middleware)
    return registry


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda s: RateLimit(rate=1, burst=1, store=s),
            ValueError,
            r"RateLimit\(store=\.\.\.\) needs name=\.\.\.: a stable name every process uses for "
            r"the bucket \(object identity cannot cross processes\)",
        ),
        (
            lambda s: ConcurrencyLimit(limit=1, store=s),
            ValueError,
            r"ConcurrencyLimit\(store=\.\.\.\) needs name=\.\.\.",
        ),
        (
            lambda s: UsageBudget(max_total_tokens=10, store=s),
            ValueError,
            r"UsageBudget\(store=\.\.\.\) needs key=\.\.\.",
        ),
        (
            lambda s: CallLimit(model_calls=1, store=s),
            ValueError,
            r"CallLimit\(store=\.\.\.\) needs key=\.\.\.",
        ),
        (
            lambda s: RateLimit(rate=1, burst=1, name="x"),
            ValueError,
            r"RateLimit\(name=\.\.\.\) names the bucket in a store: pass store=\.\.\. as well",
        ),
        (
            lambda s: CallLimit(model_calls=1, key="x"),
            ValueError,
            r"CallLimit\(key=\.\.\.\) names the counts in a store",
        ),
        (
            lambda s: RateLimit(rate=1, burst=1, store=s, name=""),
            TypeError,
            r"RateLimit\(name=\.\.\.\) must be a non-empty str",
        ),
        (
            lambda s: CallLimit(model_calls=1, store=s, key="k", scope="invocation"),
            ValueError,
            r"CallLimit\(store=\.\.\.\) counts per key, across processes, for as long as the key "
            r"lives; an invocation runs in one process",
        ),
        (
            lambda s: UsageBudget(max_total_tokens=1, store=s, key="k", scope="invocation"),
            ValueError,
            r"UsageBudget\(store=\.\.\.\) counts per key",
        ),
        (
            lambda s: RateLimit(rate=1, burst=1, store=s, name="x", on_store_error="ignore"),
            ValueError,
            r"RateLimit\(on_store_error=\.\.\.\) must be 'raise' \(the default\) or 'allow'",
        ),
        (
            lambda s: RateLimit(rate=1, burst=1, store=s, name="x", clock=lambda: 0.0),
            ValueError,
            r"RateLimit\(clock=\.\.\.\) is the in-process bucket's clock; with store=\.\.\. the "
            r"store keeps time",
        ),
        (
            lambda s: ConcurrencyLimit(limit=1, store=s, name="x", lease=0),
            ValueError,
            r"ConcurrencyLimit\(lease=\.\.\.\) must be a finite number of seconds > 0",
        ),
        (
            lambda s: RateLimit(rate=1, burst=1, store=object(), name="x"),  # type: ignore[arg-type]
            TypeError,
            r"RateLimit\(store=\.\.\.\) takes a RateStore, with async rate_reserve and "
            r"rate_refund \(a RedisStore or an InMemoryStore",
        ),
        (
            lambda s: UsageBudget(max_total_tokens=1, store=object(), key="k"),  # type: ignore[arg-type]
            TypeError,
            r"UsageBudget\(store=\.\.\.\) takes a CounterStore",
        ),
        (
            lambda s: Cache(store=s, on_store_error="never"),  # type: ignore[arg-type]
            ValueError,
            r"Cache\(on_store_error=\.\.\.\) must be 'raise'",
        ),
    ],
)
def test_a_store_needs_a_stable_name_and_a_sound_configuration(
    build: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        build(InMemoryStore())


def test_the_limit_errors_name_their_key_and_survive_pickling() -> None:
    capped = pickle.loads(pickle.dumps(CallLimitExceeded(3, "agent", "team")))
    assert (capped.limit, capped.scope, capped.key) == (3, "agent", "team")
    assert str(capped) == str(CallLimitExceeded(3, "agent", "team"))
    spent = pickle.loads(
        pickle.dumps(UsageBudgetExceeded(USAGE, {"max_total_tokens": 5}, "agent", "team"))
    )
    assert (spent.spent, spent.exhausted, spent.key) == (USAGE, {"max_total_tokens": 5}, "team")


def test_shared_items_count_in_the_agent_scope_of_their_key() -> None:
    store = InMemoryStore()
    assert CallLimit(model_calls=1, store=store, key="k").scope == "agent"
    assert UsageBudget(max_total_tokens=1, store=store, key="k", scope="agent").scope == "agent"
    assert CallLimit(model_calls=1).scope == "invocation"  # without a store, as before


# ---- shared state ------------------------------------------------------------------------


async def test_rate_limits_with_one_name_draw_from_one_bucket(redis_store: RedisStore) -> None:
    delays: list[float] = []

    async def record(delay: float) -> None:
        delays.append(delay)

    first = RateLimit(rate=0.01, burst=2, store=redis_store, name="bedrock", sleep=record)
    second = RateLimit(rate=0.01, burst=2, store=redis_store, name="bedrock", sleep=record)
    other = RateLimit(rate=0.01, burst=2, store=redis_store, name="other", sleep=record)
    for limit in (first, second, other):
        await registry_with(limit).run(InvokeModelStage, model_context(), Terminal())
    assert delays == []  # a burst of two between the two objects; "other" is another bucket
    await registry_with(second).run(InvokeModelStage, model_context(), Terminal())
    assert len(delays) == 1 and 99 < delays[0] <= 100


async def test_rate_limit_tokens_are_the_stores_to_read() -> None:
    store = InMemoryStore()
    limit = RateLimit(rate=1, burst=3, store=store, name="x")
    assert limit.tokens == 3
    await registry_with(limit).run(InvokeModelStage, model_context(), Terminal())
    assert store.rate_level("x") == pytest.approx(2, abs=0.01)


async def test_a_paused_call_gives_its_token_back_to_the_shared_bucket(
    redis_store: RedisStore,
) -> None:
    limit = RateLimit(ExecuteToolStage, rate=0.01, burst=1, store=redis_store, name="tools")

    @ExecuteToolStage.wrap
    async def asks(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    registry = registry_with(limit, asks)
    with pytest.raises(Exception, match="approve"):
        await registry.run(ExecuteToolStage, tool_context(), answer_tool)
    assert await redis_store.rate_reserve("tools", rate=0.01, burst=1) == 0.0


async def test_concurrency_limits_with_one_name_share_their_slots(redis_store: RedisStore) -> None:
    terminal = Terminal(pause=0.05)
    registries = [
        registry_with(ConcurrencyLimit(limit=2, store=redis_store, name="slots", lease=5))
        for _ in range(4)
    ]
    await asyncio.gather(
        *(
            registry.run(InvokeModelStage, model_context(), terminal)
            for registry in registries
            for _ in range(3)
        )
    )
    assert terminal.calls == 12
    assert terminal.most_running == 2


async def test_a_call_longer_than_its_lease_keeps_its_slot_by_renewing_it(
    redis_store: RedisStore,
) -> None:
    terminal = Terminal(pause=0.7)  # more than two leases
    limits = [ConcurrencyLimit(limit=1, store=redis_store, name="long", lease=0.3) for _ in "ab"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a lost lease would warn
        await asyncio.gather(
            *(
                registry_with(limit).run(InvokeModelStage, model_context(), terminal)
                for limit in limits
            )
        )
    assert terminal.most_running == 1


async def test_a_slot_in_a_store_is_released_on_an_error(redis_store: RedisStore) -> None:
    limit = ConcurrencyLimit(limit=1, store=redis_store, name="s", lease=30)

    async def fails(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        raise ConnectionError("provider down")
        yield stop()

    with pytest.raises(ConnectionError):
        await registry_with(limit).run(InvokeModelStage, model_context(), fails)
    token = await asyncio.wait_for(redis_store.slot_acquire("s", limit=1, lease=30), 5)
    await redis_store.slot_release("s", token)


async def test_a_shared_call_limit_caps_every_agent_on_its_key(redis_store: RedisStore) -> None:
    agents = [
        Agent(
            model=ConfiguredModel([text_turn("one"), text_turn("two")]),
            middleware=[CallLimit(model_calls=3, store=redis_store, key="team")],
        )
        for _ in range(2)
    ]
    await agents[0].invoke_async("a")
    await agents[1].invoke_async("b")
    await agents[0].invoke_async("c")
    with pytest.raises(
        CallLimitExceeded,
        match=r"CallLimit\(model_calls=3\) reached: 3 model calls already made under the key "
        r"'team'",
    ) as error:
        await agents[1].invoke_async("d")
    assert error.value.key == "team"
    assert await redis_store.counter_read("team", ["model"]) == {"model": 3}


async def test_a_shared_tool_cap_answers_the_model_and_a_pause_gives_the_count_back(
    redis_store: RedisStore,
) -> None:
    limit = CallLimit(tool_calls=5, per_tool={"search": 1}, store=redis_store, key="k")
    registry = registry_with(limit)
    assert (await registry.run(ExecuteToolStage, tool_context(), answer_tool)).tool_result[
        "status"
    ] == "success"
    refused = await registry.run(ExecuteToolStage, tool_context(tool_use_id="t2"), answer_tool)
    assert refused.tool_result == {
        "toolUseId": "t2",
        "status": "error",
        "content": [
            {
                "text": "Tool call limit reached: 'search' may be called at most 1 time under "
                "the key 'k'. Do not call it again."
            }
        ],
    }

    @ExecuteToolStage.wrap
    async def asks(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    with pytest.raises(Exception, match="approve"):
        await registry_with(limit, asks).run(
            ExecuteToolStage, tool_context("fetch", "t3"), answer_tool
        )
    assert await redis_store.counter_read("k", ["tools", "tool:fetch"]) == {
        "tools": 1,
        "tool:fetch": 0,
    }


async def test_a_shared_budget_stops_every_agent_once_spent(redis_store: RedisStore) -> None:
    budgets = [
        UsageBudget(max_total_tokens=25, store=redis_store, key="team-a:june") for _ in range(2)
    ]
    registries = [registry_with(budget) for budget in budgets]
    for registry in (*registries, *registries[:1]):
        await registry.run(InvokeModelStage, model_context(), Terminal())
    assert await budgets[1].spent_in_store() == {
        "inputTokens": 18,
        "outputTokens": 12,
        "totalTokens": 30,
    }
    with pytest.raises(
        UsageBudgetExceeded,
        match=r"UsageBudget exhausted: the budget 'team-a:june' spent 30 total tokens of a budget "
        r"of 25 \(max_total_tokens\)",
    ) as error:
        await registries[1].run(InvokeModelStage, model_context(), Terminal())
    assert error.value.key == "team-a:june"
    with pytest.raises(RuntimeError, match=r"read it with await budget\.spent_in_store\(\)"):
        budgets[0].spent(None)


async def test_a_cache_entry_one_object_wrote_is_a_hit_for_another(
    redis_store: RedisStore,
) -> None:
    writer, reader = Cache(store=redis_store), Cache(store=redis_store)
    terminal = Terminal()
    first = await registry_with(writer).run(InvokeModelStage, model_context(), terminal)
    second = await registry_with(reader).run(InvokeModelStage, model_context(), terminal)
    assert (terminal.calls, writer.misses, reader.hits) == (1, 1, 1)
    assert type(second) is ModelStopReason
    assert second == first


async def test_a_tool_result_with_bytes_round_trips_through_a_shared_cache(
    redis_store: RedisStore,
) -> None:
    image = bytes(range(256))

    async def picture(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "success",
                "content": [{"image": {"format": "png", "source": {"bytes": image}}}],
            }
        )

    caches = [Cache(ExecuteToolStage, store=redis_store) for _ in "ab"]
    await registry_with(caches[0]).run(ExecuteToolStage, tool_context("draw", "t1"), picture)
    replay = await registry_with(caches[1]).run(
        ExecuteToolStage, tool_context("draw", "t9"), answer_tool
    )
    assert caches[1].hits == 1
    assert replay.tool_result == {
        "toolUseId": "t9",
        "status": "success",
        "content": [{"image": {"format": "png", "source": {"bytes": image}}}],
    }


def test_results_are_encoded_as_json_and_read_back_as_their_own_class() -> None:
    result = stop("Paris.")
    result["extra"] = {"note": "kept"}
    data = encode_result(result)
    assert data.startswith(b'{"result":1,"class":"ModelStopReason"')
    decoded = decode_result(data, ModelStopReason)
    assert type(decoded) is ModelStopReason
    assert decoded == result


async def test_an_entry_that_is_not_a_result_is_a_miss_and_is_overwritten(
    redis_store: RedisStore, redis_server: RedisServer
) -> None:
    cache = Cache(store=redis_store)
    key = cache.key_for(model_context())
    assert key is not None
    await redis_store.cache_set(key, b"\x80\x04pickle?", None)
    with pytest.warns(StoreWarning, match=r"is not a result this version can read"):
        await registry_with(cache).run(InvokeModelStage, model_context(), Terminal())
    assert cache.misses == 1
    stored = await redis_store.cache_get(key)
    assert stored is not None and decode_result(stored, ModelStopReason) == stop()


# ---- store failures ------------------------------------------------------------------------


class BrokenStore:
    """A store whose every call fails, as one does when its server is down."""

    def __repr__(self) -> str:
        return "BrokenStore()"

    async def _fail(self) -> Any:
        # Ends with a period, as redis-py's connection errors do: the message adds none of its own.
        raise ConnectionError("connection refused.")

    async def cache_get(self, key: str) -> bytes | None:
        return await self._fail()

    async def cache_set(self, key: str, value: bytes, ttl: float | None) -> None:
        await self._fail()

    async def rate_reserve(self, name: str, *, rate: float, burst: int) -> float:
        return await self._fail()

    async def rate_refund(self, name: str, *, rate: float, burst: int) -> None:
        await self._fail()

    async def slot_acquire(self, name: str, *, limit: int, lease: float) -> str:
        return await self._fail()

    async def slot_renew(self, name: str, token: str, *, lease: float) -> bool:
        return await self._fail()

    async def slot_release(self, name: str, token: str) -> None:
        await self._fail()

    async def counter_add(
        self, key: str, amounts: Mapping[str, int], *, limits: Mapping[str, int] | None = None
    ) -> dict[str, int] | None:
        return await self._fail()

    async def counter_read(self, key: str, fields: Sequence[str]) -> dict[str, int]:
        return await self._fail()


def shared_items(store: Any, on_store_error: Any) -> list[tuple[str, Any]]:
    return [
        ("RateLimit(name='r')", RateLimit(rate=1, burst=1, store=store, name="r",
                                           on_store_error=on_store_error)),
        ("ConcurrencyLimit(name='c')", ConcurrencyLimit(limit=1, store=store, name="c",
                                                        on_store_error=on_store_error)),
        ("UsageBudget(key='u')", UsageBudget(max_total_tokens=5, store=store, key="u",
                                             on_store_error=on_store_error)),
        ("CallLimit(key='k')", CallLimit(model_calls=5, store=store, key="k",
                                         on_store_error=on_store_error)),
        ("Cache", Cache(store=store, on_store_error=on_store_error)),
    ]  # fmt: skip


@pytest.mark.parametrize("index", range(5))
async def test_a_store_failure_raises_naming_the_item_and_the_store(index: int) -> None:
    label, item = shared_items(BrokenStore(), "raise")[index]
    terminal = Terminal()
    with pytest.raises(StoreError) as error:
        await registry_with(item).run(InvokeModelStage, model_context(), terminal)
    assert str(error.value) == (
        f"{label} could not use its store: BrokenStore() raised ConnectionError: connection "
        "refused. To let calls through while the store is down, pass on_store_error='allow'"
    )
    assert isinstance(error.value.__cause__, ConnectionError)
    assert terminal.calls == 0


@pytest.mark.parametrize("index", range(5))
async def test_allow_lets_the_call_through_with_a_warning(index: int) -> None:
    label, item = shared_items(BrokenStore(), "allow")[index]
    terminal = Terminal()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = await registry_with(item).run(InvokeModelStage, model_context(), terminal)
    assert result == stop()
    assert terminal.calls == 1
    messages = [str(warning.message) for warning in caught]
    assert all(warning.category is StoreWarning for warning in caught)
    assert messages[0] == (
        f"{label} let a call through without its store: BrokenStore() raised ConnectionError: "
        "connection refused"
    )


async def test_a_failed_give_back_warns_and_the_calls_own_outcome_stands(
    private_redis: RedisServer, prefix: str
) -> None:
    store = RedisStore.from_url(private_redis.url, prefix=prefix, timeout=0.5)
    limit = ConcurrencyLimit(limit=1, store=store, name="s", lease=30)

    async def server_dies(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        private_redis.stop()
        yield stop("answered before the store went")

    with pytest.warns(
        StoreWarning, match=r"ConcurrencyLimit\(name='s'\) could not release its slot"
    ):
        result = await registry_with(limit).run(InvokeModelStage, model_context(), server_dies)
    assert result == stop("answered before the store went")
    await store.aclose()


async def test_an_agent_on_a_shared_store_runs_its_tools_and_answers(
    redis_store: RedisStore,
) -> None:
    deleted.clear()
    agent = Agent(
        model=ConfiguredModel([tool_turn("delete_file", {"path": "/tmp/x"}), text_turn("Done.")]),
        tools=[delete_file],
        middleware=[
            Cache(store=redis_store),
            RateLimit(rate=100, burst=10, store=redis_store, name="model"),
            ConcurrencyLimit(limit=2, store=redis_store, name="model", lease=5),
            CallLimit(model_calls=10, tool_calls=10, store=redis_store, key="agent"),
            UsageBudget(max_total_tokens=1000, store=redis_store, key="agent"),
        ],
    )
    result = await agent.invoke_async("Delete /tmp/x")
    assert (result.stop_reason, str(result)) == ("end_turn", "Done.")
    assert deleted == ["/tmp/x"]
    assert await redis_store.counter_read("agent", ["model", "tools"]) == {"model": 2, "tools": 1}


async def test_a_summary_kept_in_redis_is_sent_by_another_agent_without_summarizing(
    redis_store: RedisStore,
) -> None:
    written = ScriptedModel([text_turn("S1")])
    first = Agent(
        model=ScriptedModel([text_turn(f"a{n}") for n in range(1, 4)]),
        middleware=[Summarize(written, max_messages=4, store=redis_store)],
    )
    for n in range(1, 4):
        await first.invoke_async(f"q{n}")
    assert len(written.requests) == 1

    idle = ScriptedModel([])
    main = ScriptedModel([text_turn("a4")])
    second = Agent(
        model=main,
        messages=first.messages,
        middleware=[Summarize(idle, max_messages=4, store=redis_store)],
    )
    await second.invoke_async("q4")
    assert not idle.requests
    assert main.requests[0].messages[0]["content"][0] == {"text": SUMMARY_HEADER + "S1"}
    assert len(main.requests[0].messages) == 3
