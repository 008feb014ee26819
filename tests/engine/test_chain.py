"""Running a compiled chain: streaming, results, Output handling and the cleanup contract."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import pytest

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult

from .conftest import STAGE, Done, Event, Halt, collect, terminal


class Probe:
    """Builds handlers and a terminal that log when they open and when they are closed."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def closed(self) -> list[str]:
        return [entry.removesuffix(":closed") for entry in self.log if entry.endswith(":closed")]

    def terminal(self, events: list[Event] | None = None, gate: asyncio.Event | None = None) -> Any:
        produced = events if events is not None else [Event(chunk=1), Done(ok=True)]

        async def run(context: str) -> AsyncGenerator[Event, None]:
            self.log.append("terminal:open")
            try:
                for event in produced:
                    if gate is not None:
                        await gate.wait()
                    yield event
            finally:
                self.log.append("terminal:closed")

        return run

    def wrap(self, name: str) -> Any:
        async def handler(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            self.log.append(f"{name}:open")
            try:
                async for event in next_fn(context):
                    yield event
            finally:
                self.log.append(f"{name}:closed")

        return handler


@pytest.fixture
def probe() -> Probe:
    return Probe()


async def fails_to_close(
    context: str, next_fn: MiddlewareNext[str, Event]
) -> AsyncGenerator[Event, None]:
    """A pass-through Wrap handler whose ``finally`` fails."""
    try:
        async for event in next_fn(context):
            yield event
    finally:
        raise OSError("cleanup failed")


async def test_events_stream_through_in_order(registry: MiddlewareRegistry, probe: Probe) -> None:
    registry.add_middleware(STAGE, probe.wrap("a"))
    events = await collect(registry.invoke(STAGE, "c", terminal))
    assert events == [Event(chunk=1), Event(chunk=2), Done(context="c")]


async def test_normal_end_closes_everything_once_innermost_first(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    registry.add_middleware(STAGE, probe.wrap("outer"))
    registry.add_middleware(STAGE, probe.wrap("inner"))
    await collect(registry.invoke(STAGE, "c", probe.terminal()))
    assert probe.closed() == ["terminal", "inner", "outer"]


async def test_consumer_stopping_early_closes_innermost_first(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    registry.add_middleware(STAGE, probe.wrap("outer"))
    registry.add_middleware(STAGE, probe.wrap("inner"))
    async with aclosing(registry.invoke(STAGE, "c", probe.terminal())) as stream:
        async for _event in stream:
            break
    assert probe.closed() == ["terminal", "inner", "outer"]


async def test_an_exception_reaches_the_caller_as_the_same_object(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    boom = ValueError("model failed")

    async def failing(context: str) -> AsyncGenerator[Event, None]:
        try:
            yield Event(chunk=1)
            raise boom
        finally:
            probe.log.append("terminal:closed")

    registry.add_middleware(STAGE, probe.wrap("outer"))
    registry.add_middleware(STAGE, probe.wrap("inner"))
    with pytest.raises(ValueError) as caught:
        await collect(registry.invoke(STAGE, "c", failing))
    assert caught.value is boom
    assert probe.closed() == ["terminal", "inner", "outer"]


async def test_cancellation_mid_stream_closes_everything_and_propagates(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    gate = asyncio.Event()
    registry.add_middleware(STAGE, probe.wrap("outer"))
    registry.add_middleware(STAGE, probe.wrap("inner"))
    seen: list[Event] = []

    async def consume() -> None:
        async for event in registry.invoke(STAGE, "c", probe.terminal(gate=gate)):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == []
    assert probe.closed() == ["terminal", "inner", "outer"]


async def test_an_abandoned_inner_chain_is_closed_when_the_invocation_ends(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    async def first_only(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        try:
            async for event in next_fn(context):
                yield event
                break
            yield Done(short=True)
        finally:
            probe.log.append("first_only:closed")

    registry.add_middleware(STAGE, probe.wrap("outer"))
    registry.add_middleware(STAGE, first_only)
    registry.add_middleware(STAGE, probe.wrap("inner"))
    events = await collect(registry.invoke(STAGE, "c", probe.terminal()))
    assert events == [Event(chunk=1), Done(short=True)]
    # first_only ended on its own; what it abandoned is closed, innermost first, exactly once.
    assert probe.closed() == ["first_only", "outer", "terminal", "inner"]


async def test_each_next_fn_call_opens_a_fresh_inner_chain(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    async def retry_once(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        try:
            async for event in next_fn(context):
                if event.get("fail"):
                    raise RuntimeError("transient")
                yield event
        except RuntimeError:
            async for event in next_fn(context + "+retry"):
                yield event

    calls: list[str] = []

    async def flaky(context: str) -> AsyncGenerator[Event, None]:
        calls.append(context)
        attempt = len(calls)
        try:
            if attempt == 1:
                yield Event(fail=True)
            yield Done(context=context)
        finally:
            probe.log.append(f"terminal{attempt}:closed")

    registry.add_middleware(STAGE, retry_once)
    registry.add_middleware(STAGE, probe.wrap("inner"))
    events = await collect(registry.invoke(STAGE, "c", flaky))
    assert events == [Done(context="c+retry")]
    assert calls == ["c", "c+retry"]
    assert probe.log.count("inner:open") == 2
    # The retry ran to its end; the abandoned first attempt is closed when the invocation ends.
    assert probe.closed() == ["terminal2", "inner", "terminal1", "inner"]


async def test_a_plain_function_returning_next_fn_adds_no_layer(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    handed: list[AsyncIterator[Event]] = []

    def pass_through(context: str, next_fn: MiddlewareNext[str, Event]) -> AsyncIterator[Event]:
        return next_fn(context)

    async def outer(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        stream = next_fn(context)
        handed.append(stream)
        async for event in stream:
            yield event

    registry.add_middleware(STAGE, outer)
    registry.add_middleware(STAGE, pass_through)
    registry.add_middleware(STAGE, probe.wrap("inner"))
    async with aclosing(registry.invoke(STAGE, "c", probe.terminal())) as stream:
        assert await stream.__anext__() == Event(chunk=1)
    [inner] = handed
    assert inner.__qualname__.endswith("handler")  # the inner handler's own generator
    assert probe.closed() == ["terminal", "inner"]  # closed once each, innermost first


async def test_short_circuit_never_opens_the_terminal(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    async def cached(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        yield Done(cached=True)

    registry.add_middleware(STAGE, cached)
    events = await collect(registry.invoke(STAGE, "c", probe.terminal()))
    assert events == [Done(cached=True)]
    assert probe.log == []


class TestOutputPhase:
    async def test_result_is_held_and_yielded_last(self, registry: MiddlewareRegistry) -> None:
        async def trailing(context: str) -> AsyncGenerator[Event, None]:
            yield Event(chunk=1)
            yield Done(n=1)
            yield Event(trailer=True)

        registry.add_middleware(STAGE.Output, lambda result: result.replace(value=Done(n=2)))
        events = await collect(registry.invoke(STAGE, "c", trailing))
        assert events == [Event(chunk=1), Event(trailer=True), Done(n=2)]

    async def test_the_last_result_event_is_the_result(self, registry: MiddlewareRegistry) -> None:
        seen: list[Done] = []

        def record(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            seen.append(result.value)
            return result

        async def two_results(context: str) -> AsyncGenerator[Event, None]:
            yield Done(n=1)
            yield Done(n=2)

        registry.add_middleware(STAGE.Output, record)
        events = await collect(registry.invoke(STAGE, "c", two_results))
        assert seen == [Done(n=2)]
        assert events == [Done(n=2)]

    async def test_output_handler_skipped_when_stage_halts(
        self, registry: MiddlewareRegistry
    ) -> None:
        calls: list[object] = []

        async def interrupted(context: str) -> AsyncGenerator[Event, None]:
            yield Event(chunk=1)
            yield Halt(reason="approval")

        registry.add_middleware(STAGE.Output, lambda result: calls.append(result) or result)
        events = await collect(registry.invoke(STAGE, "c", interrupted))
        assert calls == []
        assert events == [Event(chunk=1), Halt(reason="approval")]

    async def test_each_event_of_a_class_that_may_halt_is_read(
        self, registry: MiddlewareRegistry
    ) -> None:
        class Maybe(Event):
            @property
            def is_interrupt(self) -> bool:
                return bool(self.get("halt"))

        calls: list[object] = []

        async def halts_late(context: str) -> AsyncGenerator[Event, None]:
            yield Maybe(chunk=1)
            yield Maybe(chunk=2)
            yield Maybe(halt=True)
            yield Done(n=1)

        registry.add_middleware(STAGE.Output, lambda result: calls.append(result) or result)
        for _ in range(2):  # the second run meets classes the chain has seen before
            events = await collect(registry.invoke(STAGE, "c", halts_late))
            assert events == [Maybe(chunk=1), Maybe(chunk=2), Maybe(halt=True), Done(n=1)]
        assert calls == []

    async def test_halt_forwards_a_held_result_and_later_events_untransformed(
        self, registry: MiddlewareRegistry
    ) -> None:
        async def result_then_halt(context: str) -> AsyncGenerator[Event, None]:
            yield Done(n=1)
            yield Halt()
            yield Done(n=3)

        registry.add_middleware(STAGE.Output, lambda result: result.replace(value=Done(n=99)))
        events = await collect(registry.invoke(STAGE, "c", result_then_halt))
        assert events == [Done(n=1), Halt(), Done(n=3)]

    async def test_no_result_skips_output_handlers(self, registry: MiddlewareRegistry) -> None:
        calls: list[object] = []

        async def no_result(context: str) -> AsyncGenerator[Event, None]:
            yield Event(chunk=1)

        registry.add_middleware(STAGE.Output, lambda result: calls.append(result) or result)
        assert await collect(registry.invoke(STAGE, "c", no_result)) == [Event(chunk=1)]
        assert calls == []

    async def test_async_input_and_output_handlers_are_awaited(
        self, registry: MiddlewareRegistry
    ) -> None:
        async def slow_input(context: str) -> str:
            await asyncio.sleep(0)
            return context + "!"

        async def slow_output(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            await asyncio.sleep(0)
            return result.replace(value=Done(context=result.value["context"] + "?"))

        registry.add_middleware(STAGE.Input, slow_input)
        registry.add_middleware(STAGE.Output, slow_output)
        events = await collect(registry.invoke(STAGE, "c", terminal))
        assert events[-1] == Done(context="c!?")

    async def test_returning_the_bare_event_names_the_handler(
        self, registry: MiddlewareRegistry
    ) -> None:
        def unwrapped(result: MiddlewareResult[Done]) -> Done:
            return result.value

        registry.add_middleware(STAGE.Output, unwrapped)  # type: ignore[arg-type]
        with pytest.raises(TypeError) as caught:
            await collect(registry.invoke(STAGE, "c", terminal))
        message = str(caught.value)
        assert "Output handler unwrapped (test.Output) returned Done" in message
        assert "must return a MiddlewareResult: use result.replace(value=...)" in message

    async def test_returning_a_wrapper_of_the_wrong_event_names_both(
        self, registry: MiddlewareRegistry
    ) -> None:
        def wrong(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            return MiddlewareResult(Event(not_a_result=True))  # type: ignore[arg-type]

        registry.add_middleware(STAGE.Output, wrong)
        with pytest.raises(
            TypeError, match=r"holding Event; its value must be a Done, the result event"
        ):
            await collect(registry.invoke(STAGE, "c", terminal))

    async def test_output_runs_once_around_a_retrying_wrap(
        self, registry: MiddlewareRegistry
    ) -> None:
        calls: list[Done] = []

        async def twice(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            async for _event in next_fn(context):
                pass
            async for event in next_fn(context + "2"):
                yield event

        def record(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            calls.append(result.value)
            return result

        registry.add_middleware(STAGE.Output, record)
        registry.add_middleware(STAGE, twice)
        await collect(registry.invoke(STAGE, "c", terminal))
        assert calls == [Done(context="c2")]


class TestNonGeneratorStreams:
    async def test_a_wrap_returning_an_async_iterator_is_adopted(
        self, registry: MiddlewareRegistry
    ) -> None:
        closed: list[bool] = []

        class Stream:
            def __init__(self, inner: AsyncIterator[Event]) -> None:
                self.inner = inner

            def __aiter__(self) -> Stream:
                return self

            async def __anext__(self) -> Event:
                return await self.inner.__anext__()

            async def aclose(self) -> None:
                closed.append(True)

        def handler(context: str, next_fn: MiddlewareNext[str, Event]) -> AsyncIterator[Event]:
            return Stream(next_fn(context))

        seen_types: list[str] = []

        async def outer(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            stream = next_fn(context)
            seen_types.append(type(stream).__name__)
            async for event in stream:
                yield event

        registry.add_middleware(STAGE, outer)
        registry.add_middleware(STAGE, handler)
        events = await collect(registry.invoke(STAGE, "c", terminal))
        assert events[-1] == Done(context="c")
        assert seen_types == ["async_generator"]  # next_fn keeps its AsyncGenerator promise
        assert closed == [True]

    async def test_an_adopted_iterator_failing_to_close_does_not_hide_the_error(
        self, registry: MiddlewareRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        boom = KeyError("original")

        class Failing:
            def __aiter__(self) -> Failing:
                return self

            async def __anext__(self) -> Event:
                raise boom

            async def aclose(self) -> None:
                raise OSError("cannot close")

        registry.add_middleware(STAGE, lambda context, next_fn: Failing())
        with (
            caplog.at_level(logging.ERROR, logger="strands_middleware"),
            pytest.raises(KeyError) as caught,
        ):
            await collect(registry.invoke(STAGE, "c", terminal))
        assert caught.value is boom
        assert "error while closing a middleware chain" in caplog.text

    async def test_a_wrap_returning_something_else_names_it(
        self, registry: MiddlewareRegistry
    ) -> None:
        def returns_list(context: str, next_fn: MiddlewareNext[str, Event]) -> Any:
            return [Done()]

        registry.add_middleware(STAGE, returns_list)
        with pytest.raises(
            TypeError, match=r"returns_list \(test\.Wrap\) returned list, not an async iterator"
        ):
            await collect(registry.invoke(STAGE, "c", terminal))


class TestCleanupFailures:
    async def test_a_failing_close_is_raised_after_everything_else_is_closed(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, fails_to_close)
        registry.add_middleware(STAGE, probe.wrap("inner"))
        stream = registry.invoke(STAGE, "c", probe.terminal())
        await stream.__anext__()
        with pytest.raises(OSError, match="cleanup failed"):
            await stream.aclose()
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_the_original_exception_wins_over_a_cleanup_failure(
        self, registry: MiddlewareRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        boom = KeyError("original")
        gate_open: list[AsyncGenerator[Event, None]] = []

        async def abandons(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            stream = next_fn(context)
            gate_open.append(stream)
            yield await stream.__anext__()
            raise boom

        registry.add_middleware(STAGE, abandons)
        registry.add_middleware(STAGE, fails_to_close)
        with (
            caplog.at_level(logging.ERROR, logger="strands_middleware"),
            pytest.raises(KeyError) as caught,
        ):
            await collect(registry.invoke(STAGE, "c", terminal))
        assert caught.value is boom
        assert "error while closing a middleware chain" in caplog.text


async def test_an_input_handler_error_propagates_before_anything_opens(
    registry: MiddlewareRegistry, probe: Probe
) -> None:
    boom = LookupError("bad context")

    def refuse(context: str) -> str:
        raise boom

    registry.add_middleware(STAGE.Input, refuse)
    registry.add_middleware(STAGE, probe.wrap("w"))
    with pytest.raises(LookupError) as caught:
        await collect(registry.invoke(STAGE, "c", probe.terminal()))
    assert caught.value is boom
    assert probe.log == []


class TestMistakesNameTheHandler:
    """Run-time mistakes in a handler are reported with the handler's name and what to do."""

    async def test_an_input_handler_that_forgets_to_return_is_named(
        self, registry: MiddlewareRegistry
    ) -> None:
        def forgetful(context: str) -> str:
            _ = context.upper()  # no return: the stage would run with None

        registry.add_middleware(STAGE.Input, forgetful)
        with pytest.raises(
            TypeError,
            match=r"Input handler forgetful \(test\.Input\) returned None; an Input handler "
            r"must return the context.*return context",
        ):
            await collect(registry.invoke(STAGE, "c", terminal))

    async def test_an_input_handler_returning_another_type_is_named(
        self, registry: MiddlewareRegistry
    ) -> None:
        registry.add_middleware(STAGE.Input, lambda context: [context])  # type: ignore[arg-type,return-value]
        with pytest.raises(
            TypeError, match=r"Input handler <lambda> \(test\.Input\) returned list"
        ):
            await collect(registry.invoke(STAGE, "c", terminal))

    async def test_next_fn_called_without_the_context_names_the_caller(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        async def hurried(context: str, next_fn: Any) -> AsyncGenerator[Event, None]:
            async for event in next_fn():
                yield event

        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, hurried)
        with pytest.raises(
            TypeError,
            match=r"hurried \(test\.Wrap\) called next_fn\(\) without the context: "
            r"call next_fn\(context\)",
        ):
            await collect(registry.invoke(STAGE, "c", terminal))

    async def test_the_outermost_handler_calling_next_fn_without_context_is_named(
        self, registry: MiddlewareRegistry
    ) -> None:
        async def alone(context: str, next_fn: Any) -> AsyncGenerator[Event, None]:
            async for event in next_fn():
                yield event

        registry.add_middleware(STAGE, alone)
        with pytest.raises(TypeError, match=r"alone \(test\.Wrap\) called next_fn\(\)"):
            await collect(registry.invoke(STAGE, "c", terminal))


class TestFailingHandler:
    """`failing_handler` names the handler whose own code raised, for hosts that log it."""

    async def test_a_wrap_handler_raising_in_a_helper_is_found(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        def lookup(context: str) -> str:
            return {"input": context}["inptu"]

        async def typo(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            lookup(context)
            async for event in next_fn(context):
                yield event

        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, typo)
        with pytest.raises(KeyError) as caught:
            await collect(registry.invoke(STAGE, "c", terminal))
        culprit = registry.failing_handler(STAGE, caught.value)
        assert culprit is not None
        assert (culprit.phase, culprit.handler, culprit.name) == (STAGE.Wrap, typo, "typo")

    async def test_input_and_output_handlers_are_found(self, registry: MiddlewareRegistry) -> None:
        def bad_output(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            raise ValueError("bad")

        registry.add_middleware(STAGE.Output, bad_output)
        with pytest.raises(ValueError) as caught:
            await collect(registry.invoke(STAGE, "c", terminal))
        culprit = registry.failing_handler(STAGE, caught.value)
        assert culprit is not None and culprit.phase is STAGE.Output

    async def test_an_error_from_the_terminal_blames_no_handler(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        boom = ConnectionError("down")

        async def failing(context: str) -> AsyncGenerator[Event, None]:
            raise boom
            yield Event()  # pragma: no cover

        registry.add_middleware(STAGE, probe.wrap("outer"))
        with pytest.raises(ConnectionError):
            await collect(registry.invoke(STAGE, "c", failing))
        assert registry.failing_handler(STAGE, boom) is None


class TestOpen:
    """`registry.open`: the consumer's ``async with`` drives the chain, with no driver hop."""

    async def test_the_block_iterates_the_outermost_handlers_own_generator(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        outer = probe.wrap("outer")
        registry.add_middleware(STAGE, outer)
        registry.add_middleware(STAGE, probe.wrap("inner"))
        async with registry.open(STAGE, "c", terminal) as stream:
            assert getattr(stream, "ag_code", None) is outer.__code__
            events = [event async for event in stream]
        assert events == [Event(chunk=1), Event(chunk=2), Done(context="c")]

    async def test_a_stage_without_handlers_streams_its_terminal_and_closes_it(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        async with registry.open(STAGE, "c", probe.terminal()) as stream:
            async for _event in stream:
                break
        assert probe.closed() == ["terminal"]

    async def test_leaving_by_break_closes_everything_once_innermost_first(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, probe.wrap("inner"))
        async with registry.open(STAGE, "c", probe.terminal()) as stream:
            async for _event in stream:
                break
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_what_a_handler_abandoned_is_closed_when_the_block_ends(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        async def first_only(
            context: str, next_fn: MiddlewareNext[str, Event]
        ) -> AsyncGenerator[Event, None]:
            async for event in next_fn(context):
                yield event
                break
            yield Done(short=True)

        registry.add_middleware(STAGE, first_only)
        registry.add_middleware(STAGE, probe.wrap("inner"))
        async with registry.open(STAGE, "c", probe.terminal()) as stream:
            events = [event async for event in stream]
            assert probe.closed() == []
        assert events == [Event(chunk=1), Done(short=True)]
        assert probe.closed() == ["terminal", "inner"]

    async def test_an_exception_in_the_block_closes_everything_and_leaves_as_it_is(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        boom = ValueError("consumer failed")
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, probe.wrap("inner"))
        with pytest.raises(ValueError) as caught:
            async with registry.open(STAGE, "c", probe.terminal()) as stream:
                async for _event in stream:
                    raise boom
        assert caught.value is boom
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_the_exception_leaving_the_block_wins_over_a_close_failure(
        self, registry: MiddlewareRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        boom = KeyError("original")

        registry.add_middleware(STAGE, fails_to_close)
        with (
            caplog.at_level(logging.ERROR, logger="strands_middleware"),
            pytest.raises(KeyError) as caught,
        ):
            async with registry.open(STAGE, "c", terminal) as stream:
                async for _event in stream:
                    raise boom
        assert caught.value is boom
        assert "error while closing a middleware chain" in caplog.text

    async def test_a_close_failure_is_raised_when_nothing_else_leaves_the_block(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, fails_to_close)
        registry.add_middleware(STAGE, probe.wrap("inner"))
        with pytest.raises(OSError, match="cleanup failed"):
            async with registry.open(STAGE, "c", probe.terminal()) as stream:
                async for _event in stream:
                    break
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_a_generator_holding_the_block_closed_early_closes_the_chain(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, probe.wrap("inner"))

        async def runner() -> AsyncGenerator[Event, None]:
            async with registry.open(STAGE, "c", probe.terminal()) as stream:
                async for event in stream:
                    yield event

        events = runner()
        await events.__anext__()
        await events.aclose()
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_cancellation_in_the_block_closes_everything_and_propagates(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("outer"))
        registry.add_middleware(STAGE, probe.wrap("inner"))

        async def consume() -> None:
            async with registry.open(STAGE, "c", probe.terminal(gate=asyncio.Event())) as stream:
                async for _event in stream:
                    pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert probe.closed() == ["terminal", "inner", "outer"]

    async def test_input_handlers_run_on_entering_the_block(
        self, registry: MiddlewareRegistry
    ) -> None:
        registry.add_middleware(STAGE.Input, lambda context: f"{context}+input")
        registry.add_middleware(STAGE, Probe().wrap("w"))
        async with registry.open(STAGE, "c", terminal) as stream:
            events = [event async for event in stream]
        assert events[-1] == Done(context="c+input")

    async def test_an_input_handler_error_leaves_the_block_before_anything_opens(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        def forgets_to_return(context: str) -> None:
            return None

        registry.add_middleware(STAGE.Input, forgets_to_return)
        registry.add_middleware(STAGE, probe.wrap("w"))
        with pytest.raises(TypeError, match="forgets_to_return"):
            async with registry.open(STAGE, "c", probe.terminal()):
                pytest.fail("the block must not run")
        assert probe.log == []

    async def test_output_handlers_still_transform_the_result(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        def mark(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
            return result.replace(value=Done(result.value, marked=True))

        registry.add_middleware(STAGE.Output, mark)
        registry.add_middleware(STAGE, probe.wrap("w"))
        async with registry.open(STAGE, "c", probe.terminal()) as stream:
            events = [event async for event in stream]
        assert events == [Event(chunk=1), Done(ok=True, marked=True)]
        assert probe.closed() == ["terminal", "w"]

    async def test_input_handlers_run_on_entering_the_block_beside_output_handlers(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        seen: list[str] = []

        def remember(context: str) -> str:
            seen.append(context)
            return f"{context}+input"

        registry.add_middleware(STAGE.Input, remember)
        registry.add_middleware(STAGE.Output, lambda result: result)
        registry.add_middleware(STAGE, probe.wrap("w"))
        async with registry.open(STAGE, "c", terminal) as stream:
            assert seen == ["c"]
            events = [event async for event in stream]
        assert events[-1] == Done(context="c+input")
        assert seen == ["c"]

    async def test_an_opened_chain_is_one_run(
        self, registry: MiddlewareRegistry, probe: Probe
    ) -> None:
        registry.add_middleware(STAGE, probe.wrap("w"))
        opened = registry.open(STAGE, "c", terminal)
        async with opened as stream:
            events = [event async for event in stream]
        assert events[-1] == Done(context="c")
        with pytest.raises(RuntimeError, match="already entered: it is one run"):
            async with opened:
                pytest.fail("the block must not run")

    async def test_a_terminal_that_is_no_async_iterator_is_named_without_handlers(
        self, registry: MiddlewareRegistry
    ) -> None:
        def returns_a_list(context: str) -> Any:
            return [Done()]

        with pytest.raises(TypeError, match=r"returns_a_list \(terminal of test\) returned list"):
            async with registry.open(STAGE, "c", returns_a_list):
                pytest.fail("the block must not run")
