"""A small custom stage shared by the typing cases (type-checked, never run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strands_middleware import MiddlewareStage


class Event(dict[str, Any]):
    """Streamed by the fixture stages."""


class Done(Event):
    """Result event of the fixture stages."""


@dataclass
class SearchContext:
    query: str


@dataclass
class FetchContext:
    url: str


SearchStage = MiddlewareStage[SearchContext, Done, Event]("search", result_type=Done)
FetchStage = MiddlewareStage[FetchContext, Done, Event]("fetch", result_type=Done)
