"""CircuitBreaker: closed, open after failures in a row, one probe when half-open, per tool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InterruptException,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.catalog import CircuitBreaker, CircuitOpen, ModelFallback
from strands_middleware.exceptions import StoreError, StoreWarning
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import (
    ScriptedModel,
    model_context,
    text_turn,
    tool_context,
    tool_turn,
)
from strands_middleware.tools import tool


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def answer(text: str = "ok") -> ModelStopReason:
    return ModelStopReason("end_turn", {"role": "assistant", "content": [{"text": text}]}, {}, {})


class Provider:
    """A model-call terminal that fails while ``down`` and counts the calls that reached it."""

    def __init__(self) -> None:
        self.down = True
        self.calls = 0

    async def __call__(self, _context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        self.calls += 1
        if self.down:
            raise ConnectionError("provider down")
        yield answer()


MODEL = ScriptedModel([])
"""The model of every call made here through a registry (never streamed: terminals stand in)."""


@pytest.fixture(autouse=True, params=["invoke", "reporting consumer"])
def consumer(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every model-stage test runs the breaker both ways: as a generator layer (invoke) and as
    its watch, under a consumer that reports what it reads (as the reference agent does)."""
    REPORTING["on"] = request.param == "reporting consumer"
    yield
    REPORTING["on"] = False


REPORTING = {"on": False}


async def call(registry: MiddlewareRegistry, terminal: Any) -> list[TypedEvent]:
    context = model_context(model=MODEL)
    if not REPORTING["on"]:
        return [event async for event in registry.invoke(InvokeModelStage, context, terminal)]
    events: list[TypedEvent] = []
    opened = registry.open(InvokeModelStage, context, terminal).reporting()
    async with opened as stream:
        assert opened.watching
        async for event in stream:
            if event.__class__ not in opened.passing:
                opened.saw(event)
            events.append(event)
    return events


def breaker_registry(**kwargs: Any) -> tuple[MiddlewareRegistry, CircuitBreaker, FakeClock]:
    clock = FakeClock()
    breaker = CircuitBreaker(clock=clock, **kwargs)
    registry = MiddlewareRegistry()
    registry.use(breaker)
    return registry, breaker, clock


# ---- the model stage -----------------------------------------------------------------------


async def test_failures_in_a_row_open_the_circuit_and_an_open_circuit_calls_nothing() -> None:
    registry, breaker, clock = breaker_registry(failures=3, cooldown=30)
    provider = Provider()
    for _ in range(3):
        with pytest.raises(ConnectionError):
            await call(registry, provider)
    assert breaker.state(MODEL) == "open"
    clock.now = 10
    with pytest.raises(
        CircuitOpen,
        match=r"circuit 'invokeModel:model:.*ScriptedModel@[0-9]+' is open .* in 20\.0 s",
    ) as info:
        await call(registry, provider)
    assert info.value.retry_after == 20 and info.value.circuit.startswith("invokeModel:model:")
    assert provider.calls == 3  # the refused call never reached the provider


async def test_after_the_cooldown_one_probe_goes_through_and_its_success_closes_the_circuit() -> (
    None
):
    registry, breaker, clock = breaker_registry(failures=1, cooldown=30)
    provider = Provider()
    with pytest.raises(ConnectionError):
        await call(registry, provider)
    clock.now = 30
    assert breaker.state(MODEL) == "half-open"
    provider.down = False
    assert await call(registry, provider) == [answer()]
    assert breaker.state(MODEL) == "closed"
    assert await call(registry, provider) == [answer()]


async def test_a_failed_probe_opens_the_circuit_for_another_cooldown() -> None:
    registry, _breaker, clock = breaker_registry(failures=2, cooldown=30)
    provider = Provider()
    for _ in range(2):
        with pytest.raises(ConnectionError):
            await call(registry, provider)
    clock.now = 31
    with pytest.raises(ConnectionError):
        await call(registry, provider)  # the probe fails
    clock.now = 60
    with pytest.raises(CircuitOpen) as info:
        await call(registry, provider)
    assert info.value.retry_after == pytest.approx(1)
    assert provider.calls == 3


async def test_while_the_probe_runs_every_other_call_is_refused() -> None:
    registry, _breaker, clock = breaker_registry(failures=1, cooldown=5)
    with pytest.raises(ConnectionError):
        await call(registry, Provider())
    clock.now = 5
    release = asyncio.Event()

    async def slow(_context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        await release.wait()
        yield answer()

    probe = asyncio.create_task(call(registry, slow))
    await asyncio.sleep(0)
    with pytest.raises(CircuitOpen):
        await call(registry, slow)
    release.set()
    assert await probe == [answer()]


async def test_a_success_between_failures_starts_the_count_over() -> None:
    registry, breaker, _clock = breaker_registry(failures=2)
    provider = Provider()
    for down in (True, False, True, False, True):
        provider.down = down
        if down:
            with pytest.raises(ConnectionError):
                await call(registry, provider)
        else:
            await call(registry, provider)
    assert breaker.state(MODEL) == "closed"


async def test_only_the_listed_exceptions_count_and_control_flow_never_does() -> None:
    registry, breaker, _clock = breaker_registry(failures=1, on=ConnectionError)

    async def bad_request(_context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        raise ValueError("bad request")
        yield answer()

    async def paused(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        raise InterruptException(__import__("strands_middleware").Interrupt(id="i", name="ask"))
        yield answer()

    for terminal, error in ((bad_request, ValueError), (paused, InterruptException)):
        with pytest.raises(error):
            await call(registry, terminal)
    assert breaker.state(MODEL) == "closed"


def test_a_model_fallback_outside_the_breaker_answers_while_the_circuit_is_open() -> None:
    primary = ScriptedModel([])  # never asked: its circuit is open
    backup = ScriptedModel([text_turn("from the backup"), text_turn("the backup again")])
    breaker = CircuitBreaker(failures=1)
    agent = Agent(model=primary, middleware=[ModelFallback([backup]), breaker])

    @InvokeModelStage.wrap
    async def first_call_fails(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if context.model is primary:
            raise ConnectionError("primary down")
        async for event in next_fn(context):
            yield event

    agent.use(first_call_fails)
    assert str(agent("hi")) == "from the backup"
    assert (breaker.state(primary), breaker.state(backup)) == ("open", "closed")
    assert str(agent("and now?")) == "the backup again"  # the primary is not even tried


# ---- the tool stage ------------------------------------------------------------------------


def test_each_tool_has_its_own_circuit_and_an_open_one_answers_with_an_error_result() -> None:
    runs: list[str] = []

    @tool
    def flaky(x: int) -> int:
        """Always fails."""
        runs.append("flaky")
        raise RuntimeError("backend down")

    @tool
    def steady(x: int) -> int:
        """Always works."""
        runs.append("steady")
        return x

    breaker = CircuitBreaker(ExecuteToolStage, failures=2, cooldown=60)
    script = [
        tool_turn("flaky", {"x": 1}, tool_use_id="t1"),
        tool_turn("flaky", {"x": 2}, tool_use_id="t2"),
        tool_turn("flaky", {"x": 3}, tool_use_id="t3"),
        tool_turn("steady", {"x": 4}, tool_use_id="t4"),
        text_turn("done"),
    ]
    agent = Agent(model=ScriptedModel(script), tools=[flaky, steady], middleware=[breaker])
    agent("go")
    assert runs == ["flaky", "flaky", "steady"]  # the third flaky call was refused
    assert (breaker.state("flaky"), breaker.state("steady")) == ("open", "closed")
    refused = [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"]["toolUseId"] == "t3"
    ]
    [result] = refused
    assert result["status"] == "error"
    assert "The tool flaky is unavailable after repeated failures" in result["content"][0]["text"]


async def test_a_tool_error_result_with_an_exception_outside_on_does_not_count() -> None:
    registry = MiddlewareRegistry()
    breaker = CircuitBreaker(ExecuteToolStage, failures=1, on=ConnectionError)
    registry.use(breaker)

    async def fails(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {"toolUseId": context.tool_use["toolUseId"], "status": "error", "content": []},
            exception=ValueError("bad input"),
        )

    context = tool_context("lookup", {})
    [_result] = [event async for event in registry.invoke(ExecuteToolStage, context, fails)]
    assert breaker.state("lookup") == "closed"


# ---- a shared store ------------------------------------------------------------------------


async def test_two_breakers_on_one_store_and_name_share_their_circuit() -> None:
    store = InMemoryStore()
    first, second = MiddlewareRegistry(), MiddlewareRegistry()
    first.use(CircuitBreaker(failures=1, store=store, name="bedrock"))
    second.use(CircuitBreaker(failures=1, store=store, name="bedrock"))
    with pytest.raises(ConnectionError):
        await call(first, Provider())
    provider = Provider()
    with pytest.raises(CircuitOpen, match=r"circuit 'bedrock:model:.*ScriptedModel' is open"):
        await call(second, provider)
    assert provider.calls == 0


class BrokenStore(InMemoryStore):
    async def breaker_admit(self, name: str, *, cooldown: float) -> float:
        raise ConnectionError("store down")


async def test_a_failing_store_raises_by_default_and_lets_the_call_through_when_allowed() -> None:
    registry = MiddlewareRegistry()
    registry.use(CircuitBreaker(store=BrokenStore(), name="m"))
    with pytest.raises(StoreError, match=r"CircuitBreaker\(name='m'\) could not use its store"):
        await call(registry, Provider())
    allowing = MiddlewareRegistry()
    allowing.use(CircuitBreaker(store=BrokenStore(), name="m", on_store_error="allow"))
    provider = Provider()
    provider.down = False
    with pytest.warns(StoreWarning, match=r"let a call through without its store"):
        assert await call(allowing, provider) == [answer()]


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"failures": 0}, ValueError, r"CircuitBreaker\(failures=\.\.\.\) must be a whole number"),
        ({"cooldown": 0}, ValueError, r"CircuitBreaker\(cooldown=\.\.\.\) must be a finite"),
        ({"cooldown": float("inf")}, ValueError, r"cooldown=\.\.\.\) must be a finite number"),
        ({"on": "ConnectionError"}, TypeError, r"CircuitBreaker\(on=\.\.\.\) takes exception"),
        ({"store": InMemoryStore()}, ValueError, r"CircuitBreaker\(store=\.\.\.\) needs name="),
        ({"name": "x"}, ValueError, r"CircuitBreaker\(name=\.\.\.\) names the circuit in a store"),
        ({"store": object(), "name": "x"}, TypeError, r"takes a BreakerStore, with async"),
        (
            {"store": InMemoryStore(), "name": "x", "clock": FakeClock()},
            ValueError,
            r"CircuitBreaker\(clock=\.\.\.\) is the in-process store's clock",
        ),
        ({"on_store_error": "ignore"}, ValueError, r"on_store_error"),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        CircuitBreaker(**kwargs)


class Named(ScriptedModel):
    def get_config(self) -> dict[str, Any]:
        return {"model_id": "claude-x"}


def test_a_model_is_known_by_its_model_id_across_objects_and_else_by_the_object() -> None:
    breaker = CircuitBreaker()
    assert breaker._circuit(Named([])) == breaker._circuit(Named([]))
    assert breaker._circuit(Named([])) == "invokeModel:model:claude-x"
    assert breaker._circuit(ScriptedModel([])) != breaker._circuit(ScriptedModel([]))
    shared = CircuitBreaker(store=InMemoryStore(), name="m")
    assert shared._circuit(ScriptedModel([])) == shared._circuit(ScriptedModel([]))


def test_a_shared_circuits_state_is_the_stores_to_tell() -> None:
    class Remote:
        async def breaker_admit(self, name: str, *, cooldown: float) -> float:
            return 0.0

        async def breaker_record(
            self, name: str, *, failed: bool, threshold: int, cooldown: float
        ) -> None:
            return None

    shared = CircuitBreaker(store=Remote(), name="m")
    with pytest.raises(RuntimeError, match=r"the circuit lives in .*Remote"):
        shared.state(MODEL)
