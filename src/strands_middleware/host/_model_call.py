"""Running InvokeModelStage at a host's model-call point."""

from __future__ import annotations

import copy
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

from ..content import Messages, StreamEvent, SystemPrompt, ToolChoice, ToolSpec
from ..engine._chain import OpenedChain
from ..engine._registry import MiddlewareRegistry, missing_result
from ..events import ModelStopReason, TypedEvent
from ..exceptions import MissingResultError
from ..models import Model
from ..stages._invoke_model import (
    InvokeModelContext,
    InvokeModelStage,
    OnReadField,
    field_read,
    field_source,
    has_projection,
    made_on_read,
    project_on_read,
    split_system_prompt,
)
from ._changes import UNTRACKED, Handed, Untracked
from ._model_stream import process_model_stream
from ._token_projection import CallUsage

__all__ = [
    "ModelStagePoint",
    "estimate_on_read",
    "invoke_model_terminal",
    "model_call_context",
    "run_model_call",
]

ModelTerminal = Callable[[InvokeModelContext], AsyncGenerator[TypedEvent, None]]
"""What does a model call for the stage: the host's own call, given the handlers' context."""


def _model_context(
    *,
    agent: Any,
    messages: Messages,
    system_prompt: SystemPrompt,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    invocation_state: dict[str, Any],
    model: Model,
    projected_input_tokens: int | None = None,
) -> InvokeModelContext:
    # The one place a model call's context is made, on every host: a field derived from the
    # request is filled here, once for all of them.
    return InvokeModelContext(
        agent=agent,
        messages=messages,
        system_prompt=system_prompt,
        tool_specs=tool_specs,
        tool_choice=tool_choice,
        invocation_state=invocation_state,
        model=model,
        projected_input_tokens=projected_input_tokens,
    )


_CALL_USAGE: weakref.WeakKeyDictionary[MiddlewareRegistry, CallUsage] = weakref.WeakKeyDictionary()
"""The usage of each agent's recent model calls, by the agent's registry (one per agent)."""


def _call_usage(registry: MiddlewareRegistry) -> CallUsage:
    found = _CALL_USAGE.get(registry)
    if found is None:
        found = _CALL_USAGE[registry] = CallUsage()
    return found


def estimate_on_read(context: InvokeModelContext, estimate: Callable[..., int]) -> None:
    """Make ``context.projected_input_tokens`` ``estimate(messages, system_prompt=...,
    tool_specs=...)`` of the request the context holds now, made on the first read (the lists
    as they are then). ``estimate`` is `CallUsage.project` on a bridged host, with the usage the
    agent's calls recorded by then, or `project_input_tokens` given the previous call."""
    messages, system_prompt = field_source(context, "messages"), context.system_prompt
    tool_specs = field_source(context, "tool_specs")
    project_on_read(
        context,
        lambda: estimate(messages(), system_prompt=system_prompt, tool_specs=tool_specs()),
    )


class ModelStagePoint:
    """One model call at a host's stage point: the handlers' context, the chain, what changed.

    A bridge makes one per model call with the request translated to Converse, runs the stage
    around its own model call (`run`, `result`, or `open` for a host that drives the stream
    itself, which then hands the result to `finished`), and sends the host what `changed`
    reports, translated back. The request values are handed to handlers as given (a bridge's
    translation is already a copy of the host's data); ``copy_request=True`` deep-copies them
    first, as a host handing out its own lists must. A bridge that tells what handlers changed
    its own way (comparing the request with a translation of its own) passes
    ``tracks_changes=False``: the point then keeps no record of what it handed out, and
    `changed` is refused.

    ``messages`` and ``tool_specs`` may each be a function that makes them: a bridge whose
    translation of its history (or of its tools) is its only use of it passes one, and the
    point calls it when a handler first reads the field (or the projected figure), not at all
    when none does. Such a point neither copies the request nor tracks changes
    (``copy_request=False``, ``tracks_changes=False``): the bridge asks `seen` whether handlers
    saw the field, and compares it with its own translation when they did.

    ``projected_input_tokens`` is the request's input tokens as strands-agents estimates them
    (see `project_input_tokens`): a host that has the figure passes it; without it (None), the
    point projects it from the request and the usage the agent's previous calls reported (each
    call's result is noted by the agent's registry when the call ends, `finished`): the whole
    request is estimated on the agent's first call, and after that the last call's usage
    counts for the history up to the turn it produced, as a message's strands usage metadata
    does. The estimate is made when a handler first reads the field (`estimate_on_read`: most
    calls have none that does), of the request the point was given. The figure is left None
    when the stage has no handlers (nothing would read it).

    Attributes:
        context: The context the handlers receive.
    """

    __slots__ = ("_handed", "_registry", "_usage", "context")

    def __init__(
        self,
        registry: MiddlewareRegistry,
        *,
        agent: Any,
        messages: Messages | Callable[[], Messages],
        system_prompt: SystemPrompt,
        tool_specs: list[ToolSpec] | Callable[[], list[ToolSpec]],
        tool_choice: ToolChoice | None,
        invocation_state: dict[str, Any],
        model: Model,
        projected_input_tokens: int | None = None,
        copy_request: bool = False,
        tracks_changes: bool = True,
    ) -> None:
        on_read: dict[OnReadField, Callable[[], Any]] = {}
        if callable(messages):
            on_read["messages"], messages = messages, []
        if callable(tool_specs):
            on_read["tool_specs"], tool_specs = tool_specs, []
        if on_read and (copy_request or tracks_changes):
            option = "copy_request" if copy_request else "tracks_changes"
            name = next(iter(on_read))
            raise ValueError(
                f"{name} given as a function are made when a handler first reads them, but "
                f"{option}=True reads them at once: pass {option}=False (and compare what "
                f"reaches the terminal with your own translation where the point's "
                f"seen(context, {name!r}) says handlers saw it), or pass the {name} themselves"
            )
        if copy_request:
            messages = copy.deepcopy(messages)
            system_prompt = copy.deepcopy(system_prompt)
            tool_specs = copy.deepcopy(tool_specs)
            tool_choice = copy.deepcopy(tool_choice)
        self._registry = registry
        self.context = _model_context(
            agent=agent,
            messages=messages,
            system_prompt=system_prompt,
            tool_specs=tool_specs,
            tool_choice=tool_choice,
            invocation_state=invocation_state,
            model=model,
            projected_input_tokens=projected_input_tokens,
        )
        for name, make in on_read.items():
            made_on_read(self.context, name, make)
        # The agent's record of its calls' usage, while the stage has handlers (`finished`).
        self._usage = _call_usage(registry) if registry.has_handlers(InvokeModelStage) else None
        if projected_input_tokens is None and self._usage is not None:
            # Only a handler reads the figure, and most never do: it is made on the first read.
            estimate_on_read(self.context, self._usage.project)
        self._handed: Handed | Untracked = Handed(self.context) if tracks_changes else UNTRACKED

    def changed(self, ours: InvokeModelContext) -> dict[str, Any]:
        """The fields of ``ours`` (what reached the terminal) the handlers changed, by name.

        A field counts as changed when it holds another object than the one handed out, or
        when a list it holds was changed in place (an item added, removed or replaced).

        Raises:
            RuntimeError: The point was made with ``tracks_changes=False``.
        """
        return self._handed.changed(ours)

    def open(self, terminal: ModelTerminal) -> OpenedChain[TypedEvent]:
        """The chain around ``terminal``, for a host that iterates it in its own block.

        That host tracks the result itself: it hands it to `finished`, or raises `missing` when
        the stream ended without one (`run` and `result` do both).
        """
        return self._registry.open(InvokeModelStage, self.context, terminal)

    def finished(self, result: ModelStopReason) -> ModelStopReason:
        """Note the call's result (its usage is the baseline of the agent's next projection),
        and return it."""
        if self._usage is not None:
            self._usage.record(result.message, result.usage)
        return result

    @staticmethod
    def seen(ours: InvokeModelContext, field: OnReadField) -> bool:
        """Whether ``ours`` (what reached the terminal) holds the request field ``field``:
        given by a handler, or made on read (the point was given a function) and read since.
        False means no handler saw it: the host's own request stands."""
        return field_read(ours, field)

    @staticmethod
    def missing() -> MissingResultError:
        """The error for a stream that ended without its `ModelStopReason`."""
        return missing_result(InvokeModelStage)

    async def run(self, terminal: ModelTerminal) -> AsyncGenerator[TypedEvent, None]:
        """Run the stage around ``terminal``; the last `ModelStopReason` yielded is the result.

        Raises:
            MissingResultError: the chain produced no `ModelStopReason`.
        """
        found: ModelStopReason | None = None
        opened = self.open(terminal).reporting()
        async with opened as stream:
            if opened.watching:
                # Watching handlers run as their watch (see `OpenedChain.reporting`): an event
                # they may need is reported; the others cost the same set lookup as the test.
                passing = opened.passing
                async for event in stream:
                    if event.__class__ not in passing:
                        opened.saw(event)
                    yield event
                found = cast("ModelStopReason | None", opened.result)
            else:
                async for event in stream:
                    if isinstance(event, ModelStopReason):
                        found = event
                    yield event
        if found is None:
            raise missing_result(InvokeModelStage)
        self.finished(found)

    async def result(
        self, terminal: ModelTerminal, on_event: Callable[[TypedEvent], object] | None = None
    ) -> ModelStopReason:
        """Run the stage to its end and return its result (``on_event`` sees every event).

        Raises:
            MissingResultError: the chain produced no `ModelStopReason`.
        """
        result: ModelStopReason | None = None
        opened = self.open(terminal).reporting()
        async with opened as stream:
            if opened.watching:  # as in `run`
                passing = opened.passing
                async for event in stream:
                    if event.__class__ not in passing:
                        opened.saw(event)
                    if on_event is not None:
                        on_event(event)
                result = cast("ModelStopReason | None", opened.result)
            else:
                async for event in stream:
                    if isinstance(event, ModelStopReason):
                        result = event
                    if on_event is not None:
                        on_event(event)
        if result is None:
            raise missing_result(InvokeModelStage)
        self.finished(result)
        return result


def model_call_context(
    agent: Any,
    *,
    messages: Messages,
    system_prompt: SystemPrompt,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    invocation_state: dict[str, Any],
    model: Model,
    projected_input_tokens: int | None = None,
) -> InvokeModelContext:
    """Build the context of one model call, with the defensive copies the stage promises.

    The request fields are deep-copied so handlers cannot reach into the agent's history through
    them; ``invocation_state`` and ``model`` are passed by reference. ``projected_input_tokens``
    is what `project_input_tokens` gives for the host's history; without it (None),
    `run_model_call` projects it from the usage of the agent's previous calls.
    """
    return _model_context(
        agent=agent,
        messages=copy.deepcopy(messages),
        system_prompt=copy.deepcopy(system_prompt),
        tool_specs=copy.deepcopy(tool_specs),
        tool_choice=copy.deepcopy(tool_choice),
        invocation_state=invocation_state,
        model=model,
        projected_input_tokens=projected_input_tokens,
    )


def invoke_model_terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    """The model call itself: stream ``context.model`` with what the context holds.

    The stream is aggregated into delta events, the finished message and, last, the
    `ModelStopReason`. Nothing happens until the stream is iterated: the model is asked when
    the first event is, as with any async generator. Closing the stream closes the model's
    stream too, so a consumer that stops early (or a handler that abandons this call) releases
    the model's connection at once.
    """
    # The aggregation is the terminal's stream itself rather than a generator around it: one
    # generator hop less on every streamed event of every model call.
    return process_model_stream(_ModelCall(context))


class _ModelCall:
    """The chunks of one model call, requested from the model when iteration begins."""

    __slots__ = ("_context",)

    def __init__(self, context: InvokeModelContext) -> None:
        self._context = context

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        context = self._context
        system_prompt, system_prompt_content = split_system_prompt(context.system_prompt)
        return aiter(
            context.model.stream(
                context.messages,
                context.tool_specs or None,
                system_prompt,
                tool_choice=context.tool_choice,
                system_prompt_content=system_prompt_content,
            )
        )


async def run_model_call(
    registry: MiddlewareRegistry, context: InvokeModelContext
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage and yield its events; the last `ModelStopReason` yielded is the result.

    A context without ``projected_input_tokens`` gets them here when the stage has handlers,
    projected as `ModelStagePoint` does (from the usage of the agent's previous calls, which
    this notes when each call ends).

    Raises:
        MissingResultError: the chain produced no `ModelStopReason`.
    """
    found: ModelStopReason | None = None
    handled = registry.has_handlers(InvokeModelStage)
    if handled and not has_projection(context):
        estimate_on_read(context, _call_usage(registry).project)
    # This generator drives the chain itself (`MiddlewareRegistry.open`): no driver generator
    # between it and the outermost handler.
    opened = registry.open(InvokeModelStage, context, invoke_model_terminal).reporting()
    async with opened as stream:
        if opened.watching:
            # Watching handlers run as their watch (see `OpenedChain.reporting`): an event they
            # may need is reported; the others cost the same set lookup as the result test.
            passing = opened.passing
            async for event in stream:
                if event.__class__ not in passing:
                    opened.saw(event)
                yield event
            found = cast("ModelStopReason | None", opened.result)
        else:
            async for event in stream:
                if isinstance(event, ModelStopReason):
                    found = event
                yield event
    if found is None:
        raise missing_result(InvokeModelStage)
    if handled:
        _call_usage(registry).record(found.message, found.usage)
