"""Stage tokens, their phase sub-tokens, and `Middleware`, the carrier `use()` registers.

A stage token names one interception point of an agent run (a model call, a tool call, a whole
pass) and fixes, through its type parameters, what its handlers see: ``TContext`` going in,
``TEvent`` streaming out, and ``TResult``, the event that is the stage's result. The phase
sub-tokens ``.Input``, ``.Wrap`` and ``.Output`` bind the same parameters, which is what lets
``add_middleware(stage.Input, fn)`` check ``fn`` against the right handler shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    TypeAlias,
    cast,
    overload,
)

from typing_extensions import TypeVar, final

from . import _registration
from ._handlers import MiddlewareHandler, MiddlewareInputHandler, StageOutputHandler
from ._result import MiddlewareResult

__all__ = [
    "Middleware",
    "MiddlewareInputPhase",
    "MiddlewareOutputPhase",
    "MiddlewarePhase",
    "MiddlewareStage",
    "MiddlewareWrapPhase",
]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")
TWrapped_co = TypeVar(
    "TWrapped_co", bound=MiddlewareResult[Any], default=MiddlewareResult[TResult], covariant=True
)
"""The `MiddlewareResult` subclass a stage hands its Output handlers (``InvokeModelResult``...).

A stage written with three type arguments hands out the plain ``MiddlewareResult[TResult]``.
Covariant, so ``MiddlewareStage[Any, Any, Any]`` accepts every stage.
"""

PhaseName: TypeAlias = Literal["Input", "Wrap", "Output"]


class _PhaseToken(Generic[TContext, TResult, TEvent, TWrapped_co]):
    """Common part of the three phase sub-tokens: which stage, which phase."""

    __slots__ = ("stage",)
    kind: ClassVar[PhaseName]

    def __init__(self, stage: MiddlewareStage[TContext, TResult, TEvent, TWrapped_co]) -> None:
        self.stage = stage

    @property
    def where(self) -> str:
        """``"<stage name>.<Phase>"``, as error messages name a registration point."""
        return f"{self.stage.name}.{self.kind}"

    def __repr__(self) -> str:
        return f"{self.stage!r}.{self.kind}"

    if not TYPE_CHECKING:
        # Only at run time: to a type checker a token stays not callable, so ``@stage.Wrap`` on a
        # handler is still a static error; at run time it gets a message naming the builder.
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise TypeError(
                f"{self.where} is a phase token, not a decorator: build middleware with "
                f"@stage.{self.kind.lower()} (the {self.kind} builder of stage "
                f"{self.stage.name!r}), or register a bare function with "
                f"add_middleware(stage.{self.kind}, fn)"
            )


@final
class MiddlewareInputPhase(_PhaseToken[TContext, TResult, TEvent, TWrapped_co]):
    """``stage.Input``: handlers that turn the context into the context the stage runs with."""

    __slots__ = ()
    kind: ClassVar[PhaseName] = "Input"


@final
class MiddlewareWrapPhase(_PhaseToken[TContext, TResult, TEvent, TWrapped_co]):
    """``stage.Wrap``: async-generator handlers around the whole stage (also the bare stage)."""

    __slots__ = ()
    kind: ClassVar[PhaseName] = "Wrap"


@final
class MiddlewareOutputPhase(_PhaseToken[TContext, TResult, TEvent, TWrapped_co]):
    """``stage.Output``: handlers that transform the stage's result once it is known."""

    __slots__ = ()
    kind: ClassVar[PhaseName] = "Output"


MiddlewarePhase: TypeAlias = (
    MiddlewareInputPhase[TContext, TResult, TEvent, TWrapped_co]
    | MiddlewareWrapPhase[TContext, TResult, TEvent, TWrapped_co]
    | MiddlewareOutputPhase[TContext, TResult, TEvent, TWrapped_co]
)
"""Any of a stage's three phase sub-tokens."""


class MiddlewareStage(Generic[TContext, TResult, TEvent, TWrapped_co]):
    """A token naming one interception point, with its ``.Input``/``.Wrap``/``.Output`` phases.

    Stages compare and hash by identity: two stages with the same name are different stages.
    Frameworks may define their own and run them with ``MiddlewareRegistry.invoke``.

    Two constructor forms, both typed:

    * ``MiddlewareStage(name, result_type=Event)``: the result event class alone; Output
      handlers receive a plain ``MiddlewareResult[Event]``.
    * ``MiddlewareStage(name, result_type=Wrapper, result_event=Event)``, as strands'
      middleware spells it: ``Wrapper`` is the `MiddlewareResult` subclass the stage hands its
      Output handlers (the built-in stages are declared this way).

    Example:
        ```python
        SearchStage = MiddlewareStage[SearchContext, SearchDone, SearchEvent](
            "search", result_type=SearchDone
        )
        ```

    Attributes:
        name: Used in ``repr`` and error messages.
        result_event: The class of the stage's result event. The chain's result is the last
            event of this class it yields.
        result_type: What the constructor was given as ``result_type``: the wrapper class when
            ``result_event`` was given too (strands' form), otherwise the result event class.
        Input: The Input phase sub-token.
        Wrap: The Wrap phase sub-token (registering on the bare stage means Wrap).
        Output: The Output phase sub-token.
    """

    __slots__ = ("Input", "Output", "Wrap", "_wrapper", "name", "result_event", "result_type")

    @overload
    def __init__(self, name: str, *, result_type: type[TResult]) -> None: ...

    @overload
    def __init__(
        self, name: str, *, result_type: type[TWrapped_co], result_event: type[TResult]
    ) -> None: ...

    def __init__(
        self, name: str, *, result_type: type[Any], result_event: type[Any] | None = None
    ) -> None:
        if not isinstance(cast(object, name), str) or not name:
            raise TypeError(f"a stage name must be a non-empty str, got {name!r}")
        wrapper: type[Any] = MiddlewareResult
        if result_event is None:
            result_event = result_type
            role = "the class of the stage's result event"
        else:
            wrapper = result_type
            role = (
                "the MiddlewareResult subclass Output handlers receive (result_event names the "
                "result event class)"
            )
            if not isinstance(cast(object, result_event), type):
                raise TypeError(
                    f"result_event of stage {name!r} must be the class of the stage's result "
                    f"event, got {result_event!r}"
                )
        if not isinstance(cast(object, result_type), type) or (
            wrapper is result_type and not issubclass(result_type, MiddlewareResult)
        ):
            raise TypeError(
                f"result_type of stage {name!r} must be {role}, got {result_type!r}"
                + (
                    "; subclass MiddlewareResult[YourEvent] (it reads .result like strands' "
                    "result classes)"
                    if wrapper is result_type
                    else ""
                )
            )
        self.name = name
        self.result_type: type[Any] = result_type
        self.result_event: type[TResult] = result_event
        self._wrapper: Callable[[TResult], Any] = wrapper
        self.Input: MiddlewareInputPhase[TContext, TResult, TEvent, TWrapped_co] = (
            MiddlewareInputPhase(self)
        )
        self.Wrap: MiddlewareWrapPhase[TContext, TResult, TEvent, TWrapped_co] = (
            MiddlewareWrapPhase(self)
        )
        self.Output: MiddlewareOutputPhase[TContext, TResult, TEvent, TWrapped_co] = (
            MiddlewareOutputPhase(self)
        )

    def __repr__(self) -> str:
        return f"MiddlewareStage({self.name!r})"

    if not TYPE_CHECKING:
        # Only at run time: to a type checker a stage stays not callable, so ``@InvokeModelStage``
        # on a handler is still a static error; at run time it gets a message naming the builders
        # instead of "'MiddlewareStage' object is not callable".
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            raise TypeError(
                f"stage {self.name!r} is a token, not a decorator: build middleware with "
                "@stage.wrap (an async generator (context, next_fn) around the call), "
                "@stage.input (context -> context) or @stage.output (result -> result), for "
                "example @InvokeModelStage.wrap"
            )

    def wrap(
        self, fn: MiddlewareHandler[TContext, TEvent]
    ) -> Middleware[TContext, TResult, TEvent, TWrapped_co]:
        """Make a Wrap-phase `Middleware` of ``fn``; usable as a decorator."""
        return Middleware(self.Wrap, fn)

    def input(
        self, fn: MiddlewareInputHandler[TContext]
    ) -> Middleware[TContext, TResult, TEvent, TWrapped_co]:
        """Make an Input-phase `Middleware` of ``fn``; usable as a decorator."""
        return Middleware(self.Input, fn)

    def output(
        self, fn: StageOutputHandler[TWrapped_co, TResult]
    ) -> Middleware[TContext, TResult, TEvent, TWrapped_co]:
        """Make an Output-phase `Middleware` of ``fn``; usable as a decorator.

        ``fn`` receives the stage's own result wrapper (``InvokeModelResult`` on
        ``InvokeModelStage``) and returns a wrapper of the same result event class.

        An Output handler runs once the stage's work is done (the tool ran, the model answered),
        so it cannot pause the call: an `InterruptException` it raises is refused and logged at
        ERROR naming it, and the result goes on without its change (a resume would otherwise do
        the work again). Ask a human in an Input handler, or in a Wrap handler before
        ``next_fn``.
        """
        return Middleware(self.Output, fn)


def result_wrapper(
    stage: MiddlewareStage[Any, TResult, Any, TWrapped_co],
) -> Callable[[TResult], TWrapped_co]:
    """The class ``stage`` wraps its result event in for its Output handlers."""
    # Read through Any: the slot is the class's own, set once in __init__.
    wrapper: Callable[[TResult], TWrapped_co] = cast(Any, stage)._wrapper
    return wrapper


def check_handler(phase: MiddlewarePhase[Any, Any, Any], handler: object) -> None:
    """Raise `TypeError` unless ``handler`` has the shape ``phase`` calls for."""
    if isinstance(handler, (MiddlewareStage, _PhaseToken)):
        # Tokens are callable at run time (to explain themselves), so they need refusing here.
        raise TypeError(
            f"cannot register {handler!r} for {phase.where}: a stage or phase token is not a "
            "handler; register a function built for this phase"
        )
    if isinstance(phase, MiddlewareWrapPhase):
        _registration.check_wrap(phase.where, handler)
    elif isinstance(phase, MiddlewareInputPhase):
        _registration.check_input(phase.where, handler)
    else:
        _registration.check_output(phase.where, handler)


@final
class Middleware(Generic[TContext, TResult, TEvent, TWrapped_co]):
    """One handler bound to the phase it runs in: what ``agent.use(...)`` registers.

    Build it with ``stage.wrap(fn)``, ``stage.input(fn)`` or ``stage.output(fn)`` (each works as a
    decorator). The handler is checked here, so a handler of the wrong shape fails at the line that
    builds the middleware, not at the first model call.

    Attributes:
        phase: The phase sub-token the handler is registered on.
        handler: The handler itself.
    """

    __slots__ = ("_handler", "_phase")

    @overload
    def __init__(
        self,
        phase: MiddlewareInputPhase[TContext, TResult, TEvent, TWrapped_co],
        handler: MiddlewareInputHandler[TContext],
    ) -> None: ...

    @overload
    def __init__(
        self,
        phase: MiddlewareWrapPhase[TContext, TResult, TEvent, TWrapped_co],
        handler: MiddlewareHandler[TContext, TEvent],
    ) -> None: ...

    @overload
    def __init__(
        self,
        phase: MiddlewareOutputPhase[TContext, TResult, TEvent, TWrapped_co],
        handler: StageOutputHandler[TWrapped_co, TResult],
    ) -> None: ...

    def __init__(
        self, phase: MiddlewarePhase[TContext, TResult, TEvent, TWrapped_co], handler: Any
    ) -> None:
        if not isinstance(cast(object, phase), _PhaseToken):
            raise TypeError(
                "Middleware needs a phase sub-token (stage.Input, stage.Wrap or stage.Output), "
                f"got {phase!r}"
            )
        check_handler(phase, handler)
        self._phase = phase
        self._handler = handler

    @property
    def phase(self) -> MiddlewarePhase[TContext, TResult, TEvent, TWrapped_co]:
        """The phase sub-token the handler runs in."""
        return self._phase

    @property
    def stage(self) -> MiddlewareStage[TContext, TResult, TEvent, TWrapped_co]:
        """The stage the handler belongs to."""
        return self._phase.stage

    @property
    def handler(self) -> Any:
        """The registered handler (its exact type depends on the phase)."""
        return self._handler

    @property
    def name(self) -> str:
        """The handler's name as error messages and logs give it (a function's own name)."""
        return _registration.describe(self._handler)

    def __repr__(self) -> str:
        return f"Middleware({self._phase.where}, {_registration.describe(self._handler)})"
