"""A framework-defined stage: the engine on its own, with no agent at all.

A search service exposes one stage point, ``SearchStage``, and runs every query through it. Three
handlers show the three phases: an Input handler normalises the query, a Wrap handler serves
repeated queries from a cache (a short-circuit: it yields the result event itself), and an Output
handler stamps the result.

Run: ``python examples/custom_stage.py``
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass, replace
from typing import Any

from strands_middleware import MiddlewareNext, MiddlewareRegistry, MiddlewareResult, MiddlewareStage


class SearchEvent(dict[str, Any]):
    """Something the search streams: a progress note, or the hits."""


class SearchDone(SearchEvent):
    """The result event: the hits for one query."""


@dataclass(frozen=True)
class SearchContext:
    query: str


SearchStage = MiddlewareStage[SearchContext, SearchDone, SearchEvent](
    "search", result_type=SearchDone
)

_cache: dict[str, SearchDone] = {}


@SearchStage.input
def normalise(context: SearchContext) -> SearchContext:
    return replace(context, query=" ".join(context.query.lower().split()))


@SearchStage.wrap
async def cache(
    context: SearchContext, next_fn: MiddlewareNext[SearchContext, SearchEvent]
) -> AsyncGenerator[SearchEvent, None]:
    if context.query in _cache:
        yield SearchEvent(note="served from cache")
        yield _cache[context.query]
        return
    async for event in next_fn(context):
        if isinstance(event, SearchDone):
            _cache[context.query] = event
        yield event


@SearchStage.output
def stamp(result: MiddlewareResult[SearchDone]) -> MiddlewareResult[SearchDone]:
    return result.replace(value=SearchDone({**result.value, "engine": "demo"}))


async def search(context: SearchContext) -> AsyncGenerator[SearchEvent, None]:
    """The terminal: the real work the stage wraps."""
    yield SearchEvent(note=f"searching for {context.query!r}")
    yield SearchDone(hits=[f"{context.query} #{n}" for n in (1, 2)])


async def main() -> None:
    registry = MiddlewareRegistry()
    registry.use(normalise, cache, stamp)
    for query in ("  Agent   LOOPS ", "agent loops"):
        async for event in registry.invoke(SearchStage, SearchContext(query), search):
            print(type(event).__name__, dict(event))


if __name__ == "__main__":
    asyncio.run(main())
