"""`InvokeModelStage`: one call of the model, from the request to its `ModelStopReason`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from typing_extensions import TypedDict, Unpack

from ..content import Messages, SystemContentBlock, SystemPrompt, ToolChoice, ToolSpec
from ..engine._result import MiddlewareResult
from ..engine._stage import MiddlewareStage
from ..events import ModelStopReason, TypedEvent
from ..models import Model

__all__ = [
    "InvokeModelChanges",
    "InvokeModelContext",
    "InvokeModelResult",
    "InvokeModelStage",
    "OnReadField",
    "field_read",
    "field_source",
    "has_projection",
    "made_on_read",
    "project_on_read",
    "split_system_prompt",
]


class InvokeModelChanges(TypedDict, total=False):
    """The fields ``InvokeModelContext.replace`` accepts."""

    messages: Messages
    system_prompt: SystemPrompt
    tool_specs: list[ToolSpec]
    tool_choice: ToolChoice | None
    invocation_state: dict[str, Any]
    model: Model
    projected_input_tokens: int | None


class _Projection:
    """A projection of a call's input tokens made on its first read (`project_on_read`), and
    kept."""

    __slots__ = ("_compute", "_figure")

    def __init__(self, compute: Callable[[], int]) -> None:
        self._compute: Callable[[], int] | None = compute
        self._figure: int | None = None

    def figure(self) -> int | None:
        compute = self._compute
        if compute is not None:
            self._figure = compute()
            self._compute = None
        return self._figure


class _ProjectedInputTokens:
    """The descriptor of ``InvokeModelContext.projected_input_tokens``.

    The field holds a figure or None, as any field does; a host point may leave a `_Projection`
    there instead (`project_on_read`), which the first read makes into the figure. An estimate
    costs a walk of the whole request, and most calls have no handler that reads it. The value
    lives in the instance attribute ``stored_as`` names, where a reader that must not make the
    estimate (the record of what handlers changed, `host._changes`) finds the projection itself,
    the same object before and after it is made. As a dataclass field's default, the descriptor
    gives None (the class-level read).
    """

    stored_as = "_projected_input_tokens"

    def __get__(self, context: object, owner: object = None) -> int | None:
        if context is None:
            return None  # the field's default
        value: Any = context.__dict__["_projected_input_tokens"]
        if value.__class__ is _Projection:
            return value.figure()
        return cast("int | None", value)

    def __set__(self, context: object, value: int | None) -> None:
        context.__dict__["_projected_input_tokens"] = value


OnReadField = Literal["messages", "tool_specs"]
"""The request fields a host point may leave to be made on their first read (`made_on_read`)."""


class _OnRead:
    """A request field's value made on its first read (`made_on_read`), and kept.

    A context and the copies ``replace`` makes of it share one, as they would share the list,
    so whichever is read first makes the value they all hold.
    """

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], Any] | None, made: Any = None) -> None:
        self._make = make
        self._made = made

    @property
    def made(self) -> bool:
        return self._make is None

    def value(self) -> Any:
        make = self._make
        if make is not None:
            self._made = make()
            self._make = None
        return self._made

    def __reduce__(self) -> tuple[Any, ...]:
        # A copied or pickled context holds the value itself (``deepcopy`` copies it).
        return (_OnRead, (None, self.value()))


_PENDING: dict[str, str] = {"messages": "_messages_on_read", "tool_specs": "_tool_specs_on_read"}
"""Where a context keeps a field's `_OnRead` while the value is left to be made on read."""


class _MadeOnRead:
    """A request field of ``InvokeModelContext`` where a host point may leave the value to be
    made on read.

    A non-data descriptor: a context given the value holds it in its ``__dict__``, which a read
    finds first, at no cost; only a context made by `made_on_read` (which holds an `_OnRead`
    instead) reaches ``__get__``, and the first read keeps the value there. Read on the class,
    it raises ``AttributeError``: the field has no default.
    """

    __slots__ = ("_name", "_pending")

    def __init__(self, name: OnReadField) -> None:
        self._name = name
        self._pending = _PENDING[name]

    def __get__(self, context: object, owner: object = None) -> Any:
        pending: _OnRead | None = None if context is None else context.__dict__.get(self._pending)
        if pending is None:
            raise AttributeError(self._name)
        try:
            value = pending.value()
        except AttributeError as error:  # not "no such field": `getattr` defaults would hide it
            raise RuntimeError(f"making the context's {self._name} failed: {error}") from error
        context.__dict__[self._name] = value
        return value


@dataclass
class InvokeModelContext:
    """What InvokeModelStage handlers receive: the request about to be sent to the model.

    ``messages``, ``system_prompt``, ``tool_specs`` and ``tool_choice`` are deep copies made for
    this call, so a handler can edit them freely without touching the agent's history, and the
    terminal sends what the context holds, so an Input handler's ``replace()`` reaches the model.
    ``invocation_state`` is shared by reference: it is the live dict hooks and tools write to.
    ``model`` is the model this call streams (the agent's own to begin with); replacing it switches
    this one call to another model without changing the agent. The model's private state is not on
    the context at all: the terminal reads it from the agent.

    Attributes:
        agent: The host agent making the call (the reference ``Agent`` or a ``strands.Agent``).
        messages: The conversation to send.
        system_prompt: A string, a list of system content blocks, or None.
        tool_specs: The tools the model may call.
        tool_choice: How the model should pick a tool, or None for the model's default.
        invocation_state: Per-invocation state shared with hooks and tools.
        model: The model the terminal streams.
        projected_input_tokens: The host's estimate of this call's input tokens (strands'
            estimate: the last call's reported usage plus the messages added since), or None
            where the host gives none. Budget and context-window middleware read it. Replacing
            ``messages`` does not update it: a handler that shrinks the request and wants later
            handlers to see the new figure sets it too. Where this library makes the estimate
            (on a bridged host, which gives none of its own), it is made when the field is first
            read, from the request the call was given: a handler that edits those messages in
            place before any handler reads the figure finds the edited request's estimate.

    Where a bridge translates the host's history or tools for handlers, it may do so when a
    handler first reads ``messages`` or ``tool_specs`` (or the projected figure): a call whose
    handlers never read them is sent the host's own, untranslated. The copies ``replace`` makes
    share that first read.
    """

    agent: Any
    messages: Messages
    system_prompt: SystemPrompt
    tool_specs: list[ToolSpec]
    tool_choice: ToolChoice | None
    invocation_state: dict[str, Any]
    model: Model
    # A field like the others to type checkers; at run time its descriptor holds the value.
    projected_input_tokens: int | None = cast("int | None", _ProjectedInputTokens())

    def replace(self, **changes: Unpack[InvokeModelChanges]) -> InvokeModelContext:
        """Return a copy with only the given fields changed (``dataclasses.replace`` works too,
        but reads every field, so it makes the ones a bridge left to be made on read).

        Example:
            ```python
            @InvokeModelStage.input
            def concise(context: InvokeModelContext) -> InvokeModelContext:
                return context.replace(system_prompt="Answer in one sentence.")
            ```
        """
        fields: dict[str, Any] = cast("dict[str, Any]", changes)
        state = self.__dict__
        if "projected_input_tokens" not in changes:
            kept: Any = state["_projected_input_tokens"]
            if kept.__class__ is _Projection:  # the copy shares it, made or not, not making it
                fields = {**fields, "projected_input_tokens": kept}
        if "messages" in state and "tool_specs" in state:  # nothing left to be made on read
            return dataclasses.replace(self, **fields)
        shared = [name for name in _ON_READ if name not in state and name not in changes]
        # Fields made on read: the copy shares the making, and does not make them.
        # Lists stand in while the copy is made (a subclass's ``__post_init__`` sees lists).
        placeholders: dict[str, Any] = {name: [] for name in shared}
        copy = dataclasses.replace(self, **fields, **placeholders)
        copied = copy.__dict__
        for name in shared:
            del copied[name]
            key = _PENDING[name]
            copied[key] = state[key]
        return copy


_ON_READ: tuple[OnReadField, ...] = ("messages", "tool_specs")

# Set on the class once the dataclass is made: as class attributes in the body they would be
# the fields' defaults, and these fields have none.
setattr(InvokeModelContext, "messages", _MadeOnRead("messages"))  # noqa: B010
setattr(InvokeModelContext, "tool_specs", _MadeOnRead("tool_specs"))  # noqa: B010


class InvokeModelResult(MiddlewareResult[ModelStopReason]):
    """What ``InvokeModelStage.Output`` handlers receive: the call's `ModelStopReason`.

    Read the event as ``result.result`` or ``result.value``; build a new one with
    ``result.replace(result=...)`` (or ``value=``) or ``InvokeModelResult(result=stop)``.

    Example:
        ```python
        @InvokeModelStage.output
        def shout(result: InvokeModelResult) -> InvokeModelResult:
            stop = result.result
            retagged = ModelStopReason("custom", stop.message, stop.usage, stop.metrics)
            return result.replace(result=retagged)
        ```
    """


InvokeModelStage = MiddlewareStage[
    InvokeModelContext, ModelStopReason, TypedEvent, InvokeModelResult
]("invokeModel", result_type=InvokeModelResult, result_event=ModelStopReason)
"""A model call. Its result is the `ModelStopReason` that ends the model's stream.

Handlers here can retry, cache, rate-limit, switch models per call, or rewrite the request and
the response. This stage is not interruptible: a model call has no ``interrupt()``.
"""


def project_on_read(context: InvokeModelContext, compute: Callable[[], int]) -> None:
    """Make ``context.projected_input_tokens`` ``compute()``, called on the field's first read
    (and not at all when nothing reads it); the figure is kept from then on."""
    context.__dict__["_projected_input_tokens"] = _Projection(compute)


def has_projection(context: InvokeModelContext) -> bool:
    """Whether ``context.projected_input_tokens`` is a figure or one made on read (not None),
    told without making it."""
    return context.__dict__["_projected_input_tokens"] is not None


def made_on_read(context: InvokeModelContext, name: OnReadField, make: Callable[[], Any]) -> None:
    """Make the field ``name`` of ``context`` ``make()``, called on the field's first read (and
    not at all when nothing reads it); the value is kept from then on."""
    state = context.__dict__
    state.pop(name, None)
    state[_PENDING[name]] = _OnRead(make)


def field_read(context: InvokeModelContext, name: OnReadField) -> bool:
    """Whether the field ``name`` of ``context`` holds a value: given, or made on read and read
    since."""
    state = context.__dict__
    if name in state:
        return True
    pending: _OnRead = state[_PENDING[name]]
    return pending.made


def field_source(context: InvokeModelContext, name: OnReadField) -> Callable[[], Any]:
    """What gives the field ``name`` of ``context`` as the context holds it now, without making
    a value left to be made on read."""
    state = context.__dict__
    if name in state:
        value = state[name]
        return lambda: value
    pending: _OnRead = state[_PENDING[name]]
    return pending.value


def split_system_prompt(
    system_prompt: SystemPrompt,
) -> tuple[str | None, list[SystemContentBlock] | None]:
    """Turn the context's one-field system prompt into the two arguments ``Model.stream`` takes.

    A string becomes itself plus one text block; a list of blocks becomes the text of its text
    blocks joined by blank lines (None if it has none) plus the list itself; None stays None.
    """
    if system_prompt is None:
        return None, None
    if isinstance(system_prompt, str):
        return system_prompt, [{"text": system_prompt}]
    texts = [block["text"] for block in system_prompt if "text" in block]
    return ("\n\n".join(texts) if texts else None), list(system_prompt)
