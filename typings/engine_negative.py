"""Mistakes a type checker must reject (type-checked, never run).

Each case carries both a mypy ``type: ignore[code]`` and a ``pyright: ignore[rule]``. With
mypy's ``warn_unused_ignores`` and pyright's ``reportUnnecessaryTypeIgnoreComment``, a case that
stops being an error fails the check, so these lines pin the contract in both directions.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult
from strands_middleware.engine._chain import Outbound  # for host authors

from ._stage_fixtures import Done, Event, FetchContext, FetchStage, SearchContext, SearchStage

registry = MiddlewareRegistry()


async def search_wrap(
    context: SearchContext, next_fn: MiddlewareNext[SearchContext, Event]
) -> AsyncGenerator[Event, None]:
    async for event in next_fn(context):
        yield event


def search_input(context: SearchContext) -> SearchContext:
    return context


def bare_event_output(result: MiddlewareResult[Done]) -> Done:
    return result.value


# A handler written for one stage, registered on another.
registry.add_middleware(FetchStage, search_wrap)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
FetchStage.wrap(search_wrap)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
FetchStage.input(search_input)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# An Input handler on the Output token.
registry.add_middleware(SearchStage.Output, search_input)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# An Output handler that returns the bare event instead of a MiddlewareResult.
registry.add_middleware(SearchStage.Output, bare_event_output)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
SearchStage.output(bare_event_output)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# A Wrap handler where an Input handler is due.
registry.add_middleware(SearchStage.Input, search_wrap)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
SearchStage.input(search_wrap)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# An Input handler where a Wrap handler is due.
registry.add_middleware(SearchStage, search_input)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]


# next_fn called with the wrong context type.
async def confused(
    context: SearchContext, next_fn: MiddlewareNext[SearchContext, Event]
) -> AsyncGenerator[Event, None]:
    async for event in next_fn(FetchContext(url="x")):  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        yield event


# A lambda Input handler that returns the wrong type.
registry.add_middleware(SearchStage.Input, lambda context: context.query)  # type: ignore[arg-type,return-value]  # pyright: ignore[reportCallIssue, reportArgumentType]

# The result's value keeps its type.
MiddlewareResult(Done()).replace(value="text")  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]


# Running a stage with a terminal of the wrong context.
async def fetch(context: FetchContext) -> AsyncGenerator[Event, None]:
    yield Done()


registry.invoke(SearchStage, SearchContext("q"), fetch)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# An Outbound is passed by keyword: a fourth positional argument is refused.
async def fetch_search(context: SearchContext) -> AsyncGenerator[Event, None]:
    yield Done()


registry.invoke(SearchStage, SearchContext("q"), fetch_search, Outbound(lambda event: event))  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]


async def open_with_a_terminal_of_another_stage() -> None:
    # registry.open checks the terminal against the stage as invoke does.
    async with registry.open(SearchStage, SearchContext("q"), fetch):  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
        pass
