"""``InvokeModelStage`` on the OpenAI Agents SDK: a ``Model`` around the model the SDK resolves.

The SDK asks one ``Model`` per turn: an agent's ``Model`` object, or the one its
``ModelProvider`` gives for a name (`MiddlewareModelProvider`). `MiddlewareModel` runs this
library's chain in ``get_response`` and ``stream_response`` with the wrapped model's own call as
the terminal, so a handler may call ``next_fn`` as often as it likes (a retry asks again).

Handlers see Converse (`_converse`). What they pass on goes back as the SDK's own: the very
``ModelResponse`` (or ``response.completed`` event) the model produced when the chain's result
is the one the terminal made, a copy carrying the handler's message and usage otherwise. In a
streamed call the model's own stream events reach the SDK as they arrive; the SDK takes a turn's
output and usage from the closing ``response.completed`` event only, which is the chain's result.
"""

from __future__ import annotations

import dataclasses
import marshal
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, cast

from agents import FunctionTool, Model, ModelProvider, ModelResponse, ModelSettings
from agents.items import TResponseInputItem, TResponseStreamEvent
from openai.types.responses import ResponseCompletedEvent, ResponseOutputItemDoneEvent

from ...content import Messages, ToolSpec
from ...engine._registry import MiddlewareRegistry
from ...events import ModelStopReason, ModelStreamEvent, TextDeltaEvent, TypedEvent
from ...host._model_call import ModelStagePoint, invoke_model_terminal
from ...host._tool_call import copy_containers
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._converse import (
    converse_messages,
    host_input,
    host_tool_choice,
    instructions_of,
    tool_choice_of,
    tool_spec_of,
)
from ._relay import ModelRelay
from ._tools import ToolCalls

__all__ = ["MiddlewareModel", "MiddlewareModelProvider"]


def _function_tools(tools: list[Any]) -> list[FunctionTool]:
    return [tool for tool in tools if isinstance(tool, FunctionTool)]


_SPEC_DUMPS: OrderedDict[int, tuple[ToolSpec, bytes]] = OrderedDict()
"""The last tool specs copied for handlers, by the identity of the SDK's schema each holds: a
copy of the spec as it was dumped, and its ``marshal`` dump (a copy loaded from it costs a third
of one built in Python). The identity only finds the entry: its dump serves a spec equal to its
copy (a schema changed in place since, or another schema at a reused address, is dumped anew)."""

_SPECS_KEPT = 256


def _spec_copy(spec: ToolSpec) -> ToolSpec:
    """A copy of ``spec`` (a function tool's, holding the SDK's own schema) for handlers."""
    schema: Any = spec["inputSchema"]["json"]
    kept = _SPEC_DUMPS.get(id(schema))
    if kept is not None and kept[0] == spec:  # the same tool, its schema as it was dumped
        return cast(ToolSpec, marshal.loads(kept[1]))
    try:
        dump = marshal.dumps(cast(Any, spec))
    except ValueError:  # a value marshal cannot write: copied in Python, not kept
        return copy_containers(spec)
    _SPEC_DUMPS[id(schema)] = (cast(ToolSpec, marshal.loads(dump)), dump)
    if len(_SPEC_DUMPS) > _SPECS_KEPT:
        _SPEC_DUMPS.popitem(last=False)
    return cast(ToolSpec, marshal.loads(dump))


def _translator(
    items: str | list[TResponseInputItem], shown: list[Messages]
) -> Callable[[], Messages]:
    """What makes the messages handlers get, on the first read, and puts the copy they are
    compared with in ``shown``.

    It holds the items and ``shown`` only: a method of the call would make the call, its
    context and the maker a reference cycle, left to the cyclic collector to free.
    """

    def translated() -> Messages:
        # A copy of what the handlers were shown, to tell any change they make in place (a
        # block edited, a message added). A second translation is the cheapest such copy (its
        # text, ``repr``, costs more).
        shown.append(converse_messages(items))
        return converse_messages(items)

    return translated


def _own_specs_of(tools: list[Any]) -> list[ToolSpec]:
    return [tool_spec_of(tool) for tool in _function_tools(tools)]


def _spec_maker(tools: list[Any], own: list[ToolSpec]) -> Callable[[], list[ToolSpec]]:
    """What makes the tool specs handlers get, on the first read: copies, schemas included (one
    edited in place stays with this call), of the specs it puts in ``own``, which hold the
    SDK's own schemas. It holds no reference to the call (see `_translator`)."""

    def made() -> list[ToolSpec]:
        if not own:  # the terminal may have made them first, for a list handlers replaced unread
            own.extend(_own_specs_of(tools))
        return [_spec_copy(spec) for spec in own]

    return made


class _Request:
    """The arguments of one SDK model call, as the terminal passes them on."""

    __slots__ = ("args", "input", "instructions", "settings", "tools")

    def __init__(
        self,
        instructions: str | None,
        items: str | list[TResponseInputItem],
        settings: ModelSettings,
        tools: list[Any],
        args: tuple[Any, ...],
    ) -> None:
        self.instructions = instructions
        self.input = items
        self.settings = settings
        self.tools = tools
        self.args = args  # output_schema, handoffs, tracing


class _ModelCall:
    """One SDK model call through the chain: its stage point, its request and its relay."""

    __slots__ = ("_request", "_shown_messages", "_specs", "point", "relay", "wrapped")

    def __init__(
        self,
        model: MiddlewareModel,
        request: _Request,
        kwargs: dict[str, Any],
        *,
        streamed: bool = False,
    ) -> None:
        self.wrapped = model.wrapped
        self._request = request
        # Made when a handler first reads the messages (`_translator`): until then, none exists.
        self._shown_messages: list[Messages] = []
        # The specs compared with, made with the handlers' copies (`_spec_maker`): they hold the
        # SDK's own schemas, so they are never handed out.
        self._specs: list[ToolSpec] = []
        self.relay = ModelRelay(kwargs, streamed=streamed)
        self.point = ModelStagePoint(
            model.registry,
            agent=model.agent,
            messages=_translator(request.input, self._shown_messages),
            system_prompt=request.instructions,
            tool_specs=_spec_maker(request.tools, self._specs),
            tool_choice=tool_choice_of(request.settings.tool_choice),
            invocation_state={},
            # The SDK's own model: a handler may hand another one (or one of this library's).
            model=cast(Any, self.wrapped),
            tracks_changes=False,  # `_arguments` compares the request with its own copy
        )

    def _arguments(self, ours: InvokeModelContext) -> tuple[Any, ...]:
        request = self._request
        items: str | list[TResponseInputItem] = request.input
        point = self.point
        # A request field no handler read goes to the SDK as its own, untranslated both ways.
        if point.seen(ours, "messages"):
            shown = self._shown_messages
            if not shown:  # replaced before any read: compared with a translation made now
                shown.append(converse_messages(items))
            if ours.messages != shown[0]:
                items = host_input(ours.messages)
        settings = request.settings
        choice = host_tool_choice(ours.tool_choice)
        if choice != settings.tool_choice and ours.tool_choice != tool_choice_of(
            settings.tool_choice
        ):
            settings = settings.resolve(ModelSettings(tool_choice=choice))
        tools = request.tools
        if point.seen(ours, "tool_specs") and ours.tool_specs != self._own_specs():
            specs = {spec["name"]: spec for spec in ours.tool_specs}
            kept: list[Any] = []
            for tool in tools:
                if not isinstance(tool, FunctionTool):
                    kept.append(tool)
                elif tool.name in specs:
                    spec = specs[tool.name]
                    schema: Any = spec["inputSchema"]["json"]
                    kept.append(
                        dataclasses.replace(
                            tool, description=spec["description"], params_json_schema=schema
                        )
                    )
            tools = kept
        return (instructions_of(ours.system_prompt), items, settings, tools, *request.args)

    def _own_specs(self) -> list[ToolSpec]:
        """The specs of the SDK's own tools, as the handlers' copies were made of them."""
        specs = self._specs
        if not specs:  # none made (the handlers' list was replaced unread), or no tools
            specs.extend(_own_specs_of(self._request.tools))
        return specs

    def terminal(self, ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        """The chain's terminal when the SDK asks for a whole response."""
        chosen: Any = ours.model
        if chosen is not self.wrapped and not isinstance(chosen, Model):
            return invoke_model_terminal(ours)  # a model of this library
        return self.relay.events(chosen, self._arguments(ours))

    def streamed_terminal(self, ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        """The chain's terminal when the SDK streams."""
        chosen: Any = ours.model
        if chosen is not self.wrapped and not isinstance(chosen, Model):
            return invoke_model_terminal(ours)
        return self.relay.streamed_events(chosen, self._arguments(ours))


class MiddlewareModel(Model):
    """The ``Model`` the SDK asks, running this library's InvokeModelStage around the real one.

    Args:
        wrapped: The SDK model every call goes to (the chain's terminal).
        registry: The middleware to run.
        agent: What handlers see as ``context.agent``.
        calls: The middleware's tool calls: each call's input is checked against them before
            anything else (a new prompt sent with a paused run's history is refused), and the
            function calls of each response are noted there (for a call to a tool the agent
            does not have, whose arguments the SDK does not hand on).
    """

    def __init__(
        self,
        wrapped: Model,
        registry: MiddlewareRegistry,
        agent: Any,
        calls: ToolCalls | None = None,
    ) -> None:
        self.wrapped = wrapped
        self.registry = registry
        self.agent = agent
        self.calls = calls

    async def get_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        """One model call through the chain."""
        calls = self.calls
        if calls is not None:
            calls.check_request(input)
        if not self.registry.has_handlers(InvokeModelStage):
            own = await self.wrapped.get_response(
                system_instructions,
                input,
                model_settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                **kwargs,
            )
            if calls is not None:
                calls.note(own.output)
            return own
        request = _Request(
            system_instructions,
            input,
            model_settings,
            tools,
            (output_schema, handoffs, tracing),
        )
        call = _ModelCall(self, request, kwargs)
        response = call.relay.response_of(await call.point.result(call.terminal))
        if calls is not None:
            # The function calls the SDK is given: the model's own, or the result's as sent.
            calls.note(response.output)
        return response

    def stream_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """One streamed model call through the chain: the model's events, then the result."""
        # The stream is the one generator that runs the call, not a generator around it.
        request = _Request(
            system_instructions,
            input,
            model_settings,
            tools,
            (output_schema, handoffs, tracing),
        )
        if not self.registry.has_handlers(InvokeModelStage):
            return self._own_stream(request, kwargs)
        return self._chained_stream(request, kwargs)

    async def _own_stream(
        self, request: _Request, kwargs: dict[str, Any]
    ) -> AsyncGenerator[TResponseStreamEvent, None]:
        """A streamed call no handler runs on: the wrapped model's events, as they come."""
        calls = self.calls
        if calls is not None:
            calls.check_request(request.input)
        async for own in self.wrapped.stream_response(
            request.instructions,
            request.input,
            request.settings,
            request.tools,
            *request.args,
            **kwargs,
        ):
            if calls is not None:
                seen: Any = own
                if seen.__class__ is ResponseOutputItemDoneEvent:
                    calls.note((seen.item,))
                elif seen.__class__ is ResponseCompletedEvent:
                    calls.note(seen.response.output)
            yield own

    async def _chained_stream(
        self, request: _Request, kwargs: dict[str, Any]
    ) -> AsyncGenerator[TResponseStreamEvent, None]:
        """A streamed call through the chain: the model's events as the chain lets their
        chunks through, then what closes it for the chain's result."""
        calls = self.calls
        if calls is not None:
            calls.check_request(request.input)
        call = _ModelCall(self, request, kwargs, streamed=True)
        relay = call.relay
        result: ModelStopReason | None = None
        opened = call.point.open(call.streamed_terminal).reporting()
        async with opened as stream:
            if opened.watching:
                # Watching handlers run as their watch (`OpenedChain.reporting`): each event of
                # a class not in `passing` is reported, and the result read from the chain.
                passing = opened.passing
                async for event in stream:
                    kind = event.__class__
                    if kind not in passing:
                        opened.saw(event)
                    if kind is ModelStreamEvent:
                        for own in relay.passed(event["event"]):
                            yield own
                result = cast("ModelStopReason | None", opened.result)
            else:
                pending = relay.pending
                popleft = pending.popleft
                chunk_class, text_class = ModelStreamEvent, TextDeltaEvent
                noted: Any
                async for event in stream:
                    if event.__class__ is chunk_class:
                        # The model's events go on with the chunk made from them, once the
                        # chain passes that very chunk on: in turn (the head of what is
                        # pending) when handlers pass the stream through, out of turn when one
                        # held a chunk back.
                        try:
                            noted_chunk, noted = popleft()
                        except IndexError:
                            continue  # nothing pending: a chunk no model's event was noted with
                        if noted_chunk is event["event"]:
                            if noted.__class__ is list:
                                for own in noted:
                                    yield own
                            else:
                                yield noted
                        else:
                            pending.appendleft((noted_chunk, noted))
                            for own in relay.passed_late(event["event"]):
                                yield own
                    elif event.__class__ is not text_class and isinstance(event, ModelStopReason):
                        result = event
        if result is None:
            raise call.point.missing()
        call.point.finished(result)
        if calls is not None:
            calls.note_message(result.message["content"])
        for own in relay.closing(result):
            yield own

    def get_retry_advice(self, request: Any) -> Any:
        """The wrapped model's retry advice."""
        return self.wrapped.get_retry_advice(request)

    async def close(self) -> None:
        """Close the wrapped model."""
        await self.wrapped.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        cleanup = getattr(self.wrapped, "_cleanup_on_run_end", None)
        if cleanup is not None:
            await cleanup(owner)

    @property
    def _supports_default_prompt_cache_key(self) -> bool:
        return bool(getattr(self.wrapped, "_supports_default_prompt_cache_key", False))


class MiddlewareModelProvider(ModelProvider):
    """A ``ModelProvider`` whose models run this library's InvokeModelStage.

    Args:
        wrapped: The provider that resolves names (the SDK's ``MultiProvider`` by default).
        registry: The middleware to run.
        agent: What handlers see as ``context.agent``.
        calls: The middleware's tool calls, for each of its models (`MiddlewareModel`).
    """

    def __init__(
        self,
        wrapped: ModelProvider,
        registry: MiddlewareRegistry,
        agent: Any,
        calls: ToolCalls | None = None,
    ) -> None:
        self.wrapped = wrapped
        self.registry = registry
        self.agent = agent
        self.calls = calls

    def get_model(self, model_name: str | None) -> Model:
        """The wrapped provider's model for ``model_name``, wrapped."""
        model = self.wrapped.get_model(model_name)
        if isinstance(model, MiddlewareModel):
            return model
        return MiddlewareModel(model, self.registry, self.agent, self.calls)

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        close = getattr(self.wrapped, "aclose", None)
        if close is not None:
            await close()
