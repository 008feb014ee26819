"""What catalog items share: the stages they may wrap, the carrier ``use()`` accepts, and the
checks of their keyword configuration.

Every catalog item is written against the built-in stages only, so it runs on every host. An
item is an iterable of `Middleware` (one per stage and phase it needs), which is exactly what
``agent.use(...)`` and ``registry.use(...)`` accept: ``agent.use(Retry(attempts=5))``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, Literal, TypeAlias, cast

from ..engine._stage import Middleware, MiddlewareStage
from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage

__all__ = [
    "CallStage",
    "CatalogMiddleware",
    "OnStoreError",
    "check_call_stage",
    "check_flag",
    "check_function",
    "check_on_store_error",
    "check_positive_number",
    "check_store",
    "check_store_name",
    "check_whole_number",
    "exception_classes",
    "is_exception_class",
    "kind_of",
]

ModelCallStage: TypeAlias = MiddlewareStage[InvokeModelContext, ModelStopReason, TypedEvent]
ToolCallStage: TypeAlias = MiddlewareStage[ExecuteToolContext, ToolResultEvent, TypedEvent]
CallStage: TypeAlias = ModelCallStage | ToolCallStage
"""``InvokeModelStage`` or ``ExecuteToolStage``: the stages a per-call item can wrap."""


def check_call_stage(item: str, stage: object) -> None:
    """Refuse a stage other than the model-call and tool-call stages, naming the item."""
    if stage is not InvokeModelStage and stage is not ExecuteToolStage:
        raise TypeError(f"{item} wraps InvokeModelStage or ExecuteToolStage; got {stage!r}")


class CatalogMiddleware(ABC):
    """Base of catalog items: iterating one yields the `Middleware` objects it registers."""

    @abstractmethod
    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        """The `Middleware` objects this item registers, in order."""

    def __iter__(self) -> Iterator[Middleware[Any, Any, Any]]:
        return iter(self.middleware())


def kind_of(value: object) -> str:
    """What ``value`` is, by its type alone, for an error about a user function's return.

    Never the value itself: what a check or a replacement returns is often built from the text
    it was given, which may be what an item masks or withholds, and errors reach logs.
    """
    return "None" if value is None else f"a value of type {type(value).__name__}"


# Configuration is checked when an item is built, because a mistake found on the first model call
# surfaces far from the line that made it. Values are checked at run time even where the
# annotations already say the type: callers need not run a type checker. Every message names
# the item and the keyword, then says what it takes.


def check_whole_number(item: str, name: str, value: object, *, minimum: int, of: str = "") -> None:
    """Refuse anything but an ``int`` (not a ``bool``) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        unit = f" of {of}" if of else ""
        raise ValueError(
            f"{item}({name}=...) must be a whole number{unit} >= {minimum}, got {value!r}"
        )


def check_positive_number(item: str, name: str, value: object, *, of: str) -> None:
    """Refuse anything but a finite ``int`` or ``float`` (not a ``bool``) above zero."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{item}({name}=...) must be a finite number of {of} > 0, got {value!r}")


def check_function(item: str, name: str, value: object, *, takes: str) -> None:
    """Refuse a value that is not callable; ``takes`` says what kind of function is wanted."""
    if not callable(value):
        raise TypeError(f"{item}({name}=...) takes {takes}, got {value!r}")


def check_flag(item: str, name: str, value: object) -> None:
    """Refuse anything but ``True`` or ``False`` (a truthy string is a likely typo)."""
    if not isinstance(value, bool):
        raise TypeError(f"{item}({name}=...) must be True or False, got {value!r}")


def exception_classes(
    item: str, name: str, value: type[BaseException] | tuple[type[BaseException], ...]
) -> tuple[type[BaseException], ...]:
    """One exception class or a non-empty tuple of them, as a tuple ``isinstance`` accepts."""
    classes = value if isinstance(value, tuple) else (value,)
    if not classes or not all(is_exception_class(c) for c in cast("tuple[object, ...]", classes)):
        raise TypeError(f"{item}({name}=...) takes exception classes, got {value!r}")
    return classes


def is_exception_class(value: object) -> bool:
    """Whether ``value`` is an exception class (not an instance)."""
    return isinstance(value, type) and issubclass(value, BaseException)


# ---- items that take a store ------------------------------------------------------------------

OnStoreError: TypeAlias = Literal["raise", "allow"]
"""What an item does when its store fails: raise `StoreError` (the default), or let the call
through without the store and warn (`StoreWarning`)."""


def check_store(item: str, store: object, protocol: type[Any], methods: str) -> None:
    """Refuse a ``store=`` that lacks the methods of ``protocol`` (a runtime-checkable one)."""
    if not isinstance(store, protocol):
        raise TypeError(
            f"{item}(store=...) takes a {protocol.__name__}, with {methods} (a RedisStore or an "
            f"InMemoryStore from strands_middleware.stores), got {store!r}"
        )


def check_store_name(item: str, keyword: str, value: object, *, store: object, what: str) -> None:
    """With a store, require a stable ``name``/``key``; without one, refuse it.

    Object identity cannot cross processes, so what the item counts in a store is known by a
    name every process agrees on. Without a store, a name would do nothing, which is worth
    saying rather than ignoring.
    """
    if store is None:
        if value is not None:
            raise ValueError(
                f"{item}({keyword}=...) names {what} in a store: pass store=... as well, or "
                f"drop {keyword}=... (without a store the item counts in this process alone)"
            )
        return
    if value is None:
        raise ValueError(
            f"{item}(store=...) needs {keyword}=...: a stable name every process uses for "
            f"{what} (object identity cannot cross processes)"
        )
    if not isinstance(value, str) or not value:
        raise TypeError(f"{item}({keyword}=...) must be a non-empty str, got {value!r}")


def check_on_store_error(item: str, value: object) -> None:
    """Refuse anything but ``"raise"`` or ``"allow"``."""
    if value not in ("raise", "allow"):
        raise ValueError(
            f"{item}(on_store_error=...) must be 'raise' (the default) or 'allow' (let calls "
            f"through while the store is down), got {value!r}"
        )
