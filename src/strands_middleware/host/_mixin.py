"""`MiddlewareHostMixin`: ``use()`` and typed ``add_middleware()`` for any agent class.

Registration is where a mistake is cheapest to report, so ``use()`` also asks each item it is
given that implements `RegistrationCheck` whether it can work as registered: on this host (a
host names what it cannot carry in `MiddlewareHostMixin.lacks`) and beside the items registered
before it. An item refuses by raising (nothing is registered) or, where it is still useful,
logs a warning naming what will not work.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Protocol, TypeVar, cast, overload, runtime_checkable

from typing_extensions import Self

from ..engine._handlers import MiddlewareHandler, MiddlewareInputHandler, StageOutputHandler
from ..engine._registry import MiddlewareRegistry, MiddlewareSource
from ..engine._result import MiddlewareResult
from ..engine._stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)
from ..exceptions import UnsupportedStageError
from ..interrupts import Interrupt
from ._resume_prompt import refuse_unaccepted

__all__ = ["RUN_STATE", "UNKNOWN_TOOLS", "AnswerCheck", "MiddlewareHostMixin", "RegistrationCheck"]

UNKNOWN_TOOLS = "unknown tools"
"""A capability: a call to a tool the agent does not have still runs ExecuteToolStage.

The reference agent and the strands bridge carry it (the spec's "unknown tools run through the
chain"); a host that answers such a call itself, before any hook, lists it in ``lacks``.
"""

RUN_STATE = "run state"
"""A capability: every model and tool call of one run is handed the same ``invocation_state``.

A host that hands each stage call a dict of its own lists it in ``lacks``: state an item keeps
for a run (a reversible `Redact`'s pseudonyms) would not outlive the call that made it.
"""


@runtime_checkable
class RegistrationCheck(Protocol):
    """An item that checks, when registered, that it can work on the host and beside the rest."""

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Raise when this item cannot work as registered; log a warning when only part can.

        Args:
            host: The agent (or capability) it is registered on; ``host.lacks`` says what that
                host cannot carry.
            earlier: The items registered on the host before this one, oldest first (the ones
                that implement `RegistrationCheck` or `AnswerCheck`).
        """


@runtime_checkable
class AnswerCheck(Protocol):
    """An item that asks humans, and says at resume whether it understands their answer."""

    def check_answer(self, interrupt: Interrupt, response: object) -> str | None:
        """What is wrong with ``response`` as an answer to ``interrupt`` (a sentence), or None.

        None also when the interrupt is not this item's: only the asker judges its answers.
        """


TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")
TWrapped = TypeVar("TWrapped", bound=MiddlewareResult[Any])


class MiddlewareHostMixin:
    """Gives an agent class a middleware registry with ``use()`` and ``add_middleware()``.

    The registry is created on first use, so the mixin needs no ``__init__`` cooperation. The
    host's stage points then call the runners in `strands_middleware.host` with
    ``self.middleware_registry``.
    """

    _middleware_registry: MiddlewareRegistry | None = None
    _checked_items: list[object] | None = None

    lacks: ClassVar[Mapping[str, str]] = {}
    """Capabilities this host cannot carry (`UNKNOWN_TOOLS`, ...), each with the reason.

    Items that need one say so at registration (see `RegistrationCheck`), naming what will not
    work; the reason is quoted in what they say.
    """

    refused_stages: ClassVar[Mapping[MiddlewareStage[Any, Any, Any], str]] = {}
    """Stages this host has no place to run, each with the message that refuses a handler there.

    A registration with a handler on one of them raises `UnsupportedStageError` and registers
    nothing: a handler that would never run is refused rather than kept. ``{names}`` in the
    message is replaced by the refused handlers' names.
    """

    @property
    def middleware_registry(self) -> MiddlewareRegistry:
        """This agent's registry."""
        registry = self._middleware_registry
        if registry is None:
            registry = self._middleware_registry = MiddlewareRegistry()
        return registry

    def use(self, *middleware: MiddlewareSource) -> Self:
        """Register `Middleware` objects (or iterables of them); returns the agent for chaining.

        Raises:
            UnsupportedStageError: one of them has a handler on a stage in `refused_stages`;
                nothing is registered.
            ValueError: an item refused to be registered here (see `RegistrationCheck`), for
                instance a second `ToolApproval` asking under the same name; nothing is
                registered.
        """
        checked = self._check_items(middleware)
        if self.refused_stages:
            # An iterable argument is read once, here: the check and the registration see the
            # same handlers.
            middleware = tuple(
                source if isinstance(source, Middleware) else _listed(source)
                for source in middleware
            )
            probe = MiddlewareRegistry()
            probe.use(*middleware)
            self._refuse(probe)
        self.middleware_registry.use(*middleware)
        if checked:
            self._checked_items = [*(self._checked_items or []), *checked]
        self._middleware_registered()
        return self

    def answer_problem(self, interrupt: Interrupt, response: object) -> str | None:
        """What the registered item that asked ``interrupt`` finds wrong with ``response``.

        A host passes this to `InterruptState.resume` (the reference agent does; a bridge calls
        `check_answers`), so a resume with an answer the asker does not accept (``"yes"`` to a
        `ToolApproval`) is refused before anything runs, naming the answers it accepts. None:
        no item objects.
        """
        for item in self._checked_items or ():
            if isinstance(item, AnswerCheck):
                problem = item.check_answer(interrupt, response)
                if problem is not None:
                    return problem
        return None

    def check_answers(self, answered: Iterable[tuple[Interrupt, Any]]) -> None:
        """Refuse a resume whose answers an item that asked does not accept (`answer_problem`).

        A bridge calls this where it receives the caller's answers, before it hands them to its
        framework, so every host refuses ``"yes"`` to a `ToolApproval` alike: with the same
        error, nothing resumed, the run still paused and answerable.

        Args:
            answered: Each interrupt the resume answers, with its answer.

        Raises:
            InterruptResumeError: an answer was refused; the message names each refused
                interrupt and what its asker accepts.
        """
        refuse_unaccepted(answered, self.answer_problem)

    def _check_items(self, sources: Sequence[object]) -> list[object]:
        """Run each item's `RegistrationCheck`; return the items that check anything."""
        earlier = list(self._checked_items or [])
        for source in sources:
            if isinstance(source, RegistrationCheck):
                source.check_registration(self, tuple(earlier))
            if isinstance(source, (RegistrationCheck, AnswerCheck)):
                earlier.append(source)
        return earlier[len(self._checked_items or []) :]

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
        """Register ``handler`` on a stage (its Wrap phase) or one of its phase sub-tokens.

        Raises:
            UnsupportedStageError: the stage is in `refused_stages`.
        """
        if self.refused_stages:
            probe = MiddlewareRegistry()
            probe.add_middleware(stage_or_phase, handler)
            self._refuse(probe)
        self.middleware_registry.add_middleware(stage_or_phase, handler)
        self._middleware_registered()

    def _middleware_registered(self) -> None:
        """Called after every successful registration; a host may hook its stage points here."""

    def _refuse(self, probe: MiddlewareRegistry) -> None:
        for stage, message in self.refused_stages.items():
            if probe.has_handlers(stage):
                names = ", ".join(
                    getattr(handler, "__qualname__", repr(handler))
                    for _, handler in probe.handlers(stage)
                )
                raise UnsupportedStageError(message.replace("{names}", names))


def _listed(source: object) -> Any:
    """An iterable argument as a list (what the registry refuses stays as it was)."""
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        return list(cast("Iterable[object]", source))
    return source
