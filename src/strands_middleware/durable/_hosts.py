"""The same middleware on the bridged hosts' own Temporal integrations: checked before it runs.

Those integrations decide where a stage's handlers run, not this library (measured against the
hosts' releases named in ``docs/durable.md``):

* ``temporalio-strands-agents``' ``TemporalAgent`` is a ``strands.Agent`` running in workflow
  code; its model call is an activity around the model alone. Both stages' handlers run in
  **workflow code**.
* pydantic-ai's ``TemporalDurability`` capability runs ExecuteToolStage handlers in **workflow
  code**, around the tool activity, and InvokeModelStage handlers **inside the model-request
  activity**, once per attempt.

`for_temporal_host` checks a list of middleware against one of them, with the declarations of
`PLACEMENTS`: an item is refused where the host would run it on a side it cannot run on, unless
the host lets it run there as it documents (`_HOST_ALLOWS`):

* `Retry` in workflow code: its sleep is ``asyncio.sleep``, which workflow code turns into a
  durable timer, and each attempt calls ``next_fn`` again, which schedules a new activity. What
  it needs there: jitter drawn from ``workflow.random()`` (replayed with the same seed), so the
  item is registered as a copy with that ``draw``, and the provider's exception instead of
  Temporal's ``ActivityError`` (`ProviderErrors`, registered innermost, after the list). On
  pydantic-ai the same holds for a `Retry` of ExecuteToolStage, whose handlers run in workflow
  code around the tool activity: each attempt calls pydantic-ai's tool execution again, which
  schedules a new tool activity. A `Retry` of InvokeModelStage runs there inside the model
  activity, as it is.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeAlias, cast

from temporalio import workflow

from ..catalog import Retry
from ..engine._registry import MiddlewareSource
from ..engine._stage import Middleware, MiddlewareStage
from ..stages._execute_tool import ExecuteToolStage
from ..stages._invoke_model import InvokeModelStage
from ._host_errors import ProviderErrors
from ._placement import Placed, PlacementError, Side, rule_of

__all__ = ["TemporalHost", "for_temporal_host"]

TemporalHost: TypeAlias = Literal["strands", "pydantic-ai"]
"""``"strands"`` (``temporalio-strands-agents``' ``TemporalAgent``) or ``"pydantic-ai"``
(pydantic-ai's ``TemporalDurability``)."""

_HOST_NAMES: dict[str, str] = {
    "strands": "temporalio-strands-agents' TemporalAgent",
    "pydantic-ai": "pydantic-ai's TemporalDurability",
}


def _workflow_draw() -> float:
    return workflow.random().random()


def _retry_in_workflow(item: Retry, errors: list[type[BaseException]]) -> Retry:
    errors.extend(item.on)
    clone = copy.copy(item)
    clone.draw = _workflow_draw
    return clone


def _tool_retry_in_workflow(item: Retry, errors: list[type[BaseException]]) -> Retry:
    # pydantic-ai runs model handlers inside its model activity, where a Retry runs as it is
    # (the provider's own exceptions, a real sleep, its own jitter): only the tool stage's runs
    # in workflow code.
    if item.stage is not ExecuteToolStage:
        return item
    return _retry_in_workflow(item, errors)


_HOST_ALLOWS: dict[tuple[str, type[Any]], Callable[[Any, list[type[BaseException]]], Any]] = {
    ("strands", Retry): _retry_in_workflow,
    ("pydantic-ai", Retry): _tool_retry_in_workflow,
}
"""Items a host runs on a side their declaration refuses, and how each is registered there (it
adds the exception classes it matches on to the list it is given)."""


def _host_side(host: TemporalHost, stage: MiddlewareStage[Any, Any, Any]) -> Side:
    if host == "pydantic-ai" and stage is InvokeModelStage:
        return "activity"
    return "workflow"


def for_temporal_host(
    host: TemporalHost, middleware: Iterable[MiddlewareSource | Placed]
) -> list[MiddlewareSource]:
    """Check ``middleware`` for a host's Temporal integration; return what its bridge registers.

    Each handler must be able to run where the host runs its stage (module notes). Catalog
    items are checked by their declaration; your own `Middleware` must be placed with
    `in_workflow` or `in_activity` where the host runs it, which says you checked it can run
    there. A `Retry` that runs in workflow code (any on ``"strands"``, a tool-stage one on
    ``"pydantic-ai"``) is returned as a copy drawing its jitter from ``workflow.random()``, and
    the list ends with handlers that turn Temporal's ``ActivityError`` back into the provider's
    (or the tool's) exception, matched by class name among the classes of ``on=`` and their
    subclasses: register the list after your other handlers.

    Example:
        ```python
        bridge.use(*for_temporal_host("strands", [ToolApproval(), Redact()]))
        ```

    Raises:
        PlacementError: a handler would run where it cannot (the message names the item, the
            stage, the side and why), or an undeclared one is not placed; nothing is returned.
        ValueError: ``host`` is neither ``"strands"`` nor ``"pydantic-ai"``.
    """
    if host not in _HOST_NAMES:
        raise ValueError(f"host must be 'strands' or 'pydantic-ai', got {host!r}")
    accepted: list[MiddlewareSource] = []
    errors: list[type[BaseException]] = []
    for item in middleware:
        source: object = item.source if isinstance(item, Placed) else item
        allow = _HOST_ALLOWS.get((host, type(source)))
        if allow is not None:
            accepted.append(allow(source, errors))
            continue
        rule = rule_of(source)
        handlers = (
            [source] if isinstance(source, Middleware) else list(cast("Iterable[Any]", source))
        )
        for handler in cast("list[Middleware[Any, Any, Any]]", handlers):
            side = _host_side(host, handler.stage)
            where = "workflow code" if side == "workflow" else "its model activity"
            if rule is not None:
                if side not in rule.sides:
                    raise PlacementError(
                        f"{type(source).__name__} cannot run on {_HOST_NAMES[host]}: there "
                        f"{handler.stage.name} handlers run in {where}, and {rule.why}"
                    )
            elif not isinstance(item, Placed):
                raise PlacementError(
                    f"{_HOST_NAMES[host]} runs {handler.stage.name} handlers in {where}: place "
                    f"{source!r} with in_{side}(...) once you know it can run there"
                )
            elif item.side != side:
                raise PlacementError(
                    f"{source!r} is placed in_{item.side}(...), but {_HOST_NAMES[host]} runs "
                    f"{handler.stage.name} handlers in {where}"
                )
        accepted.append(item.source if isinstance(item, Placed) else item)
    if errors:
        accepted.extend(ProviderErrors(errors).middleware())
    return accepted
