"""Property tests: random chains against a reference model of what they must do.

Each example registers a random mix of Input, Output and Wrap handlers (pass-through, filtering,
injecting, short-circuiting, retrying, raising before ``next_fn``, mid-stream or after it) in a
random order, runs the stage with a consumer that drains it, stops early or is cancelled, and
checks four laws:

1. the events the consumer saw are what the reference model predicts (which fixes phase order
   and registration order, because every layer leaves its mark on the context and the result);
2. every generator that started was closed exactly once, and where the registry closed them
   (rather than them ending on their own), inner ones were closed before the ones around them;
3. an exception reaches the caller as the very object that was raised;
4. the result is the one the model predicts.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult, MiddlewareStage


class Ev(dict[str, Any]):
    pass


class Done(Ev):
    pass


@dataclass(frozen=True)
class Ctx:
    path: str
    parent: int = -1


STAGE = MiddlewareStage[Ctx, Done, Ev]("prop", result_type=Done)
WRAP_KINDS = [
    "pass",
    "filter",
    "inject",
    "short",
    "retry",
    "raise_before",
    "raise_mid",
    "raise_after",
]


class Raised(Exception):
    pass


@dataclass
class World:
    """What the instrumented handlers record during one run."""

    next_id: int = 0
    parents: dict[int, int] = field(default_factory=dict)
    closes: list[tuple[int, str]] = field(default_factory=list)
    closes_when_done: list[tuple[int, str]] = field(default_factory=list)
    raised: dict[str, Raised] = field(default_factory=dict)

    def opened(self, ctx: Ctx) -> int:
        ident = self.next_id
        self.next_id += 1
        self.parents[ident] = ctx.parent
        return ident

    def closed(self, ident: int) -> None:
        # GeneratorExit in flight means the registry closed it; anything else means it ended
        # on its own (returned, raised, or was cancelled through).
        how = "registry" if isinstance(sys.exc_info()[1], GeneratorExit) else "own"
        self.closes.append((ident, how))


def make_terminal(world: World) -> Any:
    async def terminal(ctx: Ctx) -> AsyncGenerator[Ev, None]:
        ident = world.opened(ctx)
        try:
            for event in (Ev(chunk=1), Ev(chunk=2), Done(path=ctx.path)):
                await asyncio.sleep(0)  # a point where cancellation can land
                yield event
        finally:
            world.closed(ident)

    return terminal


def make_wrap(world: World, kind: str, name: str) -> Any:
    async def handler(ctx: Ctx, next_fn: MiddlewareNext[Ctx, Ev]) -> AsyncGenerator[Ev, None]:
        ident = world.opened(ctx)

        def inner(suffix: str = "") -> AsyncGenerator[Ev, None]:
            return next_fn(Ctx(f"{ctx.path}>{name}{suffix}", parent=ident))

        try:
            if kind == "short":
                yield Done(short=name)
                return
            if kind == "raise_before":
                world.raised[name] = Raised(name)
                raise world.raised[name]
            if kind == "retry":
                async for _event in inner("#1"):
                    pass
                async for event in inner("#2"):
                    yield event
                return
            if kind == "inject":
                yield Ev(inj=name, pos="before")
            async for event in inner():
                if kind == "filter" and event.get("chunk") == 2:
                    continue
                yield event
                if kind == "raise_mid":
                    world.raised[name] = Raised(name)
                    raise world.raised[name]
            if kind == "inject":
                yield Ev(inj=name, pos="after")
            if kind == "raise_after":
                world.raised[name] = Raised(name)
                raise world.raised[name]
        finally:
            world.closed(ident)

    return handler


def make_input(name: str) -> Any:
    def transform(ctx: Ctx) -> Ctx:
        return replace(ctx, path=f"{ctx.path}>{name}")

    return transform


def make_output(name: str) -> Any:
    def transform(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        return result.replace(
            value=Done({**result.value, "out": result.value.get("out", "") + name})
        )

    return transform


# --- the reference model -------------------------------------------------------------------

Stream = tuple[list[Ev], "str | None"]  # events, then the name of the handler that raised (if any)


def model_wrap(wraps: list[tuple[str, str]], index: int, path: str) -> Stream:
    if index == len(wraps):
        return [Ev(chunk=1), Ev(chunk=2), Done(path=path)], None
    kind, name = wraps[index]

    def inner(suffix: str = "") -> Stream:
        return model_wrap(wraps, index + 1, f"{path}>{name}{suffix}")

    if kind == "short":
        return [Done(short=name)], None
    if kind == "raise_before":
        return [], name
    if kind == "retry":
        _first_events, first_error = inner("#1")
        if first_error is not None:
            return [], first_error
        return inner("#2")
    events, error = inner()
    if kind == "filter":
        return [e for e in events if e.get("chunk") != 2], error
    if kind == "inject":
        after = [Ev(inj=name, pos="after")] if error is None else []
        return [Ev(inj=name, pos="before"), *events, *after], error
    if kind == "raise_mid":
        return (events[:1], name) if events else (events, error)
    if kind == "raise_after":
        return (events, error) if error is not None else (events, name)
    return events, error


def model(registrations: list[tuple[str, str]]) -> Stream:
    path = ""
    for phase, name in registrations:
        if phase == "input":
            path = f"{path}>{name}"
    wraps = [
        (kind, name)
        for phase, kind_name in registrations
        if phase == "wrap"
        for kind, name in [kind_name.split(":")]
    ]
    outputs = [name for phase, name in registrations if phase == "output"]
    events, error = model_wrap(wraps, 0, path)
    if not outputs:
        return events, error
    passed = [e for e in events if not isinstance(e, Done)]
    results = [e for e in events if isinstance(e, Done)]
    if error is not None or not results:
        return passed, error
    result = results[-1]
    for name in reversed(outputs):
        result = Done({**result, "out": result.get("out", "") + name})
    return [*passed, result], None


# --- the property ---------------------------------------------------------------------------

registration = st.one_of(
    st.tuples(st.just("wrap"), st.sampled_from(WRAP_KINDS)),
    st.just(("input", "")),
    st.just(("output", "")),
)
consumer = st.one_of(
    st.just(("drain", 0)),
    st.tuples(st.just("stop"), st.integers(0, 7)),
    st.tuples(st.just("cancel"), st.integers(0, 7)),
)


def build(
    raw: list[tuple[str, str]], world: World
) -> tuple[MiddlewareRegistry, list[tuple[str, str]]]:
    registry = MiddlewareRegistry()
    named: list[tuple[str, str]] = []
    for position, (phase, kind) in enumerate(raw):
        if phase == "wrap":
            name = f"w{position}"
            registry.add_middleware(STAGE, make_wrap(world, kind, name))
            named.append(("wrap", f"{kind}:{name}"))
        elif phase == "input":
            name = f"i{position}"
            registry.add_middleware(STAGE.Input, make_input(name))
            named.append(("input", name))
        else:
            name = f"o{position}"
            registry.add_middleware(STAGE.Output, make_output(name))
            named.append(("output", name))
    return registry, named


async def consume(
    registry: MiddlewareRegistry, world: World, how: str, count: int, driver: str
) -> tuple[list[Ev], BaseException | None]:
    """Run the stage through ``registry.invoke`` or, with ``driver="open"``, ``registry.open``."""
    seen: list[Ev] = []

    async def read(stream: AsyncIterator[Ev]) -> None:
        if how == "stop" and count == 0:
            return
        async for event in stream:
            seen.append(event)
            if how == "stop" and len(seen) == count:
                return
            if how == "cancel" and len(seen) == count:
                task = asyncio.current_task()
                assert task is not None
                task.cancel()

    async def body() -> None:
        if driver == "open":
            async with registry.open(STAGE, Ctx(""), make_terminal(world)) as stream:
                await read(stream)
            return
        invoked = registry.invoke(STAGE, Ctx(""), make_terminal(world))
        try:
            await read(invoked)
        finally:
            await invoked.aclose()

    task = asyncio.ensure_future(body())
    if how == "cancel" and count == 0:
        task.cancel()
    try:
        await task
    except BaseException as exc:
        return seen, exc
    finally:
        # Law 2 is about what the chain closed: a generator left open would be closed later
        # by the event loop's shutdown, which must not count.
        world.closes_when_done = list(world.closes)
    return seen, None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    raw=st.lists(registration, max_size=7),
    how_count=consumer,
    driver=st.sampled_from(["invoke", "open"]),
)
def test_random_chains_obey_the_laws(
    raw: list[tuple[str, str]], how_count: tuple[str, int], driver: str
) -> None:
    how, count = how_count
    world = World()
    registry, named = build(raw, world)
    seen, error = asyncio.run(consume(registry, world, how, count, driver))
    expected_events, expected_error = model(named)

    # Law 1 and 4: what the consumer saw, result included.
    if how == "drain":
        assert seen == expected_events
    else:
        assert seen == expected_events[: len(seen)]
        if how == "stop" and error is None:
            assert len(seen) == min(count, len(expected_events)) or expected_error is None

    # Law 3: the exception is the object that was raised.
    if how == "drain" or (how == "stop" and len(expected_events) < count):
        if expected_error is None:
            assert error is None
        else:
            assert error is world.raised[expected_error]
    elif how == "cancel":
        assert error is None or isinstance(error, (asyncio.CancelledError, Raised))
        if isinstance(error, Raised):
            assert expected_error is not None and error is world.raised[expected_error]

    # Law 2: closed exactly once; registry-closed generators innermost first.
    closes = world.closes_when_done
    closed_ids = [ident for ident, _how in closes]
    assert sorted(closed_ids) == sorted(world.parents), "every started generator closes once"
    assert len(closed_ids) == len(set(closed_ids))
    order = {ident: position for position, (ident, _how) in enumerate(closes)}
    by_registry = {ident for ident, closer in closes if closer == "registry"}
    for ident in by_registry:
        ancestor = world.parents[ident]
        while ancestor != -1:
            if ancestor in by_registry:
                assert order[ident] < order[ancestor], "inner closed before outer"
            ancestor = world.parents[ancestor]
