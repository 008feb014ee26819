"""The Input and Output phases of a compiled chain: each phase's handlers applied in order.

Input handlers run once before the first Wrap handler; Output handlers run once on the result
event, innermost first, in the driver of `._chain` that holds that event back for them.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from ..exceptions import InterruptException
from ._registration import describe
from ._result import MiddlewareResult

__all__ = [
    "apply_inputs",
    "apply_outputs",
    "output_applies_when",
    "output_conditions",
    "outputs_apply",
]

_logger = logging.getLogger("strands_middleware")

_APPLIES = "_strands_middleware_output_applies"
"""The attribute `output_applies_when` sets on an Output handler."""

_OutputHandler = TypeVar("_OutputHandler", bound=Callable[..., Any])


def output_applies_when(handler: _OutputHandler, applies: Callable[[Any], bool]) -> _OutputHandler:
    """Mark the Output handler ``handler`` as changing nothing in a call whose context (as the
    Wrap handlers get it, after the Input handlers) makes ``applies`` false; returns it.

    When every Output handler of a chain is so marked and none applies to a call, the call runs
    without the driver that holds its result back for them: one generator hop fewer on every
    streamed event. ``applies`` must only answer false where the handler would return the
    result as it is: it is an optimisation, never a change of what the call produces.
    """
    setattr(handler, _APPLIES, applies)
    return handler


def output_conditions(
    outputs: Sequence[Callable[..., Any]],
) -> tuple[Callable[[Any], bool], ...] | None:
    """The tests of ``outputs`` (Output handlers) when every one says for which calls it can
    change anything (`output_applies_when`); None when one of them may change any call."""
    conditions = [getattr(handler, _APPLIES, None) for handler in outputs]
    if None in conditions:
        return None
    return tuple(c for c in conditions if c is not None)


def outputs_apply(chain: Any, context: Any) -> bool:
    """Whether any Output handler of ``chain`` (which has some) may change the result of the
    call ``context``."""
    conditions = chain.output_conditions
    if conditions is None:
        return True
    for applies in conditions:  # noqa: SIM110 (a loop: run on every call, no generator)
        if applies(context):
            return True
    return False


async def apply_outputs(chain: Any, event: Any) -> Any:
    """Apply the Output handlers to the result event and return the event they produce."""
    result_type = chain.stage.result_event
    # The stage's own wrapper class (InvokeModelResult...); a handler may return a plain one.
    wrapper: Any = chain.wrapper
    wrapped: MiddlewareResult[Any] = wrapper(event)
    for handler in chain.outputs:
        try:
            returned = handler(wrapped)
            if inspect.isawaitable(returned):
                returned = await returned
        except InterruptException as raised:
            # The stage's work is done (the tool ran, the model answered): pausing now would do
            # it again on resume. The interrupt is refused; the result goes on through the
            # other Output handlers, so a masking handler still masks it.
            interrupt = raised.interrupt
            _logger.error(
                "Output handler %s (%s.Output) raised interrupt %r (id %s) after the stage's "
                "result was produced; an Output handler cannot pause the call (a resume would "
                "run it again), so the interrupt is refused and the result is kept without this "
                "handler's change. Ask before the work is done: in an Input handler, or in a "
                "Wrap handler before next_fn.",
                describe(handler),
                chain.stage.name,
                interrupt.name,
                interrupt.id,
            )
            continue
        if not isinstance(returned, MiddlewareResult):
            # The stage's own name for a bare result event: a host may hand out a subclass.
            bare: object = returned
            shown = result_type.__name__ if isinstance(bare, result_type) else type(bare).__name__
            raise TypeError(
                f"Output handler {describe(handler)} ({chain.stage.name}.Output) returned "
                f"{shown}; an Output handler must return a MiddlewareResult: "
                "use result.replace(value=...)"
            )
        checked: MiddlewareResult[Any] = cast(Any, returned)
        if not isinstance(checked.value, result_type):
            raise TypeError(
                f"Output handler {describe(handler)} ({chain.stage.name}.Output) returned a "
                f"MiddlewareResult holding {type(checked.value).__name__}; its value must be a "
                f"{result_type.__name__}, the result event of stage {chain.stage.name!r}"
            )
        if not isinstance(checked, wrapper):
            # A plain MiddlewareResult (or another stage's class): the next handler is typed to
            # receive the stage's own wrapper, so it gets one.
            checked = wrapper(checked.value)
        wrapped = checked
    return wrapped.value


def _bad_input_return(chain: Any, handler: object, returned: object) -> TypeError:
    problem = "None" if returned is None else type(returned).__name__
    return TypeError(
        f"Input handler {describe(handler)} ({chain.stage.name}.Input) returned {problem}; an "
        "Input handler must return the context it was given or a new one: end it with "
        "`return context` (or `return context.replace(...)`)"
    )


async def apply_inputs(chain: Any, context: Any) -> Any:
    """Run the Input handlers in order; return the context the Wrap handlers get."""
    for handler in chain.inputs:
        given = context
        context = handler(context)
        if inspect.isawaitable(context):
            context = await context
        if not isinstance(context, type(given)):
            raise _bad_input_return(chain, handler, context)
    return context
