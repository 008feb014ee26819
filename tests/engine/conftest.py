"""Shared fixtures: a tiny custom stage, so engine tests need no model or tool types."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import MiddlewareRegistry, MiddlewareStage


class Event(dict[str, Any]):
    """A streamed event of the test stage."""


class Done(Event):
    """The result event of the test stage."""


class Halt(Event):
    """An interrupt-control event: it halts the stage."""

    @property
    def is_interrupt(self) -> bool:
        return True


STAGE = MiddlewareStage[str, Done, Event]("test", result_type=Done)
OTHER = MiddlewareStage[str, Done, Event]("other", result_type=Done)


async def terminal(context: str) -> AsyncGenerator[Event, None]:
    """Two chunks and a result that records the context it ran with."""
    yield Event(chunk=1)
    yield Event(chunk=2)
    yield Done(context=context)


async def collect(stream: AsyncGenerator[Event, None]) -> list[Event]:
    return [event async for event in stream]


@pytest.fixture
def registry() -> MiddlewareRegistry:
    return MiddlewareRegistry()
