"""`Outbound`: the chain's driver hands out a host's events and exceptions."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult
from strands_middleware.engine._chain import Outbound

from .conftest import STAGE, Done, Event, collect, terminal


class HostEvent:
    """A host loop's own event, wrapping one of the test stage's."""

    def __init__(self, ours: Event) -> None:
        self.ours = ours

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HostEvent) and other.ours == self.ours

    def __hash__(self) -> int:
        return id(self)


class HostError(Exception):
    """A host loop's own exception, wrapping one of ours."""


def to_host(event: Event) -> HostEvent | None:
    return None if event.get("chunk") == 2 else HostEvent(event)


def error_to_host(error: BaseException) -> BaseException:
    return HostError(str(error)) if isinstance(error, KeyError) else error


OUTBOUND = Outbound(to_host, error_to_host)


async def passthrough(
    context: str, next_fn: MiddlewareNext[str, Event]
) -> AsyncGenerator[Event, None]:
    async for event in next_fn(context):
        yield event


async def test_each_event_leaves_as_the_hosts_and_none_drops_it(
    registry: MiddlewareRegistry,
) -> None:
    registry.add_middleware(STAGE, passthrough)
    events = await collect(registry.invoke(STAGE, "ctx", terminal, outbound=OUTBOUND))
    assert events == [HostEvent(Event(chunk=1)), HostEvent(Done(context="ctx"))]


async def test_a_stage_without_handlers_translates_its_terminal(
    registry: MiddlewareRegistry,
) -> None:
    events = await collect(registry.invoke(STAGE, "ctx", terminal, outbound=OUTBOUND))
    assert events == [HostEvent(Event(chunk=1)), HostEvent(Done(context="ctx"))]


async def test_output_handlers_run_before_the_result_is_translated(
    registry: MiddlewareRegistry,
) -> None:
    def mark(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        return result.replace(value=Done(context="changed"))

    registry.add_middleware(STAGE.Output, mark)
    registry.add_middleware(STAGE, passthrough)
    events = await collect(registry.invoke(STAGE, "ctx", terminal, outbound=OUTBOUND))
    assert events == [HostEvent(Event(chunk=1)), HostEvent(Done(context="changed"))]


@pytest.mark.parametrize("with_outputs", [False, True])
async def test_an_error_leaves_as_the_hosts_once_the_chain_is_closed(
    registry: MiddlewareRegistry, with_outputs: bool
) -> None:
    log: list[str] = []

    async def failing(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        try:
            async for event in next_fn(context):
                yield event
            raise KeyError("missing")
        finally:
            log.append("handler closed")

    def error_out(error: BaseException) -> BaseException:
        log.append("translated")
        return error_to_host(error)

    if with_outputs:
        registry.add_middleware(STAGE.Output, lambda result: result)
    registry.add_middleware(STAGE, failing)
    with pytest.raises(HostError) as raised:
        await collect(
            registry.invoke(STAGE, "ctx", terminal, outbound=Outbound(to_host, error_out))
        )
    assert isinstance(raised.value.__cause__, KeyError)
    assert log == ["handler closed", "translated"]


async def test_an_input_handlers_error_leaves_as_the_hosts_too(
    registry: MiddlewareRegistry,
) -> None:
    def refuse(context: str) -> str:
        raise KeyError(context)

    registry.add_middleware(STAGE.Input, refuse)
    registry.add_middleware(STAGE, passthrough)
    with pytest.raises(HostError) as raised:
        await collect(registry.invoke(STAGE, "ctx", terminal, outbound=OUTBOUND))
    assert isinstance(raised.value.__cause__, KeyError)


async def test_an_error_the_host_keeps_is_raised_unchanged(registry: MiddlewareRegistry) -> None:
    error = ValueError("as it is")

    async def failing(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        raise error
        yield Event()  # pragma: no cover - makes this an async generator

    registry.add_middleware(STAGE, failing)
    with pytest.raises(ValueError) as raised:
        await collect(registry.invoke(STAGE, "ctx", terminal, outbound=OUTBOUND))
    assert raised.value is error
    assert raised.value.__cause__ is None


async def test_closing_early_closes_the_chain_without_translating_an_error(
    registry: MiddlewareRegistry,
) -> None:
    closed: list[str] = []
    translated: list[BaseException] = []

    async def endless(context: str) -> AsyncGenerator[Event, None]:
        try:
            while True:
                yield Event(chunk=1)
                await asyncio.sleep(0)
        finally:
            closed.append("terminal")

    def error_out(error: BaseException) -> BaseException:
        translated.append(error)
        return error

    registry.add_middleware(STAGE, passthrough)
    stream = registry.invoke(STAGE, "ctx", endless, outbound=Outbound(to_host, error_out))
    first: Any = await stream.__anext__()
    await stream.aclose()
    assert first == HostEvent(Event(chunk=1))
    assert closed == ["terminal"]
    assert translated == []


async def test_a_terminal_that_fails_at_once_fails_as_the_hosts_error_without_handlers(
    registry: MiddlewareRegistry,
) -> None:
    def failing_terminal(context: str) -> AsyncGenerator[Event, None]:
        raise KeyError(context)

    stream = registry.invoke(STAGE, "ctx", failing_terminal, outbound=OUTBOUND)
    with pytest.raises(HostError):
        await collect(stream)


async def test_an_error_raised_by_event_out_is_handed_to_error_out(
    registry: MiddlewareRegistry,
) -> None:
    def refuse(event: Event) -> object:
        raise KeyError("cannot translate")

    registry.add_middleware(STAGE, passthrough)
    with pytest.raises(HostError):
        await collect(
            registry.invoke(STAGE, "ctx", terminal, outbound=Outbound(refuse, error_to_host))
        )


async def test_error_out_returning_none_lets_the_original_go_on() -> None:
    error = KeyError("kept")

    async def failing() -> AsyncGenerator[Event, None]:
        raise error
        yield Event()  # pragma: no cover - makes this an async generator

    with pytest.raises(KeyError) as raised:
        await collect(Outbound(to_host, lambda error: None).apply(failing()))
    assert raised.value is error


class ClosedOnce:
    """An async iterator whose second ``aclose()`` fails, as some streams' do."""

    def __init__(self, failure: Exception) -> None:
        self.failure = failure
        self.closes = 0

    def __aiter__(self) -> ClosedOnce:
        return self

    async def __anext__(self) -> Event:
        raise self.failure

    async def aclose(self) -> None:
        self.closes += 1
        if self.closes > 1:
            raise RuntimeError("closed twice")


async def test_apply_closes_a_failed_stream_once_and_translates_its_error() -> None:
    stream = ClosedOnce(KeyError("missing"))
    with pytest.raises(HostError):
        await collect(OUTBOUND.apply(stream))
    assert stream.closes == 1


async def test_a_failure_closing_the_stream_is_logged_and_the_error_still_translated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class FailsToClose(ClosedOnce):
        async def aclose(self) -> None:
            raise RuntimeError("cannot close")

    with pytest.raises(HostError):
        await collect(OUTBOUND.apply(FailsToClose(KeyError("missing"))))
    assert "error while closing a middleware chain after a failure" in caplog.text
