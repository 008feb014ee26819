"""Watching Wrap handlers (`._watch`): the outcome a watch is told matches what its generator
layer would have seen, and the watch runs only where nothing sits between it and a reporting
consumer."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult
from strands_middleware.engine._chain import OpenedChain
from strands_middleware.engine._watch import Leave, Outcome, watching

from .conftest import STAGE, Done, Event, Halt, terminal


class Watcher:
    """A Wrap handler that only watches: it records which form ran and every outcome."""

    def __init__(self, name: str, log: list[Any], *, refuse: bool = False, fail: bool = False):
        self.name, self.log, self.refuse, self.fail = name, log, refuse, fail

    def handler(self) -> Any:
        async def layer(context: str, next_fn: MiddlewareNext[str, Event]) -> AsyncGenerator[Any]:
            self.log.append((self.name, "generator"))
            async for event in next_fn(context):
                yield event

        async def enter(context: str) -> Leave:
            self.log.append((self.name, "enter", context))
            if self.refuse:
                raise PermissionError(f"{self.name} refuses")

            async def leave(outcome: Outcome) -> None:
                self.log.append((self.name, "leave", outcome))
                if self.fail:
                    raise ValueError(f"{self.name} fails")

            return leave

        return watching(layer, enter)


async def consume(opened: OpenedChain[Any], stop_after: int | None = None) -> list[Any]:
    """A reporting consumer's loop, as the hosts write it."""
    seen: list[Any] = []
    async with opened as stream:
        passing = opened.passing if opened.watching else set()
        async for event in stream:
            if opened.watching and event.__class__ not in passing:
                opened.saw(event)
            seen.append(event)
            if stop_after is not None and len(seen) >= stop_after:
                break
    return seen


def outcomes(log: list[Any], name: str) -> list[Outcome]:
    return [entry[2] for entry in log if entry[0] == name and entry[1] == "leave"]


async def test_an_outermost_watcher_runs_as_its_watch_and_learns_the_result(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    opened = registry.open(STAGE, "c", terminal).reporting()
    events = await consume(opened)
    assert events == [Event(chunk=1), Event(chunk=2), Done(context="c")]
    assert opened.watching
    assert [entry[:2] for entry in log] == [("w", "enter"), ("w", "leave")]
    assert outcomes(log, "w") == [Outcome(None, True, Done(context="c"), False)]


async def test_without_reporting_the_same_handler_runs_as_a_generator_layer(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    async with registry.open(STAGE, "c", terminal) as stream:
        assert [event async for event in stream][-1] == Done(context="c")
    assert log == [("w", "generator")]


async def test_a_watcher_inside_another_handler_stays_a_generator_layer(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []

    async def outer(context: str, next_fn: MiddlewareNext[str, Event]) -> AsyncGenerator[Any]:
        async for event in next_fn(context):
            yield event

    registry.use(STAGE.wrap(outer), STAGE.wrap(Watcher("w", log).handler()))
    await consume(registry.open(STAGE, "c", terminal).reporting())
    assert log == [("w", "generator")]


async def test_output_handlers_that_apply_keep_the_generator_layer(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(
        STAGE.wrap(Watcher("w", log).handler()),
        STAGE.output(lambda result: MiddlewareResult(Done(context="changed"))),
    )
    events = await consume(registry.open(STAGE, "c", terminal).reporting())
    assert events[-1] == Done(context="changed")
    assert log == [("w", "generator")]


async def test_an_error_from_the_call_is_the_outcome_and_reaches_the_consumer(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    boom = RuntimeError("model down")

    async def failing(context: str) -> AsyncIterator[Event]:
        yield Event(chunk=1)
        raise boom

    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    with pytest.raises(RuntimeError) as raised:
        await consume(registry.open(STAGE, "c", failing).reporting())
    assert raised.value is boom
    assert outcomes(log, "w") == [Outcome(boom, True, None, False)]


async def test_a_consumer_that_stops_early_leaves_the_call_unended(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    await consume(registry.open(STAGE, "c", terminal).reporting(), stop_after=1)
    assert outcomes(log, "w") == [Outcome(None, False, None, False)]


async def test_a_halting_event_is_reported_as_a_halt(registry: MiddlewareRegistry) -> None:
    log: list[Any] = []

    async def halting(context: str) -> AsyncIterator[Event]:
        yield Event(chunk=1)
        yield Halt(reason="approval")

    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    await consume(registry.open(STAGE, "c", halting).reporting())
    assert outcomes(log, "w") == [Outcome(None, True, None, True)]


async def test_a_refusal_inside_is_what_the_outer_watcher_sees(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(
        STAGE.wrap(Watcher("outer", log).handler()),
        STAGE.wrap(Watcher("inner", log, refuse=True).handler()),
    )
    with pytest.raises(PermissionError, match="inner refuses"):
        await consume(registry.open(STAGE, "c", terminal).reporting())
    (outcome,) = outcomes(log, "outer")
    assert isinstance(outcome.error, PermissionError) and outcome.ended
    assert outcomes(log, "inner") == []


async def test_an_after_part_that_fails_is_the_error_the_next_watcher_out_sees(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []
    registry.use(
        STAGE.wrap(Watcher("outer", log).handler()),
        STAGE.wrap(Watcher("inner", log, fail=True).handler()),
    )
    with pytest.raises(ValueError, match="inner fails"):
        await consume(registry.open(STAGE, "c", terminal).reporting())
    assert [entry[:2] for entry in log] == [
        ("outer", "enter"),
        ("inner", "enter"),
        ("inner", "leave"),
        ("outer", "leave"),
    ]
    (outcome,) = outcomes(log, "outer")
    assert isinstance(outcome.error, ValueError) and outcome.result == Done(context="c")


async def test_watches_run_after_everything_inside_is_closed(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []

    async def closing(context: str) -> AsyncIterator[Event]:
        try:
            yield Event(chunk=1)
            yield Done(context=context)
        finally:
            log.append(("terminal", "closed"))

    registry.use(STAGE.wrap(Watcher("w", log).handler()))
    await consume(registry.open(STAGE, "c", closing).reporting(), stop_after=1)
    assert [entry[:2] for entry in log] == [("w", "enter"), ("terminal", "closed"), ("w", "leave")]


async def test_an_error_opening_the_handlers_inside_is_what_the_watcher_sees(
    registry: MiddlewareRegistry,
) -> None:
    log: list[Any] = []

    def broken(context: str, next_fn: MiddlewareNext[str, Event]) -> Any:
        raise LookupError("no such model")

    registry.use(STAGE.wrap(Watcher("w", log).handler()), STAGE.wrap(broken))
    with pytest.raises(LookupError):
        await consume(registry.open(STAGE, "c", terminal).reporting())
    (outcome,) = outcomes(log, "w")
    assert isinstance(outcome.error, LookupError) and outcome.ended
