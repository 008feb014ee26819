"""Cache: what the key is, what is kept, what a hit replays, and the store behind it."""

from __future__ import annotations

import gc
import re
from collections.abc import AsyncGenerator, Callable
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
    testing,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog._cache import Cache
from strands_middleware.events import ModelMessageEvent, TextDeltaEvent, ToolInterruptEvent
from strands_middleware.exceptions import StoreWarning
from strands_middleware.interrupts import Interrupt
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ConfiguredModel:
    """A model with a ``get_config()``, as every strands-agents provider has."""

    def __init__(self, inner: ScriptedModel, **config: Any) -> None:
        self.inner = inner
        self.config = config

    def get_config(self) -> dict[str, Any]:
        return dict(self.config)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        return self.inner.stream(*args, **kwargs)


class RecordingStore:
    """A `CacheStore` of one's own: a plain dict of bytes that records what it is asked."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.sets: list[tuple[str, float | None]] = []

    async def cache_get(self, key: str) -> bytes | None:
        return self.data.get(key)

    async def cache_set(self, key: str, value: bytes, ttl: float | None) -> None:
        self.sets.append((key, ttl))
        self.data[key] = value


MODEL = ScriptedModel([])
"""The model of every context built here unless a test passes its own (it is never streamed)."""


def model_context(model: object = MODEL, **changes: Any) -> InvokeModelContext:
    context = testing.model_context(
        messages=[{"role": "user", "content": [{"text": "Capital of France?"}]}],
        system_prompt="Be brief.",
        model=model,  # type: ignore[arg-type]
    )
    return context.replace(**changes)


def tool_context(name: str, tool_use_id: str, tool_input: Any) -> ExecuteToolContext:
    return testing.tool_context(name, tool_input, tool_use_id=tool_use_id)


def answer(text: str) -> ModelStopReason:
    return ModelStopReason(
        "end_turn",
        {"role": "assistant", "content": [{"text": text}]},
        {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        {"latencyMs": 1},
    )


def streaming_terminal(
    calls: list[str], text: str = "Paris."
) -> Callable[[InvokeModelContext], AsyncGenerator[TypedEvent, None]]:
    """A model-call terminal that streams a delta and the message before its result."""

    async def terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        calls.append("model")
        result = answer(text)
        yield TextDeltaEvent(text)
        yield ModelMessageEvent(result.message)
        yield result

    return terminal


async def collect(stream: AsyncGenerator[TypedEvent, None]) -> list[TypedEvent]:
    return [event async for event in stream]


# ---- hits and misses -----------------------------------------------------------------------


def test_a_repeated_model_call_is_answered_from_the_cache_across_agents(
    make_agent: AgentFactory,
) -> None:
    model = ScriptedModel([text_turn("Paris.")])
    cache = Cache()
    for _ in range(2):
        agent = make_agent(model=model, system_prompt="Be brief.", middleware=[cache])
        assert str(agent("Capital of France?")) == "Paris."
    assert len(model.requests) == 1
    assert (cache.hits, cache.misses) == (1, 1)


async def test_a_hit_replays_a_copy_of_the_result_and_nothing_else() -> None:
    calls: list[str] = []
    cache = Cache()
    registry = MiddlewareRegistry()
    registry.use(cache)
    terminal = streaming_terminal(calls)
    first = await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    assert [type(event) for event in first] == [TextDeltaEvent, ModelMessageEvent, ModelStopReason]

    replay = await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    assert calls == ["model"]
    assert replay == [first[-1]]
    assert type(replay[0]) is ModelStopReason
    assert replay[0] is not first[-1]

    # Neither the consumer of the original nor that of a replay can change what is stored.
    first[-1]["stop"][1]["content"][0]["text"] = "edited"
    replay[0]["stop"][1]["content"].append({"text": "more"})
    [again] = await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    assert again == answer("Paris.")


async def test_an_agent_sees_no_streaming_events_on_a_hit_but_gets_the_same_answer() -> None:
    model = ScriptedModel([text_turn("Paris.")])
    cache = Cache()
    texts: list[list[str]] = []
    for _ in range(2):
        agent = Agent(model=model, middleware=[cache])
        texts.append(
            [
                event.text
                async for event in agent.stream_async("Capital of France?")
                if isinstance(event, TextDeltaEvent)
            ]
        )
        assert agent.messages[-1] == {"role": "assistant", "content": [{"text": "Paris."}]}
    assert texts == [["Par", "is."], []]


# ---- the key -------------------------------------------------------------------------------


def test_the_store_key_is_the_stage_name_and_a_sha256_of_the_canonical_request() -> None:
    key = Cache().key_for(model_context())
    assert key is not None
    assert re.fullmatch(r"invokeModel:[0-9a-f]{64}", key)
    tool_key = Cache(ExecuteToolStage).key_for(tool_context("add", "t1", {"a": 1}))
    assert tool_key is not None
    assert re.fullmatch(r"executeTool:[0-9a-f]{64}", tool_key)


@pytest.mark.parametrize(
    "changes",
    [
        {"messages": [{"role": "user", "content": [{"text": "Capital of Spain?"}]}]},
        {"system_prompt": "Be verbose."},
        {"system_prompt": [{"text": "Be brief."}]},
        {"tool_specs": [{"name": "t", "description": "d", "inputSchema": {"json": {}}}]},
        {"tool_choice": {"auto": {}}},
    ],
)
def test_every_part_of_a_model_request_is_in_the_key(changes: dict[str, Any]) -> None:
    cache = Cache()
    model = ScriptedModel([])
    assert cache.key_for(model_context(model)) != cache.key_for(model_context(model, **changes))


def test_the_agent_and_the_invocation_state_are_not_in_the_key() -> None:
    cache = Cache()
    model = ScriptedModel([])
    plain = model_context(model)
    other = model_context(model, invocation_state={"user": "x"})
    other.agent = object()
    assert cache.key_for(plain) == cache.key_for(other)


def test_the_order_of_tool_specs_is_part_of_the_request() -> None:
    cache = Cache()
    model = ScriptedModel([])
    a = {"name": "a", "description": "a", "inputSchema": {"json": {}}}
    b = {"name": "b", "description": "b", "inputSchema": {"json": {}}}
    assert cache.key_for(model_context(model, tool_specs=[a, b])) != cache.key_for(
        model_context(model, tool_specs=[b, a])
    )


def test_models_with_a_config_are_identified_by_class_and_config() -> None:
    cache = Cache()
    same_a = ConfiguredModel(ScriptedModel([]), model_id="m1", temperature=0)
    same_b = ConfiguredModel(ScriptedModel([]), temperature=0, model_id="m1")
    other = ConfiguredModel(ScriptedModel([]), model_id="m2", temperature=0)
    assert cache.key_for(model_context(same_a)) == cache.key_for(model_context(same_b))
    assert cache.key_for(model_context(same_a)) != cache.key_for(model_context(other))


def test_models_without_a_config_are_identified_by_the_object() -> None:
    cache = Cache()
    model = ScriptedModel([])
    assert cache.key_for(model_context(model)) == cache.key_for(model_context(model))
    assert cache.key_for(model_context(model)) != cache.key_for(model_context(ScriptedModel([])))


def test_a_new_model_never_inherits_the_identity_of_a_dead_one() -> None:
    cache = Cache()
    model = ScriptedModel([])
    first_key = cache.key_for(model_context(model))
    first_id = id(model)
    del model
    gc.collect()
    for _ in range(1000):  # give a new model the best chance of reusing the old address
        candidate = ScriptedModel([])
        if id(candidate) == first_id:
            break
    assert cache.key_for(model_context(candidate)) != first_key


def test_bytes_are_part_of_the_key() -> None:
    cache = Cache()
    model = ScriptedModel([])

    def with_image(data: bytes) -> InvokeModelContext:
        block: Any = {"image": {"format": "png", "source": {"bytes": data}}}
        return model_context(model, messages=[{"role": "user", "content": [block]}])

    assert cache.key_for(with_image(b"\x89PNG one")) == cache.key_for(with_image(b"\x89PNG one"))
    assert cache.key_for(with_image(b"\x89PNG one")) != cache.key_for(with_image(b"\x89PNG two"))


def test_a_value_json_cannot_encode_is_an_error_naming_the_call() -> None:
    cache = Cache()
    context = model_context(messages=[{"role": "user", "content": [{"text": object()}]}])
    with pytest.raises(
        TypeError,
        match=r"Cache cannot key this invokeModel call: Object of type object is not JSON "
        r"serializable\. Pass Cache\(key=\.\.\.\) to build the key yourself",
    ):
        cache.key_for(context)


def test_tool_calls_are_keyed_by_name_and_input_with_sorted_keys() -> None:
    cache = Cache(ExecuteToolStage)
    key = cache.key_for(tool_context("add", "t1", {"a": 1, "b": 2}))
    assert key == cache.key_for(tool_context("add", "t2", {"b": 2, "a": 1}))
    assert key != cache.key_for(tool_context("add", "t1", {"a": 1, "b": 3}))
    assert key != cache.key_for(tool_context("sub", "t1", {"a": 1, "b": 2}))


async def test_a_custom_key_replaces_the_canonical_form() -> None:
    store = RecordingStore()
    cache = Cache(store=store, key=lambda context: context.messages[-1]["content"][0]["text"])
    registry = MiddlewareRegistry()
    registry.use(cache)
    calls: list[str] = []
    await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal(calls)))
    other_prompt = model_context(system_prompt="Ignored by the custom key.")
    await collect(registry.invoke(InvokeModelStage, other_prompt, streaming_terminal(calls)))
    assert store.sets == [("invokeModel:Capital of France?", 300.0)]
    assert calls == ["model"]


async def test_a_custom_key_returning_none_skips_the_cache() -> None:
    cache = Cache(key=lambda context: None)
    registry = MiddlewareRegistry()
    registry.use(cache)
    calls: list[str] = []
    for _ in range(2):
        await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal(calls)))
    assert calls == ["model", "model"]
    assert (cache.hits, cache.misses) == (0, 0)
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]


def test_a_custom_key_must_return_a_str_or_none() -> None:
    cache = Cache(key=lambda context: 42)  # type: ignore[arg-type, return-value]
    with pytest.raises(
        TypeError, match=r"Cache\(key=\.\.\.\) must return a str \(or None to skip the cache\)"
    ):
        cache.key_for(model_context())


# ---- what is never kept --------------------------------------------------------------------


def test_a_failed_model_call_is_not_cached(make_agent: AgentFactory) -> None:
    model = ScriptedModel([ConnectionError("throttled"), text_turn("Paris."), text_turn("x")])
    cache = Cache()
    agent = make_agent(model=model, middleware=[cache])
    with pytest.raises(ConnectionError):
        agent("Capital of France?")
    for _ in range(2):
        assert str(make_agent(model=model, middleware=[cache])("Capital of France?")) == "Paris."
    assert len(model.requests) == 2
    assert (cache.hits, cache.misses) == (1, 2)


async def test_a_call_that_fails_after_its_result_is_not_cached() -> None:
    async def fails_late(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        raise ConnectionError("dropped after the result")

    cache = Cache()
    registry = MiddlewareRegistry()
    registry.use(cache, InvokeModelStage.wrap(fails_late))
    with pytest.raises(ConnectionError):
        await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal([])))
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]


async def test_a_call_the_consumer_stopped_reading_is_not_cached() -> None:
    cache = Cache()
    registry = MiddlewareRegistry()
    registry.use(cache)
    stream = registry.invoke(InvokeModelStage, model_context(), streaming_terminal([]))
    await stream.__anext__()
    await stream.aclose()
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]
    assert cache.misses == 1


async def test_the_last_result_of_a_stream_is_the_one_kept() -> None:
    async def two_results(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield answer("draft")
        yield answer("final")

    registry = MiddlewareRegistry()
    registry.use(Cache(), InvokeModelStage.wrap(two_results))
    await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal([])))
    replay = await collect(
        registry.invoke(InvokeModelStage, model_context(), streaming_terminal([]))
    )
    assert replay == [answer("final")]


def test_tool_error_results_are_not_cached(make_agent: AgentFactory) -> None:
    runs: list[int] = []

    @tool
    def flaky() -> str:
        """Fails."""
        runs.append(1)
        raise ConnectionError("busy")

    cache = Cache(ExecuteToolStage)
    for _ in range(2):
        model = ScriptedModel([tool_turn("flaky", {}), text_turn("done")])
        make_agent(model=model, tools=[flaky], middleware=[cache])("go")
    assert len(runs) == 2
    assert (cache.hits, cache.misses) == (0, 2)


async def test_an_error_status_without_an_exception_is_not_cached() -> None:
    async def refuses(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {"toolUseId": "t1", "status": "error", "content": [{"text": "no"}]}, exception=None
        )

    cache = Cache(ExecuteToolStage)
    registry = MiddlewareRegistry()
    registry.use(cache)
    await collect(registry.invoke(ExecuteToolStage, tool_context("x", "t1", {}), refuses))
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]


def test_a_call_paused_for_a_human_is_not_cached_until_it_runs(make_agent: AgentFactory) -> None:
    runs: list[str] = []

    @tool
    def delete(path: str) -> str:
        """Delete a file."""
        runs.append(path)
        return f"deleted {path}"

    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    cache = Cache(ExecuteToolStage)
    model = ScriptedModel([tool_turn("delete", {"path": "a"}, tool_use_id="t1"), text_turn("ok")])
    agent = make_agent(model=model, tools=[delete], middleware=[cache, ExecuteToolStage.wrap(gate)])
    paused = agent("Delete a")
    assert paused.stop_reason == "interrupt"
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]
    agent(
        [
            {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}
            for interrupt in paused.interrupts
        ]
    )
    assert runs == ["a"]
    assert len(cache.store._cache) == 1  # type: ignore[attr-defined]


async def test_a_stream_carrying_an_interrupt_event_is_not_cached() -> None:
    async def halts(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent({"toolUseId": "t1", "status": "success", "content": []})
        yield ToolInterruptEvent(context.tool_use, [Interrupt(id="i", name="ask")])

    cache = Cache(ExecuteToolStage)
    registry = MiddlewareRegistry()
    registry.use(cache)
    await collect(registry.invoke(ExecuteToolStage, tool_context("x", "t1", {}), halts))
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]


async def test_an_interrupt_of_a_class_seen_before_without_one_is_not_cached() -> None:
    class Paused(TypedEvent):
        @property
        def is_interrupt(self) -> bool:
            return bool(self.get("paused"))

    async def halts_late(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield Paused()
        yield ToolResultEvent({"toolUseId": "t1", "status": "success", "content": []})
        yield Paused({"paused": True})

    cache = Cache(ExecuteToolStage)
    registry = MiddlewareRegistry()
    registry.use(cache)
    await collect(registry.invoke(ExecuteToolStage, tool_context("x", "t1", {}), halts_late))
    assert len(cache.store._cache) == 0  # type: ignore[attr-defined]


# ---- tool calls ----------------------------------------------------------------------------


def test_a_repeated_tool_call_is_answered_for_the_current_tool_use_id(
    make_agent: AgentFactory,
) -> None:
    runs: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        runs.append(1)
        return a + b

    model = ScriptedModel(
        [
            tool_turn("add", {"a": 2, "b": 40}, tool_use_id="first"),
            tool_turn("add", {"b": 40, "a": 2}, tool_use_id="second"),
            text_turn("42"),
        ]
    )
    cache = Cache(ExecuteToolStage)
    agent = make_agent(model=model, tools=[add], middleware=[cache])
    agent("add twice")
    assert len(runs) == 1
    second = agent.messages[4]["content"][0]["toolResult"]
    assert second == {"toolUseId": "second", "status": "success", "content": [{"text": "42"}]}
    assert (cache.hits, cache.misses) == (1, 1)


async def test_tool_progress_is_not_replayed() -> None:
    async def reports(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield TypedEvent({"progress": 50})
        yield ToolResultEvent(
            {"toolUseId": context.tool_use["toolUseId"], "status": "success", "content": []}
        )

    registry = MiddlewareRegistry()
    registry.use(Cache(ExecuteToolStage))
    await collect(registry.invoke(ExecuteToolStage, tool_context("x", "t1", {}), reports))
    replay = await collect(registry.invoke(ExecuteToolStage, tool_context("x", "t2", {}), reports))
    assert replay == [ToolResultEvent({"toolUseId": "t2", "status": "success", "content": []})]
    assert type(replay[0]) is ToolResultEvent


# ---- the store -----------------------------------------------------------------------------


async def test_entries_expire_after_the_ttl() -> None:
    clock = FakeClock()
    calls: list[str] = []
    registry = MiddlewareRegistry()
    cache = Cache(ttl=10, clock=clock)
    registry.use(cache)
    terminal = streaming_terminal(calls)
    await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    clock.now = 9.9
    await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    assert calls == ["model"]
    clock.now = 10
    await collect(registry.invoke(InvokeModelStage, model_context(), terminal))
    assert calls == ["model", "model"]
    assert (cache.hits, cache.misses) == (1, 2)


async def test_a_ttl_of_none_never_expires() -> None:
    clock = FakeClock()
    calls: list[str] = []
    registry = MiddlewareRegistry()
    registry.use(Cache(ttl=None, clock=clock))
    await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal(calls)))
    clock.now = 10**9
    await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal(calls)))
    assert calls == ["model"]


async def test_the_default_store_evicts_the_least_recently_used_entry() -> None:
    calls: list[str] = []
    registry = MiddlewareRegistry()
    cache = Cache(max_entries=2)
    registry.use(cache)

    async def ask(question: str) -> None:
        context = model_context(messages=[{"role": "user", "content": [{"text": question}]}])
        await collect(registry.invoke(InvokeModelStage, context, streaming_terminal(calls)))

    for question in ("a", "b", "a", "c"):  # asking "a" again makes "b" the least recently used
        await ask(question)
    assert (cache.hits, cache.misses) == (1, 3)
    await ask("a")
    await ask("b")  # evicted: asked again
    assert (cache.hits, cache.misses) == (2, 4)


def test_max_entries_sizes_the_default_store_an_in_memory_store() -> None:
    cache = Cache(max_entries=3)
    assert isinstance(cache.store, InMemoryStore)
    assert repr(cache.store) == "InMemoryStore(max_entries=3)"


async def test_a_store_of_ones_own_gets_the_key_the_encoded_result_and_the_ttl() -> None:
    store = RecordingStore()
    cache = Cache(store=store, ttl=None)
    registry = MiddlewareRegistry()
    registry.use(cache)
    calls: list[str] = []
    for _ in range(2):
        await collect(registry.invoke(InvokeModelStage, model_context(), streaming_terminal(calls)))
    [(key, ttl)] = store.sets
    assert key == cache.key_for(model_context())
    assert ttl is None
    assert isinstance(store.data[key], bytes) and b"Paris." in store.data[key]
    assert calls == ["model"]


async def test_a_result_json_cannot_encode_is_answered_but_not_kept_and_a_warning_says_so() -> None:
    registry = MiddlewareRegistry()
    cache = Cache()
    registry.use(cache)

    async def odd(_context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        message = {"role": "assistant", "content": [{"text": object()}]}
        yield ModelStopReason("end_turn", message, {}, {})  # type: ignore[arg-type]

    with pytest.warns(StoreWarning, match=r"was not stored, because it is not JSON data"):
        [answered] = await collect(registry.invoke(InvokeModelStage, model_context(), odd))
    assert isinstance(answered, ModelStopReason)
    assert (cache.hits, cache.misses, len(cache.store._cache)) == (0, 1, 0)  # type: ignore[attr-defined]


def test_a_field_added_to_the_model_context_joins_the_key_unless_it_is_listed_as_not_in_it() -> (
    None
):
    from dataclasses import fields

    from strands_middleware.catalog._cache import _NOT_IN_MODEL_KEY, _model_key_fields

    every = {field.name for field in fields(InvokeModelContext) if not field.name.startswith("_")}
    assert set(_model_key_fields()) == every - _NOT_IN_MODEL_KEY
    assert {"messages", "system_prompt", "tool_specs", "tool_choice", "model"} <= set(
        _model_key_fields()
    )


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"max_entries": 0},
            ValueError,
            r"Cache\(max_entries=\.\.\.\) must be a whole number >= 1",
        ),
        ({"max_entries": True}, ValueError, r"max_entries=\.\.\.\) must be a whole number"),
        ({"max_entries": 2.5}, ValueError, r"max_entries=\.\.\.\) must be a whole number"),
        ({"ttl": 0}, ValueError, r"Cache\(ttl=\.\.\.\) must be a number of seconds > 0, or None"),
        ({"ttl": -5}, ValueError, r"ttl=\.\.\.\) must be a number of seconds > 0"),
        ({"ttl": float("inf")}, ValueError, r"ttl=\.\.\.\) must be a number of seconds > 0"),
        ({"ttl": "300"}, ValueError, r"ttl=\.\.\.\) must be a number of seconds > 0"),
        ({"key": "messages"}, TypeError, r"Cache\(key=\.\.\.\) takes a function of the context"),
        ({"clock": 0}, TypeError, r"Cache\(clock=\.\.\.\) takes a function returning seconds"),
        (
            {"store": {}},
            TypeError,
            r"Cache\(store=\.\.\.\) takes a CacheStore, with async cache_get",
        ),
        (
            {"store": InMemoryStore(), "max_entries": 10},
            ValueError,
            r"configure the built-in InMemoryStore; with store=\.\.\. configure the store itself",
        ),
        (
            {"store": InMemoryStore(), "clock": FakeClock()},
            ValueError,
            r"Cache\(max_entries=\.\.\.\) and Cache\(clock=\.\.\.\) configure the built-in",
        ),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Cache(**kwargs)


def test_only_the_call_stages_can_be_wrapped() -> None:
    from strands_middleware.experimental import AgentStreamStage

    with pytest.raises(TypeError, match="Cache wraps InvokeModelStage or ExecuteToolStage"):
        Cache(AgentStreamStage)  # type: ignore[arg-type]


def test_it_is_one_wrap_middleware_on_its_stage() -> None:
    [middleware] = list(Cache(ExecuteToolStage))
    assert middleware.phase is ExecuteToolStage.Wrap
