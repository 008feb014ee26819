"""Where each middleware runs in a durable run: in workflow code, or inside an activity.

A durable run has two chains per stage. The **workflow chain** runs in workflow code, where
everything is replayed from history after a crash, so its handlers must decide from their inputs
alone: no clock, no randomness, no I/O, no state kept between runs. Its innermost step is the
activity. The **activity chain** runs inside the model or tool activity, once per attempt, around
the real model or tool: handlers with side effects (stores, clocks, spans, sleeps, retries) go
there, because an activity's result is recorded and never recomputed on replay.

`PLACEMENTS` below is the one place the catalog's items declare which they are. A catalog item
lands where its declaration says by default; `in_workflow` and `in_activity` move an item that
may run in both, and refuse one that cannot run where it is asked to. A `Middleware` of your own
has no declaration, so it must be placed with one of the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from ..catalog import (
    Cache,
    CallLimit,
    CircuitBreaker,
    ConcurrencyLimit,
    ContextWindow,
    Guardrail,
    ModelFallback,
    RateLimit,
    Redact,
    Retry,
    Summarize,
    Timeout,
    ToolApproval,
    ToolMock,
    ToolResultTrim,
    ToolSelector,
    Tracing,
    UsageBudget,
)
from ..engine._registry import MiddlewareSource
from ..engine._stage import Middleware

__all__ = [
    "PLACEMENTS",
    "Placed",
    "PlacementError",
    "Side",
    "in_activity",
    "in_workflow",
    "rule_of",
    "split_middleware",
]

Side: TypeAlias = Literal["workflow", "activity"]
"""Where a chain runs: workflow code, or inside the model or tool activity."""


@dataclass(frozen=True)
class _Rule:
    sides: tuple[Side, ...]  # where it may run; the first is where it runs unless moved
    why: str
    # For an item deciding unless configured otherwise: why this instance has side effects.
    side_effects: Callable[[Any], str | None] | None = None
    # For an item no durable run can carry as configured: why (None: it can be placed).
    refused: Callable[[Any], str | None] | None = None

    def of(self, item: object) -> _Rule:
        """The rule for this configured instance."""
        why = self.side_effects(item) if self.side_effects is not None else None
        return self if why is None else _Rule(("activity",), why)


def _activity_only(why: str) -> _Rule:
    return _Rule(("activity",), why)


def _deciding(why: str) -> _Rule:
    return _Rule(("workflow", "activity"), why)


PLACEMENTS: dict[type[Any], _Rule] = {
    # Side effects or clocks: activity only.
    Cache: _activity_only("it reads a clock and keeps results in a store"),
    CallLimit: _activity_only("it counts calls in a store or in process memory"),
    CircuitBreaker: _activity_only("it reads a clock and keeps circuits in a store"),
    ConcurrencyLimit: _activity_only("it holds slots in a store or in process memory"),
    ModelFallback: _activity_only("it calls other models"),
    RateLimit: _activity_only("it reads a clock and keeps buckets in a store"),
    Retry: _activity_only("it sleeps and draws random jitter"),
    Summarize: _activity_only(
        "it calls a model (its summarizer, tried once more when it fails) and, with store=, "
        "reads and writes summaries in a store"
    ),
    Timeout: _activity_only("it reads a clock"),
    Tracing: _activity_only("it opens spans, which read a clock and export"),
    UsageBudget: _activity_only(
        "it counts tokens (and, with max_cost=, their price) in a store or in process memory"
    ),
    # Deciding from their inputs: workflow by default, or in the activity when moved there.
    # ContextWindow's overflow recovery (a Wrap handler) may run in workflow code too: the model
    # activity fails at once on an overflow (retrying the same request cannot help), and the
    # second try calls next_fn again, which schedules a new model activity with a request cut
    # from the call's own inputs: replayed, it schedules the same one. What it remembers of a
    # cut lives from its Input handler to its Wrap handler of the same call, so a replay on
    # any worker rebuilds it.
    ContextWindow: _deciding(
        "it trims the request from its inputs alone, and on a context overflow asks the model "
        "once more with a request cut from the same inputs"
    ),
    Guardrail: _Rule(
        ("workflow", "activity"),
        "it decides from the request or result alone",
        lambda item: (
            "its classifier is a model"
            if item.classifier is not None
            else "its on_violation callback is your code, which may do I/O and would be called "
            "again on every replay"
            if item.on_violation is not None
            else None
        ),
    ),
    Redact: _Rule(
        ("workflow", "activity"),
        "it masks text by its patterns alone",
        refused=lambda item: (
            "its pseudonyms are kept in one process's memory for a run, while a durable run "
            "goes on in other processes (its activities on any worker, its workflow on another "
            "worker after a crash or a long wait), which hold no copy of them, so a pseudonym "
            "could not be given back. Use Redact() there, which masks without restoring"
            if getattr(item, "reversible", False)
            else None
        ),
    ),
    ToolMock: _deciding("it answers calls from its table alone"),
    ToolResultTrim: _deciding("it trims results from their size alone"),
    ToolSelector: _Rule(
        ("workflow", "activity"),
        "it picks tools from the request alone",
        lambda item: "its model chooses the tools" if item.model is not None else None,
    ),
    # Asking a human: the workflow only, where a wait costs no worker.
    ToolApproval: _Rule(
        ("workflow",),
        "its interrupts are workflow waits, answered by a Temporal update; an activity cannot wait",
    ),
}
"""Where each catalog item may run, first where it runs unless moved, and why."""


class PlacementError(TypeError):
    """A middleware was registered where a durable run cannot run it (the message says where)."""


@dataclass(frozen=True)
class Placed:
    """A middleware with the side of the run it is placed on (`in_workflow`, `in_activity`)."""

    source: MiddlewareSource
    side: Side


def in_workflow(source: MiddlewareSource) -> Placed:
    """Run ``source`` in workflow code, around the activity.

    For handlers that decide from their inputs alone and must be replayed exactly: no clock, no
    randomness, no I/O, no state kept in the handler between runs (every run in a worker process
    shares the one object). Interrupts (``context.interrupt()``) are asked only here.

    Raises:
        PlacementError: ``source`` is a catalog item with side effects (see `PLACEMENTS`).
    """
    return _placed(source, "workflow")


def in_activity(source: MiddlewareSource) -> Placed:
    """Run ``source`` inside the model or tool activity, once per attempt, around the real call.

    For handlers with side effects or clocks: a store, a span, a timeout, a retry, a cache.

    Raises:
        PlacementError: ``source`` is a catalog item that cannot run in an activity
            (`ToolApproval`: its interrupts are workflow waits).
    """
    return _placed(source, "activity")


def _placed(source: MiddlewareSource, side: Side) -> Placed:
    if isinstance(source, Placed):
        raise PlacementError(f"{source!r} is placed already; place an item once")
    rule = rule_of(source)
    if rule is not None and side not in rule.sides:
        raise PlacementError(
            f"{type(source).__name__} cannot run in {_SIDE_NAMES[side]}: {rule.why}. "
            f"It runs in {_SIDE_NAMES[rule.sides[0]]}; register it without "
            f"in_{side}(...) (or with in_{rule.sides[0]}(...))."
        )
    return Placed(source, side)


_SIDE_NAMES: dict[Side, str] = {
    "workflow": "workflow code",
    "activity": "an activity",
}


def rule_of(source: object) -> _Rule | None:
    """The declaration of a catalog item (configured as it is), or None for anything else.

    Raises:
        PlacementError: the item, configured as it is, cannot run in a durable run at all.
    """
    for cls in type(source).__mro__:
        rule = PLACEMENTS.get(cls)
        if rule is not None:
            why = rule.refused(source) if rule.refused is not None else None
            if why is not None:
                raise PlacementError(f"{type(source).__name__} cannot run in a durable run: {why}")
            return rule.of(source)
    return None


def split_middleware(
    items: MiddlewareSource | Placed | Iterable[MiddlewareSource | Placed],
) -> tuple[list[MiddlewareSource], list[MiddlewareSource]]:
    """Sort what ``DurableAgent(middleware=...)`` was given into workflow and activity sources.

    Order is kept within each side; every workflow handler of a stage is outside every activity
    handler of that stage, since the activity is the workflow chain's innermost step.

    Raises:
        PlacementError: an item without a declaration was not placed, or a placed item cannot
            run where it was placed.
    """
    if isinstance(items, (Middleware, Placed)) or rule_of(items) is not None:
        listed: list[object] = [items]
    else:
        listed = list(cast("Iterable[object]", items))
    workflow: list[MiddlewareSource] = []
    activity: list[MiddlewareSource] = []
    for item in listed:
        if isinstance(item, Placed):
            side = item.side
            source = item.source
        else:
            rule = rule_of(item)
            if rule is None:
                raise PlacementError(
                    f"a durable run does not know where {item!r} may run: wrap it in "
                    "in_workflow(...) if its handlers decide from their inputs alone (no clock, "
                    "no randomness, no I/O: workflow code is replayed), or in in_activity(...) "
                    "if they have side effects (they then run once per activity attempt)"
                )
            side = rule.sides[0]
            source = cast(MiddlewareSource, item)
        (workflow if side == "workflow" else activity).append(source)
    return workflow, activity
