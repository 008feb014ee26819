"""MiddlewareRegistry: registration, its checks, phase order and chain caching."""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import pytest

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult

from .conftest import OTHER, STAGE, Done, Event, collect, terminal


def recorder(log: list[str], name: str) -> Any:
    async def wrap(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        log.append(f"{name}:before")
        async for event in next_fn(f"{context}>{name}"):
            yield event
        log.append(f"{name}:after")

    return wrap


def input_recorder(log: list[str], name: str) -> Any:
    def transform(context: str) -> str:
        log.append(name)
        return f"{context}>{name}"

    return transform


def output_recorder(log: list[str], name: str) -> Any:
    def transform(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        log.append(name)
        return result.replace(value=Done(context=f"{result.value['context']}<{name}"))

    return transform


async def test_phases_run_input_wrap_output_whatever_the_registration_order(
    registry: MiddlewareRegistry,
) -> None:
    log: list[str] = []
    registry.add_middleware(STAGE.Output, output_recorder(log, "out1"))
    registry.add_middleware(STAGE, recorder(log, "wrap1"))
    registry.add_middleware(STAGE.Input, input_recorder(log, "in1"))
    registry.add_middleware(STAGE.Output, output_recorder(log, "out2"))
    registry.add_middleware(STAGE.Wrap, recorder(log, "wrap2"))
    registry.add_middleware(STAGE.Input, input_recorder(log, "in2"))

    events = await collect(registry.invoke(STAGE, "ctx", terminal))

    assert log == [
        "in1",
        "in2",
        "wrap1:before",
        "wrap2:before",
        "wrap2:after",
        "wrap1:after",
        "out2",
        "out1",
    ]
    # The first registered Output handler is the outermost: it sees the other's result.
    assert events[-1] == Done(context="ctx>in1>in2>wrap1>wrap2<out2<out1")


async def test_bare_stage_token_registers_a_wrap_handler(registry: MiddlewareRegistry) -> None:
    log: list[str] = []
    registry.add_middleware(STAGE, recorder(log, "w"))
    await collect(registry.invoke(STAGE, "c", terminal))
    assert log == ["w:before", "w:after"]


async def test_stages_have_separate_chains(registry: MiddlewareRegistry) -> None:
    log: list[str] = []
    registry.add_middleware(OTHER, recorder(log, "other"))
    events = await collect(registry.invoke(STAGE, "c", terminal))
    assert log == []
    assert events[-1] == Done(context="c")
    assert registry.has_handlers(OTHER)
    assert not registry.has_handlers(STAGE)


def test_compose_without_handlers_is_the_terminal_itself(registry: MiddlewareRegistry) -> None:
    assert registry.compose(STAGE, terminal) is terminal


async def test_invoke_without_handlers_runs_the_terminal_directly(
    registry: MiddlewareRegistry,
) -> None:
    stream = registry.invoke(STAGE, "c", terminal)
    assert stream.ag_code is terminal.__code__  # type: ignore[attr-defined]
    assert await collect(stream) == [Event(chunk=1), Event(chunk=2), Done(context="c")]


async def test_compose_returns_a_reusable_next_fn(registry: MiddlewareRegistry) -> None:
    registry.add_middleware(STAGE.Input, lambda context: context.upper())
    composed = registry.compose(STAGE, terminal)
    assert (await collect(composed("a")))[-1] == Done(context="A")
    assert (await collect(composed("b")))[-1] == Done(context="B")


def test_chain_is_compiled_once_per_registration(registry: MiddlewareRegistry) -> None:
    registry.add_middleware(STAGE, recorder([], "w"))
    first = registry._chains[STAGE]
    registry.compose(STAGE, terminal)
    registry.invoke(STAGE, "c", terminal)
    assert registry._chains[STAGE] is first
    registry.add_middleware(STAGE.Input, lambda context: context)
    assert registry._chains[STAGE] is not first


async def test_registration_during_an_invocation_does_not_change_it(
    registry: MiddlewareRegistry,
) -> None:
    log: list[str] = []

    async def registers_more(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        registry.add_middleware(STAGE, recorder(log, "late"))
        registry.add_middleware(STAGE.Output, output_recorder(log, "late-out"))
        async for event in next_fn(context):
            yield event

    registry.add_middleware(STAGE, registers_more)
    first = await collect(registry.invoke(STAGE, "c", terminal))
    assert log == []
    assert first[-1] == Done(context="c")
    await collect(registry.invoke(STAGE, "c", terminal))
    assert "late:before" in log
    assert "late-out" in log


def test_handlers_lists_registrations_in_order(registry: MiddlewareRegistry) -> None:
    wrap = recorder([], "w")
    transform = input_recorder([], "i")
    registry.add_middleware(STAGE, wrap)
    registry.add_middleware(STAGE.Input, transform)
    assert registry.handlers(STAGE) == ((STAGE.Wrap, wrap), (STAGE.Input, transform))
    assert registry.handlers(OTHER) == ()


async def test_use_registers_middleware_objects_and_iterables_in_order(
    registry: MiddlewareRegistry,
) -> None:
    log: list[str] = []

    class Bundle:
        def __iter__(self) -> Any:
            yield STAGE.input(input_recorder(log, "bundle-in"))
            yield STAGE.wrap(recorder(log, "bundle-wrap"))

    registry.use(
        STAGE.wrap(recorder(log, "first")), Bundle(), [STAGE.input(input_recorder(log, "x"))]
    )
    await collect(registry.invoke(STAGE, "c", terminal))
    assert log == [
        "bundle-in",
        "x",
        "first:before",
        "bundle-wrap:before",
        "bundle-wrap:after",
        "first:after",
    ]


def test_use_refuses_a_bare_function_and_registers_nothing(registry: MiddlewareRegistry) -> None:
    def handler(context: str) -> str:
        return context

    with pytest.raises(TypeError, match=r"argument 1 is .*handler.*stage\.wrap\(fn\)"):
        registry.use(STAGE.input(handler), handler)  # type: ignore[arg-type]
    assert not registry.has_handlers(STAGE)


def test_use_refuses_a_string(registry: MiddlewareRegistry) -> None:
    with pytest.raises(TypeError, match="use\\(\\) takes Middleware objects"):
        registry.use("not middleware")  # type: ignore[arg-type]


def test_use_refuses_an_iterable_holding_something_else(registry: MiddlewareRegistry) -> None:
    with pytest.raises(TypeError, match="argument 0 is 42"):
        registry.use([STAGE.input(lambda c: c), 42])  # type: ignore[list-item]
    assert not registry.has_handlers(STAGE)


def test_add_middleware_refuses_a_token_that_is_not_a_stage(registry: MiddlewareRegistry) -> None:
    with pytest.raises(TypeError, match="add_middleware\\(\\) takes a MiddlewareStage"):
        registry.add_middleware("invokeModel", lambda c: c)  # type: ignore[call-overload]
    assert not registry.has_handlers(STAGE)


class TestHandlerShapeChecks:
    """Every shape error names the stage, the phase and the handler, and registers nothing."""

    def test_wrap_coroutine_function(self, registry: MiddlewareRegistry) -> None:
        async def fetch(context: str, next_fn: object) -> None:
            return None

        with pytest.raises(TypeError) as caught:
            registry.add_middleware(STAGE, fetch)  # type: ignore[arg-type]
        message = str(caught.value)
        assert "cannot register" in message
        assert "test.Wrap" in message
        assert "fetch" in message
        assert "coroutine function (async def without yield)" in message
        assert not registry.has_handlers(STAGE)

    def test_wrap_sync_generator(self, registry: MiddlewareRegistry) -> None:
        def gen(context: str, next_fn: object) -> Any:
            yield context

        with pytest.raises(TypeError, match=r"test\.Wrap.*synchronous generator.*async def"):
            registry.add_middleware(STAGE.Wrap, gen)

    def test_wrap_with_one_parameter_suggests_input_or_output(
        self, registry: MiddlewareRegistry
    ) -> None:
        with pytest.raises(
            TypeError, match=r"cannot be called as .*\(context, next_fn\).*stage\.input"
        ):
            registry.add_middleware(STAGE, lambda context: context)  # type: ignore[arg-type]

    def test_wrap_not_callable(self, registry: MiddlewareRegistry) -> None:
        with pytest.raises(TypeError, match=r"test\.Wrap.*got a int, not callable"):
            registry.add_middleware(STAGE, 5)  # type: ignore[call-overload]

    def test_input_given_a_wrap_handler(self, registry: MiddlewareRegistry) -> None:
        with pytest.raises(TypeError) as caught:
            registry.add_middleware(STAGE.Input, recorder([], "w"))
        message = str(caught.value)
        assert "test.Input" in message
        assert "generator function, the shape of a Wrap handler" in message
        assert "stage.wrap" in message

    def test_input_with_two_required_parameters(self, registry: MiddlewareRegistry) -> None:
        def two(context: str, extra: str) -> str:
            return context

        with pytest.raises(TypeError, match=r"test\.Input.*two cannot be called as two\(context\)"):
            registry.add_middleware(STAGE.Input, two)  # type: ignore[arg-type]

    def test_output_given_a_wrap_handler(self, registry: MiddlewareRegistry) -> None:
        with pytest.raises(TypeError, match=r"test\.Output.*shape of a Wrap handler"):
            registry.add_middleware(STAGE.Output, recorder([], "w"))

    def test_output_not_callable(self, registry: MiddlewareRegistry) -> None:
        with pytest.raises(TypeError, match=r"test\.Output.*not callable"):
            registry.add_middleware(STAGE.Output, None)  # type: ignore[arg-type]

    async def test_callable_objects_and_partials_are_accepted(
        self, registry: MiddlewareRegistry
    ) -> None:
        class Wrapper:
            async def __call__(
                self, context: str, next_fn: MiddlewareNext[str, Event]
            ) -> AsyncIterator[Event]:
                async for event in next_fn(context + "!"):
                    yield event

        def suffix(context: str, text: str) -> str:
            return context + text

        registry.add_middleware(STAGE, Wrapper())
        registry.add_middleware(STAGE.Input, functools.partial(suffix, text="?"))
        events = await collect(registry.invoke(STAGE, "c", terminal))
        assert events[-1] == Done(context="c?!")

    def test_callable_object_with_a_coroutine_call_is_refused(
        self, registry: MiddlewareRegistry
    ) -> None:
        class Broken:
            async def __call__(self, context: str, next_fn: object) -> None:
                return None

        with pytest.raises(TypeError, match="coroutine function"):
            registry.add_middleware(STAGE, Broken())  # type: ignore[arg-type]

    def test_partial_is_named_in_errors(self, registry: MiddlewareRegistry) -> None:
        async def fetch(context: str, next_fn: object, extra: int) -> None:
            return None

        with pytest.raises(TypeError, match=r"functools\.partial\(.*fetch\)"):
            registry.add_middleware(STAGE, functools.partial(fetch, extra=1))  # type: ignore[arg-type]


async def test_run_returns_the_result_and_reports_every_event(
    registry: MiddlewareRegistry,
) -> None:
    seen: list[Event] = []
    registry.add_middleware(STAGE.Input, lambda context: context + "!")
    result = await registry.run(STAGE, "c", terminal, on_event=seen.append)
    assert result == Done(context="c!")
    assert seen == [Event(chunk=1), Event(chunk=2), Done(context="c!")]


async def test_run_without_a_result_raises_naming_the_stage(registry: MiddlewareRegistry) -> None:
    async def drops(
        context: str, next_fn: MiddlewareNext[str, Event]
    ) -> AsyncGenerator[Event, None]:
        async for event in next_fn(context):
            if not isinstance(event, Done):
                yield event

    registry.add_middleware(STAGE, drops)
    with pytest.raises(RuntimeError, match=r"stage 'test' ended without a Done"):
        await registry.run(STAGE, "c", terminal)
