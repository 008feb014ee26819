"""The private strands-agents names the bridge cannot do without, in one place.

strands-agents makes public only what middleware authors construct: the stage tokens and
contexts of the model and tool stages, ``ModelStopReason``, ``ToolResultEvent`` and
``TypedEvent``. Three things the bridge needs have no public home yet:

* the ``AgentStreamStage`` token, which strands keeps in ``strands.middleware._agent_stream``
  until that stage's contract is final (as this library keeps it in ``experimental``);
* the stream event classes other than the two results (text and tool-use deltas, reasoning,
  raw chunks, the model message, tool progress, tool interrupts and the pass's stop event), in
  ``strands.types._events``. The bridge recognises strands' events by these classes and builds
  new ones with them, since the strands loop tells events apart with ``isinstance``;
* the agent's middleware registry (``Agent._middleware_registry``, a
  ``strands.middleware._registry.MiddlewareRegistry`` holding each stage's handlers in
  ``_handlers``), which `DirectRegistry` takes over so a stage the bridge alone wraps is run
  without strands' per-handler generators.

Each name is looked up when the bridge is imported, so a strands release that moves one fails
here with the name and the fix, not later as a half-translated stream. The registry's
attributes are read only by `DirectRegistry`, which leaves a registry it does not recognise as
it is (the bridge then runs through strands' public ``add_middleware`` alone, a little slower).
``tests/bridges/test_seams.py`` also pins the payload of every event class (its dict keys and
constructor), which is what `translate` relies on.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Callable
from importlib import metadata
from typing import TYPE_CHECKING, Any, cast

__all__ = [
    "PRIVATE_NAMES",
    "AgentStreamStage",
    "DirectRegistry",
    "EventLoopStopEvent",
    "ModelMessageEvent",
    "ModelStreamChunkEvent",
    "ReasoningRedactedContentStreamEvent",
    "ReasoningSignatureStreamEvent",
    "ReasoningTextStreamEvent",
    "TextStreamEvent",
    "ToolInterruptEvent",
    "ToolStreamEvent",
    "ToolUseStreamEvent",
    "private_name",
]

_EVENTS = "strands.types._events"

PRIVATE_NAMES: tuple[tuple[str, str], ...] = (
    ("strands.middleware._agent_stream", "AgentStreamStage"),
    (_EVENTS, "EventLoopStopEvent"),
    (_EVENTS, "ModelMessageEvent"),
    (_EVENTS, "ModelStreamChunkEvent"),
    (_EVENTS, "ReasoningRedactedContentStreamEvent"),
    (_EVENTS, "ReasoningSignatureStreamEvent"),
    (_EVENTS, "ReasoningTextStreamEvent"),
    (_EVENTS, "TextStreamEvent"),
    (_EVENTS, "ToolInterruptEvent"),
    (_EVENTS, "ToolStreamEvent"),
    (_EVENTS, "ToolUseStreamEvent"),
    ("strands.middleware._registry", "MiddlewareRegistry"),
)
"""Every ``(module, name)`` the bridge reads from a private strands-agents module."""


def private_name(module: str, name: str) -> Any:
    """``module.name`` from the installed strands-agents, or an ImportError saying what to do."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        try:
            version = metadata.version("strands-agents")
        except metadata.PackageNotFoundError:  # pragma: no cover - strands is importable here
            version = "(unknown version)"
        raise ImportError(
            f"strands_middleware.bridges.strands needs {module}.{name}, which strands-agents "
            f"{version} does not have: the name is private to strands-agents and this release "
            "moved it. Pin strands-agents to a release that has it (1.62.0 does: "
            'pip install "strands-agents==1.62.0"), or upgrade strands-middleware to a release '
            "that supports this strands-agents."
        ) from error


AgentStreamStage: Any = private_name(*PRIVATE_NAMES[0])
EventLoopStopEvent: Any = private_name(*PRIVATE_NAMES[1])
ModelMessageEvent: Any = private_name(*PRIVATE_NAMES[2])
ModelStreamChunkEvent: Any = private_name(*PRIVATE_NAMES[3])
ReasoningRedactedContentStreamEvent: Any = private_name(*PRIVATE_NAMES[4])
ReasoningSignatureStreamEvent: Any = private_name(*PRIVATE_NAMES[5])
ReasoningTextStreamEvent: Any = private_name(*PRIVATE_NAMES[6])
TextStreamEvent: Any = private_name(*PRIVATE_NAMES[7])
ToolInterruptEvent: Any = private_name(*PRIVATE_NAMES[8])
ToolStreamEvent: Any = private_name(*PRIVATE_NAMES[9])
ToolUseStreamEvent: Any = private_name(*PRIVATE_NAMES[10])


if TYPE_CHECKING:
    from strands.middleware._registry import MiddlewareRegistry as _HostRegistry
else:
    _HostRegistry = private_name(*PRIVATE_NAMES[11])

_Handler = Callable[[Any, Any], AsyncIterator[Any]]

_HOST_CLASS: Any = _HostRegistry
_STRANDS_INVOKE: object = _HOST_CLASS.invoke
_STRANDS_COMPOSE: object = _HOST_CLASS.compose


def _strands_runs_as_shipped() -> bool:
    """Whether strands' registry class has the ``invoke`` and ``compose`` it was imported with.

    Code that patches them on the class (a tracer, a test's ``mock.patch.object``) expects every
    stage to go through its patch, so the bridge then leaves every stage to strands.
    """
    host = _HOST_CLASS
    return host.invoke is _STRANDS_INVOKE and host.compose is _STRANDS_COMPOSE


class DirectRegistry(_HostRegistry):
    """A strands agent's own registry, letting the bridge run a stage it alone wraps.

    strands runs a stage through ``MiddlewareRegistry.invoke``: a generator around a chain it
    composes per call, each handler inside a layer generator of its own. When the bridge's
    handler is the only one strands holds for the stage (every handler then lives in this
    library's chain, the usual case), those two generators only pass events on, and every
    streamed event crosses both on its way out. For such a stage ``invoke`` calls the bridge's
    handler with strands' terminal itself and returns its stream.

    That is the same run: what strands' layer adds is closing the handler's stream and each
    terminal stream it opened, which the bridge's stream does itself (leaving the chain closes
    every stream the chain opened, and the terminal's stream is closed by the generator that
    iterates it; one never iterated has run no code to clean up). A stage with any other handler,
    registered with ``agent.add_middleware`` before or after the bridge, runs through strands'
    own composition, the bridge's handler one layer among the others, in registration order; so
    does every stage while strands' ``MiddlewareRegistry.invoke`` or ``compose`` is patched on the
    class, so the patch sees every stage.

    The agent's registry becomes one in place (`of` changes its class), so whatever holds it
    keeps holding the same object and handlers.
    """

    _direct: dict[Any, _Handler]

    @classmethod
    def of(cls, agent: Any) -> DirectRegistry | None:
        """The agent's registry as a `DirectRegistry`; ``None`` when it is not strands' own."""
        registry: Any = getattr(agent, "_middleware_registry", None)
        if isinstance(registry, DirectRegistry):
            return registry
        if type(registry) is not _HostRegistry or not isinstance(
            getattr(registry, "_handlers", None), dict
        ):
            return None
        direct: Any = registry
        direct.__class__ = cls
        direct._direct = {}
        return cast(DirectRegistry, direct)

    def run_directly(self, stage: Any, handler: _Handler) -> None:
        """Call ``handler`` itself for ``stage`` whenever it is the stage's only handler."""
        self._direct[stage] = handler

    def invoke(self, stage: Any, context: Any, terminal: Any) -> Any:
        """The stage's events: the bridge's stream itself when it alone wraps the stage."""
        handler = self._direct.get(stage)
        if handler is not None and _strands_runs_as_shipped():
            tagged: Any = self._handlers.get(stage)
            # getattr: a strands release that reshapes the list falls back rather than fails.
            only: Any = getattr(tagged[0], "handler", None) if tagged and len(tagged) == 1 else None
            if only is handler:
                return handler(context, terminal)
        host: Any = super()
        return host.invoke(stage, context, terminal)
