"""A stage's handlers compiled into one chain, the generator that runs it, and `Outbound`.

Cost model. Every streamed event crosses every layer, so the layout is chosen per event:

* each Wrap handler is exactly one generator hop: ``next_fn`` returns the inner handler's own
  generator, not a wrapper around it;
* Input handlers run once, before the first Wrap handler is called, and add no hop;
* all Output handlers share the one driver generator that also does the cleanup, so they add no
  hop either: the driver holds the result event and applies them innermost first; a call for
  which every Output handler is known to change nothing (`output_applies_when` in `._phases`)
  runs without that driver, as if there were none;
* `MiddlewareRegistry.invoke` runs a stage with no handlers as its bare terminal;
* a bridge's `Outbound` translation runs in the driver's own loop, so it adds no hop either
  (except with Output handlers, whose driver it follows in a generator of its own);
* a consumer that holds the run in ``async with`` (`OpenedChain`, from `registry.open`) takes
  the driver's place, so a chain of Wrap handlers then costs exactly one hop per handler: the
  host runners are generators that loop over the stream anyway, and their loop is the layer
  the driver would have added;
* a Wrap handler that only watches its call (admits it, then learns how it ended) is marked
  with `._watch.watching`; where it is among the outermost Wrap handlers of a call run through
  an `OpenedChain` whose consumer reports what it reads (`OpenedChain.reporting`), and no Output
  handler applies, its watch runs instead of its generator: the before-part on entering the
  block, the after-part on leaving it, told the `._watch.Outcome` the generator would have seen
  (the result and halts the consumer reported, the exception leaving the block, or a stream
  left unfinished). It then costs no hop; anywhere else (inside another Wrap handler, under
  `MiddlewareRegistry.invoke`, under a consumer that does not report) it is its generator, so
  its place among the handlers means what it always did (a breaker inside `Retry` sees each
  attempt). The consumer pays nothing more per event: it tests one set (`OpenedChain.passing`)
  where it would have tested for the result.

Why this and not less: cutting each watching handler's own work per event (a set lookup in
place of an ``isinstance``, store calls without awaits) leaves the hop, which is most of what
such a handler costs: 9% of a run of the reference agent (820 streamed events over two model
calls), against 1.5% to 4% for all the rest (the machine instructions of `CircuitBreaker`,
`UsageBudget` and a monitoring `Guardrail` went from 1.12x of a run without middleware to
1.015x, 1.021x and 1.043x). A hop cannot be avoided by a handler that must see every event, and
the consumer above the outermost handler already sees them. Consumers that do not report (the
bridges' own loops) keep the generator layers, unchanged. A handler that must be able to call
``next_fn`` again (`ContextWindow`'s overflow recovery retries a call that failed before its
first event) cannot be a watch; a stream object handing the inner generator's awaitables on
from a Python ``__anext__`` was tried for it and measured: it saves bytecodes but not machine
instructions (1.115x before, 1.116x with it), a Python-level ``__anext__`` called from the
interpreter costing as much as the generator hop it replaces, so it was not kept.

Cleanup contract. Every generator the chain opens (handler generators and terminal streams) is
recorded as it is opened and closed exactly once with ``aclose()``, innermost first, when the
driver finishes (or the ``async with`` block of an `OpenedChain` is left): on normal end, on an
exception, on cancellation, and when the consumer stops early. Closing innermost first means a
handler's ``finally`` runs after everything it wrapped has released its resources, the same order
nested ``async with`` blocks unwind in; a watch's after-part runs once all that is done,
innermost watcher first, as its generator's ``finally`` would have. A handler that abandons an
inner chain early (it stops iterating ``next_fn(...)``, or retries) and needs it released at once
can close it itself (``await stream.aclose()``); closing twice is harmless.

Exceptions. An exception raised in the chain reaches the caller as the same object (or, given an
`Outbound`, as what its ``error_out`` makes of it, chained to the original). If closing a
generator also fails while that exception is propagating, the original still wins and the
cleanup failure is logged; if nothing else is propagating, the first cleanup failure is raised
after every generator has been closed.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._cleanup import all_finished, close_after_failure, close_unfinished
from ._link import link, open_terminal
from ._phases import apply_inputs, apply_outputs, output_conditions, outputs_apply
from ._result import NEVER_HALTING, halts_stage
from ._stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
    result_wrapper,
)
from ._watch import Enter, Leave, Outcome, enter_all, has_ended, leave_all, watch_of

__all__ = ["CompiledChain", "OpenedChain", "Outbound", "compile_chain"]

_logger = logging.getLogger("strands_middleware")


TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")

_Opened = list[AsyncIterator[Any]]
_Next = Callable[[Any], AsyncIterator[Any]]


class CompiledChain(Generic[TContext, TResult, TEvent]):
    """The handlers of one stage, in the order they run; rebuilt only when one is registered.

    Every agent holds one per stage it has handlers on, so it keeps what a call reads and little
    more: what only an error or a registration needs (which handler calls which ``next_fn``,
    the registrations themselves) is derived when asked for.

    Attributes:
        inputs: Input handlers, outermost (first registered) first.
        wraps: Wrap handlers, outermost (first registered) first.
        outputs: Output handlers in application order: innermost (last registered) first.
    """

    __slots__ = (
        "_mixed",
        "inputs",
        "output_conditions",
        "outputs",
        "passing",
        "stage",
        "watchers",
        "wrapper",
        "wraps",
    )

    def __init__(
        self,
        stage: MiddlewareStage[TContext, TResult, TEvent],
        inputs: Sequence[Callable[[Any], Any]],
        wraps: Sequence[Callable[[Any, Any], Any]],
        outputs: Sequence[Callable[[Any], Any]],
        entries: Sequence[Middleware[Any, Any, Any]] = (),
    ) -> None:
        self.stage = stage
        self.inputs = tuple(inputs)
        self.wraps = tuple(wraps)
        self.outputs = tuple(reversed(outputs))
        self.wrapper = result_wrapper(stage)
        # The registrations are kept only when they span phases: their order across phases is
        # then not in the three tuples (see `registrations`).
        spanned = sum(1 for handlers in (self.inputs, self.wraps, self.outputs) if handlers)
        self._mixed = tuple(entries) if spanned > 1 else None

        # The event classes the Output handlers' driver lets straight through, learnt as it
        # meets them (see `_passes`), shared by every chain with the same result class.
        self.passing = _PASSING.setdefault(stage.result_event, set())
        # When every Output handler says for which calls it can change anything, those tests;
        # None when one of them may change any call.
        self.output_conditions = output_conditions(self.outputs)
        # The watches of the outermost Wrap handlers that only watch (see `._watch`).
        watchers: list[Enter] = []
        for handler in self.wraps:
            enter = watch_of(handler)
            if enter is None:
                break
            watchers.append(enter)
        self.watchers = tuple(watchers)

    @property
    def where(self) -> str:
        """``"<stage name>.Wrap"``, as error messages name the Wrap handlers' place."""
        return self.stage.Wrap.where

    def registrations(self) -> tuple[Middleware[Any, Any, Any], ...]:
        """Every registration on the stage, in registration order."""
        if self._mixed is not None:
            return self._mixed
        stage = self.stage
        # One phase only: its tuple is in registration order (the Output one reversed).
        return (
            *(Middleware(stage.Input, handler) for handler in self.inputs),
            *(Middleware(stage.Wrap, handler) for handler in self.wraps),
            *(Middleware(stage.Output, handler) for handler in reversed(self.outputs)),
        )

    def run(
        self,
        context: TContext,
        terminal: Callable[[TContext], AsyncIterator[TEvent]],
        outbound: Outbound | None = None,
    ) -> AsyncGenerator[Any, None]:
        """Run the chain around ``terminal`` for one invocation (``outbound``: see `Outbound`)."""
        if outbound is not None and self.outputs:
            # The Output handlers' driver yields from several places, so the translation runs
            # in a generator after it: one hop more, only where a bridged stage has Output
            # handlers.
            return translated_stream(
                self.stage, lambda: _drive(self, context, terminal, None), outbound
            )
        return _drive(self, context, terminal, outbound)


_PASSING: dict[type, set[type]] = {}
"""Per result class, the event classes a driver passes at once (see `_passes`)."""


def compile_chain(
    stage: MiddlewareStage[Any, Any, Any], entries: Sequence[Middleware[Any, Any, Any]]
) -> CompiledChain[Any, Any, Any]:
    """The chain of ``entries``, the registrations on ``stage``, oldest first."""
    return CompiledChain(
        stage,
        inputs=[m.handler for m in entries if isinstance(m.phase, MiddlewareInputPhase)],
        wraps=[m.handler for m in entries if isinstance(m.phase, MiddlewareWrapPhase)],
        outputs=[m.handler for m in entries if isinstance(m.phase, MiddlewareOutputPhase)],
        entries=entries,
    )


def translated_stream(
    stage: MiddlewareStage[Any, Any, Any],
    open_stream: Callable[[], AsyncIterator[Any]],
    outbound: Outbound,
) -> AsyncGenerator[Any, None]:
    """The stream ``open_stream`` returns, translated by ``outbound`` under the driver's rules.

    It is the driver of a chain with no handlers: the stream is opened on first use (an error
    opening it is translated too), closed once, and a failure closing it is logged.
    """
    return _drive(CompiledChain(stage, (), (), ()), None, lambda _context: open_stream(), outbound)


async def _after_failure(
    opened: _Opened, error: BaseException, outbound: Outbound | None
) -> BaseException:
    """Close what was opened after ``error``; return what to raise: ``error`` or its translation."""
    await close_after_failure(opened)
    return error if outbound is None else outbound.raised(error)


def _passes(chain: CompiledChain[Any, Any, Any], cls: type) -> None:
    """Let the driver pass events of ``cls`` at once from now on, if that is always right.

    It is when no event of the class can halt a stage (`NEVER_HALTING`) nor be the stage's result:
    both are facts of the class, except that an ABC's ``register`` can make a class a subclass
    later, so a result class with a metaclass of its own is never trusted this way.
    """
    result_type = chain.stage.result_event
    if cls in NEVER_HALTING and type(result_type) is type and not issubclass(cls, result_type):
        chain.passing.add(cls)


async def _drive(
    chain: CompiledChain[Any, Any, Any],
    context: Any,
    terminal: Callable[[Any], AsyncIterator[Any]],
    outbound: Outbound | None,
    *,
    inputs_applied: bool = False,
) -> AsyncGenerator[Any, None]:
    opened: _Opened = []
    try:
        if chain.inputs and not inputs_applied:
            context = await apply_inputs(chain, context)
        # Asked before any Wrap handler is called, as `OpenedChain` asks it.
        outputs = bool(chain.outputs) and outputs_apply(chain, context)
        stream = link(chain, terminal, opened)(context)
        if outbound is not None:  # never with Output handlers (CompiledChain.run)
            translate = outbound.event_out
            async for event in stream:
                out = translate(event)
                if out is not None:
                    yield out
        elif not outputs:
            async for event in stream:
                yield event
        else:
            result_type = chain.stage.result_event
            passing = chain.passing
            held: Any = None
            halted = False
            async for event in stream:
                if event.__class__ in passing:
                    # Nearly every event (text deltas): neither the result nor able to halt, so
                    # it goes out at once, for one set lookup.
                    yield event
                elif halted:
                    yield event
                elif isinstance(event, result_type):
                    # The result is the last event of the result class: a later one replaces it.
                    held = event
                elif event.__class__ not in NEVER_HALTING and halts_stage(event):
                    # An interrupt-control event halts the stage: it has no result, so nothing
                    # is transformed and whatever was held goes out as it came.
                    halted = True
                    if held is not None:
                        yield held
                        held = None
                    yield event
                else:
                    _passes(chain, event.__class__)
                    yield event
            if held is not None:
                yield await apply_outputs(chain, held)
    except GeneratorExit:
        await close_unfinished(opened)
        raise
    except BaseException as error:
        raised = await _after_failure(opened, error, outbound)
        if raised is not error:
            raise raised from error
        raise
    if not all_finished(opened):
        await close_unfinished(opened)


class OpenedChain(Generic[TEvent]):
    """One run of a stage's chain, driven by its consumer inside ``async with``.

    ``async with registry.open(stage, context, terminal) as stream`` runs the Input handlers on
    entering the block and gives the stream of the outermost Wrap handler itself, with no driver
    generator around it: the consumer's own loop is the only layer above the handlers, so a
    streamed event crosses one generator hop fewer than through `MiddlewareRegistry.invoke`.
    The driver's other duty, the cleanup contract, is kept by leaving the block: every stream the
    chain opened is closed once, innermost first, whether the block ends normally, by ``break``,
    by an exception or by ``GeneratorExit``; an exception leaving the block wins over a failure
    to close (which is logged), and with nothing else propagating the first such failure is
    raised once everything is closed.

    The block owns the stream: iterate it inside the block only (after the block it is closed
    and yields nothing), and leave closing it to the block: ``aclose()`` on it would close the
    outermost handler before what it wraps. An instance is one run; entering it again is a
    `RuntimeError` (call ``registry.open`` again instead).

    A chain with Output handlers keeps its driver generator, which must hold the result back
    until the stream ends, so there the stream is the driver's; a stage without handlers streams
    its terminal, closed on leaving the block like any stream the chain opens.

    A consumer that reports what it sees (`reporting`) lets the outermost Wrap handlers that only
    watch (`._watch`) run as their watch instead of as generator layers: after entering, when
    `watching` is true, the consumer hands `saw` every event whose class is not in `passing`
    (one set lookup per event, where it would test for the result anyway), and reads the
    result from `result`.

    Attributes:
        watching: Whether watches run in this block (set on entering): the consumer must then
            report every event whose class is not in `passing` to `saw`. The three below are
            set only then.
        passing: Event classes that are neither the stage's result nor able to halt it.
        result: The last event of the stage's result class reported to `saw`, or None.
        halted: Whether an event that halts the stage was reported to `saw`.
    """

    __slots__ = (
        "_chain",
        "_context",
        "_entered",
        "_leaves",
        "_opened",
        "_reporting",
        "_stage",
        "_stream",
        "_terminal",
        "halted",
        "passing",
        "result",
        "watching",
    )

    def __init__(
        self,
        stage: MiddlewareStage[Any, Any, TEvent],
        chain: CompiledChain[Any, Any, TEvent] | None,
        context: Any,
        terminal: Callable[[Any], AsyncIterator[TEvent]],
    ) -> None:
        self._stage = stage
        self._chain = chain
        self._context = context
        self._terminal = terminal
        self._opened: _Opened = []
        self._entered = False
        self._reporting = False
        self._leaves: list[Leave] | None = None
        self.watching = False
        # What a watch learns (`_stream`, `result`, `halted`, `passing`) is set on entering,
        # only where watches run: every other call is spared the assignments.
        self._stream: object
        self.result: TEvent | None
        self.halted: bool
        self.passing: set[type]

    def reporting(self) -> OpenedChain[TEvent]:
        """Promise to report events to `saw` whenever `watching` is true; return this run.

        Call it before entering. A consumer that does not promise it runs every handler as a
        generator layer; one that does may run a watching handler as its watch, which spares
        every streamed event a generator hop.
        """
        self._reporting = True
        return self

    def saw(self, event: TEvent) -> None:
        """Report an event the consumer read whose class is not in `passing`."""
        if isinstance(event, self._stage.result_event):
            self.result = event
        elif event.__class__ not in NEVER_HALTING and halts_stage(event):
            self.halted = True
        elif self._chain is not None:
            _passes(self._chain, event.__class__)

    async def __aenter__(self) -> AsyncIterator[TEvent]:
        if self._entered:
            raise RuntimeError(
                f"this OpenedChain of stage {self._stage.name!r} was already entered: it is one "
                "run; call registry.open(...) again for another"
            )
        self._entered = True
        chain = self._chain
        terminal = self._terminal
        opened = self._opened
        try:
            if chain is None:
                return open_terminal(self._stage, terminal, self._context, opened)
            context = self._context
            if chain.inputs:
                context = await apply_inputs(chain, context)
            if chain.outputs and outputs_apply(chain, context):
                driven: AsyncIterator[TEvent] = _drive(
                    chain, context, terminal, None, inputs_applied=True
                )
                opened.append(driven)
                return driven
            watchers = chain.watchers
            if watchers and self._reporting:
                self.result, self.halted, self.passing = None, False, chain.passing
                self._leaves = leaves = await enter_all(watchers, context)
                self.watching = True
                try:
                    stream = self._stream = link(chain, terminal, opened, len(watchers))(context)
                except BaseException as error:  # the watches see it come out of the call
                    raised = await leave_all(leaves, Outcome(error, True, None, False))
                    if raised is not error and raised is not None:
                        raise raised from error
                    raise
                return stream
            return link(chain, terminal, opened)(context)
        except BaseException:
            await close_after_failure(opened)
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: object,
    ) -> None:
        leaves = self._leaves
        # Whether the call ran to its end (or raised) before the block was left: asked before
        # the cleanup below closes what has not.
        ended = bool(leaves) and has_ended(self._stream)
        failure: BaseException | None = None
        if exc is None or isinstance(exc, GeneratorExit):
            # Ended, left by ``break``, or closed early: what has not finished is closed, and a
            # failure to close is the error (GeneratorExit carries on when nothing failed). The
            # check first spares the drained case (the common one) a coroutine.
            if not all_finished(self._opened):
                if not leaves:
                    await close_unfinished(self._opened)
                    return
                try:
                    await close_unfinished(self._opened)
                except BaseException as closing:  # raised once the watches have been told
                    failure = closing
        else:
            # An exception is leaving the block: it wins; closing failures are logged.
            await close_after_failure(self._opened)
        if not leaves:
            return
        # After everything the watchers wrap is closed, as their generators' ``finally`` would.
        seen = exc if ended else None
        raised = await leave_all(leaves, Outcome(seen, ended, self.result, self.halted))
        if raised is not seen and raised is not None:
            raise raised
        if failure is not None:
            raise failure


# ---- Outbound: a host loop's own event and error types -------------------------------------
#
# A bridge runs this library's chain inside a host's agent loop: the chain yields this library's
# events, the host expects its own. Translating in a generator of the bridge's around the chain
# costs a generator hop on every streamed event; given to `MiddlewareRegistry.invoke`, an
# `Outbound` is applied by the chain's own driver instead, where the event already passes.


@dataclass(frozen=True)
class Outbound:
    """The translations a host applies to what leaves a chain.

    A bridge passes one to ``registry.invoke(stage, context, terminal, outbound=...)`` and reads
    the host's own events from the stream it gets back.

    Args:
        event_out: Called with each event the chain yields, in order; what it returns is
            yielded instead, and ``None`` drops the event.
        error_out: Called with any exception leaving the chain (`asyncio.CancelledError` and
            one raised by ``event_out`` included), once every generator of the chain has been
            closed. An exception it returns other than the one it was given is raised instead,
            chained to it (``raise returned from error``); the same one or ``None`` lets the
            original go on unchanged. A failure while closing the chain is logged, as without
            an `Outbound`, never handed to it. Not called when the consumer closes the stream.
    """

    event_out: Callable[[Any], Any]
    error_out: Callable[[BaseException], BaseException | None] | None = None

    def raised(self, error: BaseException) -> BaseException:
        """What leaves in place of ``error``: its translation, or ``error`` itself."""
        if self.error_out is None:
            return error
        translated = self.error_out(error)
        return error if translated is None else translated

    def apply(self, stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
        """``stream`` with these translations applied, in a generator of its own.

        For a stream no chain driver translates (with Output handlers the driver's stream is
        translated this way too). The stream is closed once, when the generator ends, fails or
        is closed.
        """
        return translated_stream(_STREAM, lambda: stream, self)


_STREAM = MiddlewareStage[Any, Any, Any]("translated stream", result_type=object)
"""The stage `Outbound.apply` names in its errors (a stream that is not an async iterator)."""
