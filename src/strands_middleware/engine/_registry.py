"""`MiddlewareRegistry`: where handlers are registered and how a stage is invoked through them."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any, TypeAlias, TypeVar, Union, cast, overload

from ..exceptions import MissingResultError
from ._chain import CompiledChain, OpenedChain, Outbound, compile_chain
from ._handlers import (
    MiddlewareHandler,
    MiddlewareInputHandler,
    MiddlewareNext,
    StageOutputHandler,
)
from ._registration import code_of, raising_code
from ._result import MiddlewareResult
from ._stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewarePhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)

__all__ = ["MiddlewareRegistry", "MiddlewareSource", "missing_result"]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")
TWrapped = TypeVar("TWrapped", bound=MiddlewareResult[Any])

MiddlewareSource: TypeAlias = Union[
    "Middleware[Any, Any, Any]", Iterable["Middleware[Any, Any, Any]"]
]
"""What ``use()`` accepts, one argument at a time: a `Middleware`, or an iterable of them.

The iterable may be a list (``agent.use([timing, audit])``, handy to build a set once and share
it), a catalog item (``Retry()``: it yields one `Middleware` per stage and phase it needs), or a
generator. Iterables are read once, in order; the handlers register in that order, as if each
had been passed on its own. A nested iterable (a list of catalog items) is not flattened: pass
``agent.use(*items)`` instead. A class (``use(Retry)``) is refused with a hint to build it.
"""


def _phase_of(stage_or_phase: object) -> MiddlewarePhase[Any, Any, Any]:
    if isinstance(stage_or_phase, MiddlewareStage):
        stage: MiddlewareStage[Any, Any, Any] = cast(Any, stage_or_phase)
        return stage.Wrap
    if isinstance(
        stage_or_phase, (MiddlewareInputPhase, MiddlewareWrapPhase, MiddlewareOutputPhase)
    ):
        phase: MiddlewarePhase[Any, Any, Any] = cast(Any, stage_or_phase)
        return phase
    raise TypeError(
        "add_middleware() takes a MiddlewareStage (for its Wrap phase) or one of its phase "
        f"sub-tokens stage.Input, stage.Wrap, stage.Output; got {stage_or_phase!r}"
    )


def _expand(sources: tuple[object, ...]) -> list[Middleware[Any, Any, Any]]:
    """Flatten what ``use()`` was given, refusing anything that is not middleware."""
    items: list[Middleware[Any, Any, Any]] = []
    for position, source in enumerate(sources):
        if isinstance(source, Middleware):
            items.append(cast(Any, source))
            continue
        if isinstance(source, (str, bytes)) or not isinstance(source, Iterable):
            raise TypeError(_not_middleware(position, source))
        for inner in cast("Iterable[object]", source):
            if not isinstance(inner, Middleware):
                raise TypeError(_not_middleware(position, inner))
            items.append(cast(Any, inner))
    return items


def _not_middleware(position: int, value: object) -> str:
    hint = ""
    if isinstance(
        value, (MiddlewareStage, MiddlewareInputPhase, MiddlewareWrapPhase, MiddlewareOutputPhase)
    ):
        hint = (
            " A stage token is not middleware: register handlers built with stage.wrap(fn), "
            "stage.input(fn) or stage.output(fn)."
        )
    elif isinstance(value, type):
        # A class is callable, but the bare-handler hint does not apply: the user named a
        # catalog item (or middleware class) and forgot to build it.
        name = value.__name__
        hint = (
            f" {name} is a class: register an instance of it, e.g. use({name}()) with the "
            "keywords it takes."
        )
    elif isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        hint = (
            " It sits inside another iterable, and use() flattens one level only: pass the "
            "items as separate arguments, e.g. agent.use(*items)."
        )
    elif callable(value):
        hint = (
            " To register a bare handler, build a Middleware first with stage.wrap(fn), "
            "stage.input(fn) or stage.output(fn), or call add_middleware(stage_or_phase, fn)."
        )
    return (
        f"use() takes Middleware objects or iterables of them; argument {position} is "
        f"{value!r}.{hint}"
    )


class MiddlewareRegistry:
    """Holds the handlers of every stage and runs stages through them.

    Execution order is fixed by phase, not by registration: Input, then Wrap, then Output. Within
    a phase the first registered handler is the outermost. Handlers cannot be removed. Each
    stage's chain is compiled when a handler is registered, so invoking a stage does no sorting or
    composing; an invocation already running keeps the chain it started with.
    """

    # Weakly referenced: a host keeps per-agent records by the agent's registry (the usage of
    # its recent model calls, say) without keeping the registry alive. Every agent holds one, so
    # it holds one dict only: each stage's compiled chain keeps that stage's registrations.
    __slots__ = ("__weakref__", "_chains")

    def __init__(self) -> None:
        self._chains: dict[MiddlewareStage[Any, Any, Any], CompiledChain[Any, Any, Any]] = {}

    @overload
    def add_middleware(
        self,
        stage_or_phase: MiddlewareInputPhase[TContext, TResult, TEvent],
        handler: MiddlewareInputHandler[TContext],
    ) -> None: ...

    @overload
    def add_middleware(
        self,
        stage_or_phase: MiddlewareOutputPhase[TContext, TResult, TEvent, TWrapped],
        handler: StageOutputHandler[TWrapped, TResult],
    ) -> None: ...

    @overload
    def add_middleware(
        self,
        stage_or_phase: (
            MiddlewareStage[TContext, TResult, TEvent]
            | MiddlewareWrapPhase[TContext, TResult, TEvent]
        ),
        handler: MiddlewareHandler[TContext, TEvent],
    ) -> None: ...

    def add_middleware(self, stage_or_phase: Any, handler: Any) -> None:
        """Register ``handler`` on a stage (its Wrap phase) or on one of its phase sub-tokens.

        Raises:
            TypeError: ``stage_or_phase`` is not a stage token, or ``handler`` does not have the
                shape its phase calls for. Nothing is registered.
        """
        # Middleware() checks the handler's shape for the phase.
        self._register([Middleware(_phase_of(stage_or_phase), handler)])

    def use(self, *middleware: MiddlewareSource) -> None:
        """Register `Middleware` objects (or iterables of them), in the order given.

        Raises:
            TypeError: an argument is not middleware. Nothing is registered, not even the
                arguments before it.
        """
        self._register(_expand(middleware))

    def _register(self, items: list[Middleware[Any, Any, Any]]) -> None:
        added: dict[MiddlewareStage[Any, Any, Any], list[Middleware[Any, Any, Any]]] = {}
        for item in items:
            added.setdefault(item.stage, []).append(item)
        chains = self._chains
        for stage, more in added.items():
            had = chains.get(stage)
            chains[stage] = compile_chain(stage, (*had.registrations(), *more) if had else more)

    def has_handlers(self, stage: MiddlewareStage[Any, Any, Any]) -> bool:
        """Whether any handler is registered on ``stage``, in any phase."""
        return stage in self._chains

    def handlers(
        self, stage: MiddlewareStage[Any, Any, Any]
    ) -> tuple[tuple[MiddlewarePhase[Any, Any, Any], Any], ...]:
        """The ``(phase, handler)`` pairs registered on ``stage``, in registration order."""
        chain = self._chains.get(stage)
        return tuple((m.phase, m.handler) for m in chain.registrations()) if chain else ()

    def failing_handler(
        self, stage: MiddlewareStage[Any, Any, Any], error: BaseException
    ) -> Middleware[Any, Any, Any] | None:
        """The handler of ``stage`` whose own code raised ``error``, if one did.

        A host that reports a failed stage uses this to name the handler, its stage and its phase
        (the tool-call runners log it). It reads the error's traceback: the handler is the
        innermost one whose frame the error passed through, a helper it called included. It is
        None when the error came from further in (the terminal, the model, the tool) and the
        handlers only passed it on, when the engine raised it about a handler (those messages
        name the handler themselves), or when the handler has no code of its own to find.
        """
        codes: dict[Any, Middleware[Any, Any, Any]] = {}
        chain = self._chains.get(stage)
        for item in chain.registrations() if chain else ():
            code = code_of(item.handler)
            if code is not None:
                codes.setdefault(code, item)
        found = raising_code(error.__traceback__, frozenset(codes))
        return None if found is None else codes[found]

    def compose(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        terminal: MiddlewareNext[TContext, TEvent],
    ) -> MiddlewareNext[TContext, TEvent]:
        """Return ``terminal`` wrapped in the stage's handlers, as a ``next_fn``-shaped callable.

        With no handlers this is ``terminal`` itself: an unused stage costs nothing.
        """
        chain = self._chains.get(stage)
        if chain is None:
            return terminal
        compiled: CompiledChain[TContext, TResult, TEvent] = chain

        def composed(context: TContext) -> AsyncGenerator[TEvent, None]:
            return compiled.run(context, terminal)

        return composed

    @overload
    def invoke(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        context: TContext,
        terminal: MiddlewareNext[TContext, TEvent],
        *,
        outbound: None = None,
    ) -> AsyncGenerator[TEvent, None]: ...

    @overload
    def invoke(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        context: TContext,
        terminal: MiddlewareNext[TContext, TEvent],
        *,
        outbound: Outbound | None,
    ) -> AsyncGenerator[Any, None]: ...

    def invoke(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        context: TContext,
        terminal: MiddlewareNext[TContext, TEvent],
        *,
        outbound: Outbound | None = None,
    ) -> AsyncGenerator[Any, None]:
        """Run ``stage`` for ``context`` around ``terminal``; iterate the events it yields.

        The stage's result is the last event of ``stage.result_event`` in the stream. Close the
        generator (``aclose()``, or ``contextlib.aclosing``) if you stop iterating early, so the
        chain is cleaned up at once rather than when it is garbage-collected.

        A bridge whose host loop has event types of its own passes an `Outbound`: the chain's
        driver then hands out the host's events and exceptions (what its translations make of
        them, the result included), with no generator of the bridge's around the stream.
        """
        chain = self._chains.get(stage)
        if chain is None:
            if outbound is None:
                return terminal(context)
            # The driver of a chain with no handlers: the terminal is opened inside it, so one
            # that fails at once fails as the host's error too, as it would with handlers.
            return CompiledChain(stage, (), (), ()).run(context, terminal, outbound)
        compiled: CompiledChain[TContext, TResult, TEvent] = chain
        return compiled.run(context, terminal, outbound)

    def open(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        context: TContext,
        terminal: MiddlewareNext[TContext, TEvent],
    ) -> OpenedChain[TEvent]:
        """Run ``stage`` for ``context`` around ``terminal`` under the consumer's ``async with``.

        The same handlers and the same cleanup rules as `invoke`, for a consumer that iterates
        the stream in a block it holds: ``async with registry.open(stage, context, terminal) as
        stream: async for event in stream: ...``. The block takes the place of the chain's
        driver generator, so every streamed event crosses one generator hop fewer; a host runner
        that is an async generator itself uses this, its own loop then being the only layer
        above the handlers. Where it differs from `invoke` (see `OpenedChain`): the Input
        handlers run on entering the block, the stream belongs to the block (iterate it there,
        and let the block close it; a stage without handlers streams its terminal, closed on
        leaving the block too), and there is no `Outbound`.
        """
        return OpenedChain(stage, self._chains.get(stage), context, terminal)

    async def run(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        context: TContext,
        terminal: MiddlewareNext[TContext, TEvent],
        on_event: Callable[[TEvent], object] | None = None,
    ) -> TResult:
        """Invoke ``stage``, drain its stream, and return its result event.

        ``on_event`` sees every event as it arrives, the result included.

        Raises:
            MissingResultError: the chain yielded no event of ``stage.result_event`` (a Wrap
                handler that short-circuits must yield the result event itself).
        """
        result_type = stage.result_event
        found = False
        result: Any = None
        stream = self.invoke(stage, context, terminal)
        try:
            async for event in stream:
                if on_event is not None:
                    on_event(event)
                if isinstance(event, result_type):
                    result = event
                    found = True
        finally:
            await stream.aclose()
        if not found:
            raise missing_result(stage)
        return result  # type: ignore[no-any-return]


def missing_result(stage: MiddlewareStage[Any, Any, Any]) -> MissingResultError:
    """The error every call site raises when a stage's stream ended without its result event.

    Call sites track the result inline rather than through a wrapping generator: a wrapper would
    cost one more generator hop on every streamed event of every call.
    """
    return MissingResultError(
        f"the middleware chain of stage {stage.name!r} ended without a "
        f"{stage.result_event.__name__}: every path through a Wrap handler must yield the result "
        "event (pass next_fn's events through, or yield a result event when short-circuiting)",
        stage.name,
    )
