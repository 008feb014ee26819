"""What a type checker must infer for well-formed handlers (type-checked, never run)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from typing_extensions import assert_type

from strands_middleware import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareNext,
    MiddlewareOutputPhase,
    MiddlewareRegistry,
    MiddlewareResult,
    MiddlewareWrapPhase,
)
from strands_middleware.engine._chain import Outbound  # for host authors

from ._stage_fixtures import Done, Event, SearchContext, SearchStage

registry = MiddlewareRegistry()

# Phase sub-tokens carry the stage's three parameters.
assert_type(SearchStage.Input, MiddlewareInputPhase[SearchContext, Done, Event])
assert_type(SearchStage.Wrap, MiddlewareWrapPhase[SearchContext, Done, Event])
assert_type(SearchStage.Output, MiddlewareOutputPhase[SearchContext, Done, Event])
assert_type(SearchStage.result_event, type[Done])


# A decorated Wrap handler becomes a Middleware bound to the stage's parameters.
@SearchStage.wrap
async def timing(
    context: SearchContext, next_fn: MiddlewareNext[SearchContext, Event]
) -> AsyncGenerator[Event, None]:
    assert_type(next_fn(context), AsyncGenerator[Event, None])
    async for event in next_fn(context):
        yield event


assert_type(timing, Middleware[SearchContext, Done, Event])


# Input and Output builders, sync and async.
def lower(context: SearchContext) -> SearchContext:
    return SearchContext(query=context.query.lower())


async def lower_later(context: SearchContext) -> SearchContext:
    return context


def tag(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
    assert_type(result.value, Done)
    return result.replace(value=Done(tagged=True))


async def tag_later(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
    return result


assert_type(SearchStage.input(lower), Middleware[SearchContext, Done, Event])
assert_type(SearchStage.input(lower_later), Middleware[SearchContext, Done, Event])
assert_type(SearchStage.output(tag), Middleware[SearchContext, Done, Event])
assert_type(SearchStage.output(tag_later), Middleware[SearchContext, Done, Event])

registry.use(timing, SearchStage.input(lower), [SearchStage.output(tag)])

# The token form: one overload per phase.
registry.add_middleware(SearchStage.Input, lower)
registry.add_middleware(SearchStage.Input, lower_later)
registry.add_middleware(SearchStage.Output, tag)
registry.add_middleware(SearchStage.Output, tag_later)
registry.add_middleware(SearchStage.Wrap, timing.handler)

# Lambdas get their parameter types from the phase token.
registry.add_middleware(SearchStage.Input, lambda context: SearchContext(context.query.strip()))
registry.add_middleware(SearchStage.Output, lambda result: result.replace(value=result.value))


# A Wrap handler annotated with AsyncIterator works as well as one annotated AsyncGenerator.
async def passthrough(
    context: SearchContext, next_fn: MiddlewareNext[SearchContext, Event]
) -> AsyncIterator[Event]:
    async for event in next_fn(context):
        yield event


registry.add_middleware(SearchStage, passthrough)


# Running a stage.
async def search(context: SearchContext) -> AsyncGenerator[Event, None]:
    yield Done(query=context.query)


async def run() -> None:
    stream = registry.invoke(SearchStage, SearchContext("q"), search)
    assert_type(stream, AsyncGenerator[Event, None])
    result = await registry.run(SearchStage, SearchContext("q"), search)
    assert_type(result, Done)
    composed = registry.compose(SearchStage, search)
    assert_type(composed, MiddlewareNext[SearchContext, Event])
    # With an Outbound the events leave as the host's, whatever it makes of them.
    outbound = Outbound(lambda event: event.get("query"), lambda error: error)
    translated = registry.invoke(SearchStage, SearchContext("q"), search, outbound=outbound)
    assert_type(translated, AsyncGenerator[Any, None])
    assert_type(
        registry.invoke(SearchStage, SearchContext("q"), search, outbound=None),
        AsyncGenerator[Event, None],
    )


async def run_in_a_block() -> None:
    # The consumer drives the chain: the block's stream has the stage's event type.
    async with registry.open(SearchStage, SearchContext("q"), search) as stream:
        assert_type(stream, AsyncIterator[Event])
        async for event in stream:
            assert_type(event, Event)


def run_maybe_translated(outbound: Outbound | None) -> None:
    # An Outbound that may be None: the events may be the host's.
    stream = registry.invoke(SearchStage, SearchContext("q"), search, outbound=outbound)
    assert_type(stream, AsyncGenerator[Any, None])
