"""The boundary: handlers see this library's types and Converse data, and the same events on
every host."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from typing import Any, cast

from ...content import ContentBlock, Message, ToolResult, ToolUse
from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...engine._stage import Middleware, MiddlewareStage
from ...events import (
    ModelMessageEvent,
    ModelStopReason,
    TextDeltaEvent,
    ToolResultEvent,
    TypedEvent,
)
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ...testing import text_turn, tool_turn
from .._clause import Trial, clause, expect
from .._harness import Capability
from .._harnesses._reference import ReferenceHarness
from . import _sources as cite
from ._probes import public_event_class

__all__ = [
    "forget_starts_a_fresh_conversation",
    "handlers_see_no_host_only_keys",
    "handlers_see_only_this_librarys_types",
    "handlers_see_the_hosts_agent",
    "wrap_handlers_see_the_reference_event_stream",
]

_PLAIN = (type(None), bool, int, float, str, bytes)


def _keys(shape: Any) -> frozenset[str]:
    return frozenset(shape.__required_keys__ | shape.__optional_keys__)


_MESSAGE_KEYS = _keys(Message)
_BLOCK_KEYS = _keys(ContentBlock)
_TOOL_USE_KEYS = _keys(ToolUse)
_TOOL_RESULT_KEYS = _keys(ToolResult)


def _ours(value: object) -> bool:
    """Whether ``value``'s class is defined in this library (a host's subclass is not)."""
    return type(value).__module__.split(".")[0] == "strands_middleware"


def _foreign(value: object, path: str) -> list[str]:
    """Paths in ``value`` holding an object that is neither plain data nor this library's."""
    if isinstance(value, _PLAIN) and type(value) in _PLAIN:
        return []
    kind = type(value)
    if not _ours(value) and kind not in (dict, list, tuple):
        return [f"{path}: {kind.__module__}.{kind.__qualname__}"]
    if isinstance(value, dict):
        items = cast("dict[object, object]", value).items()
        return [found for key, item in items for found in _foreign(item, f"{path}[{key!r}]")]
    if isinstance(value, (list, tuple)):
        return [
            found
            for index, item in enumerate(cast("list[object]", value))
            for found in _foreign(item, f"{path}[{index}]")
        ]
    return []


class _Observer:
    """Input, Wrap and Output handlers on one stage that note what they are handed."""

    def __init__(self, stage: MiddlewareStage[Any, Any, TypedEvent]) -> None:
        self.contexts: list[Any] = []
        self.wrapped: list[Any] = []
        self.events: list[Any] = []
        self.results: list[Any] = []
        self.stage = stage

    def middleware(self) -> list[Middleware[Any, Any, TypedEvent]]:
        def on_input(context: Any) -> Any:
            self.contexts.append(context)
            return context

        async def on_wrap(
            context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            self.wrapped.append(context)
            async for event in next_fn(context):
                self.events.append(event)
                yield event

        def on_output(result: MiddlewareResult[Any]) -> MiddlewareResult[Any]:
            self.results.append(result)
            return result

        return [self.stage.input(on_input), self.stage.wrap(on_wrap), self.stage.output(on_output)]


def _observed_run_setup(trial: Trial, *more: Message) -> tuple[_Observer, _Observer, Any]:
    model, tool = _Observer(InvokeModelStage), _Observer(ExecuteToolStage)
    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1", text="Adding."), text_turn("3"), *more],
        tools=[trial.tools.add],
        middleware=[*model.middleware(), *tool.middleware()],
        system_prompt="Be brief.",
    )
    return model, tool, built


@clause(cite.BOUNDARY_RULE, cite.HOST_PROMISES, model_stage=True)
async def handlers_see_only_this_librarys_types(trial: Trial) -> None:
    """Model and tool handlers get this library's contexts, events and MiddlewareResult holding
    this library's result events, with only plain Converse data inside: no host-native object."""
    model, tool, built = _observed_run_setup(trial)
    await built.agent.run("Add 1 and 2")
    found: list[str] = []
    for observer, context_type, fields, result_type in (
        (
            model,
            InvokeModelContext,
            ("messages", "system_prompt", "tool_specs", "tool_choice"),
            ModelStopReason,
        ),
        (tool, ExecuteToolContext, ("tool_use",), ToolResultEvent),
    ):
        name = observer.stage.name
        expect(bool(observer.contexts and observer.events), f"{name} handlers never ran")
        for context in observer.contexts + observer.wrapped:
            if not isinstance(context, context_type) or not _ours(context):
                found.append(f"{name} context: {type(context).__module__}.{type(context).__name__}")
            for field in fields:
                found.extend(_foreign(getattr(context, field), f"{name} context.{field}"))
        for index, event in enumerate(observer.events):
            if not isinstance(event, TypedEvent) or not _ours(event):
                kind = type(cast(object, event))
                found.append(f"{name} event {index}: {kind.__module__}.{kind.__qualname__}")
            if isinstance(event, Mapping):
                items = dict(cast("Mapping[str, object]", event))
                found.extend(_foreign(items, f"{name} event {index}"))
        for result in observer.results:
            value: object = getattr(result, "value", None)
            if not isinstance(result, MiddlewareResult) or not isinstance(value, result_type):
                found.append(f"{name} Output got {result!r}")
    expect(not found, "handlers were handed host-native objects: " + "; ".join(found[:8]))


def _host_keys(message: object, where: str) -> list[str]:
    if not isinstance(message, Mapping):
        return [f"{where} is a {type(message).__name__}, not a message"]
    as_map = cast("Mapping[str, Any]", message)
    found = [f"{where}.{key}" for key in as_map if key not in _MESSAGE_KEYS]
    for index, block in enumerate(as_map.get("content") or []):
        block_map = cast("Mapping[str, Any]", block)
        found.extend(
            f"{where}.content[{index}].{key}" for key in block_map if key not in _BLOCK_KEYS
        )
        if "toolUse" in block_map:
            found.extend(_extra(block_map["toolUse"], _TOOL_USE_KEYS, f"{where}.content[{index}]"))
        if "toolResult" in block_map:
            found.extend(
                _extra(block_map["toolResult"], _TOOL_RESULT_KEYS, f"{where}.content[{index}]")
            )
    return found


def _extra(value: Any, allowed: frozenset[str], where: str) -> list[str]:
    return [f"{where}.{key}" for key in cast("Mapping[str, Any]", value) if key not in allowed]


@clause(cite.CONVERSE_ONLY, cite.BOUNDARY_RULE, model_stage=True)
async def handlers_see_no_host_only_keys(trial: Trial) -> None:
    """The messages, tool uses and results handlers see carry Converse keys only, never the
    host's own bookkeeping (ids, metadata) on a message or block."""
    model, tool, built = _observed_run_setup(trial, text_turn("You are welcome."))
    await built.agent.run("Add 1 and 2")
    await built.agent.run("Thanks")
    found: list[str] = []
    for number, context in enumerate(model.contexts):
        for index, message in enumerate(context.messages):
            found.extend(_host_keys(message, f"model call {number} messages[{index}]"))
    for number, event in enumerate(model.events):
        if isinstance(event, (ModelStopReason, ModelMessageEvent)):
            found.extend(_host_keys(event.message, f"model event {number} message"))
    for number, context in enumerate(tool.contexts):
        found.extend(_extra(context.tool_use, _TOOL_USE_KEYS, f"tool call {number} tool_use"))
    for number, event in enumerate(tool.events):
        if isinstance(event, ToolResultEvent):
            found.extend(_extra(event.tool_result, _TOOL_RESULT_KEYS, f"tool event {number}"))
    unique = sorted(set(found))
    expect(not unique, "handlers saw host-only keys: " + "; ".join(unique[:8]))


async def _event_classes(trial: Trial) -> tuple[list[str], list[str], str]:
    model, tool, built = _observed_run_setup(trial)
    await built.agent.run("Add 1 and 2")
    # The Input and Wrap handlers both record contexts; events come from the Wrap handler only.
    return (
        [public_event_class(e) for e in model.events],
        [public_event_class(e) for e in tool.events],
        "".join(e.text for e in model.events if isinstance(e, TextDeltaEvent)),
    )


@clause(cite.SAME_EVENTS, cite.RESULT_ENCODING, cite.BUILT_IN_STAGES, model_stage=True)
async def wrap_handlers_see_the_reference_event_stream(trial: Trial) -> str | None:
    """Wrap handlers see a call's stream as this library's typed events (text and tool-input
    deltas, the message, then the result): the same classes in the same order as on the
    reference agent for the same script."""
    model_events, tool_events, text = await _event_classes(trial)
    if not trial.declares(Capability.EVENT_STREAMING):
        foreign = [name for name in model_events + tool_events if "." in name]
        expect(not foreign, f"Wrap handlers saw events of no public class here: {foreign}")
        expect(
            model_events[-1:] == ["ModelStopReason"] and tool_events[-1:] == ["ToolResultEvent"],
            f"the calls did not end with their results: {model_events}, {tool_events}",
        )
        return "not declared: only this library's events, ending with the result"
    expected_model, expected_tool, _ = await _event_classes(Trial(ReferenceHarness()))
    expect(text == "Adding.3", f"the text deltas a Wrap handler saw make {text!r}, not 'Adding.3'")
    for kind in ("TextDeltaEvent", "ToolUseDeltaEvent", "ModelMessageEvent"):
        expect(kind in model_events, f"a model call's Wrap handler never saw a {kind}")
    expect(
        model_events == expected_model,
        f"a model call's Wrap handler saw {model_events}; on the reference agent {expected_model}",
    )
    expect(
        tool_events == expected_tool,
        f"a tool call's Wrap handler saw {tool_events}; on the reference agent {expected_tool}",
    )
    return None


@clause(cite.BUILT_IN_STAGES, cite.HOST_PROMISES)
async def handlers_see_the_hosts_agent(trial: Trial) -> None:
    """Every handler of an agent's runs gets the same ``context.agent``: the object the host
    says it hands them (`HostAgent.handlers_agent`), which per-agent state is kept by."""
    seen: list[object] = []

    def on_model(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.agent)
        return context

    def on_tool(context: ExecuteToolContext) -> ExecuteToolContext:
        seen.append(context.agent)
        return context

    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3"), text_turn("Again.")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(on_model), ExecuteToolStage.input(on_tool)],
    )
    await built.agent.run("Add")
    await built.agent.run("Again")
    expected = built.agent.handlers_agent
    expect(len(seen) == 4, f"the handlers ran {len(seen)}x, expected 4")
    expect(
        all(agent is expected for agent in seen),
        f"the handlers saw {seen!r}; the host says it hands them {expected!r}",
    )


@clause(cite.HOST_PROMISES)
async def forget_starts_a_fresh_conversation(trial: Trial) -> None:
    """After `HostAgent.forget()`, the agent's next run starts from an empty history: the model
    is sent the new prompt alone, and the history holds only the new turns."""
    built = trial.build([text_turn("One."), text_turn("Two.")])
    await built.agent.run("First")
    built.agent.forget()
    await built.agent.run("Second")
    sent = [(m["role"], list(m["content"])) for m in built.script.requests[1].messages]
    expect(sent == [("user", [{"text": "Second"}])], f"after forget() the model was sent {sent}")
    kept = [(m["role"], list(m["content"])) for m in built.agent.messages]
    expected = [("user", [{"text": "Second"}]), ("assistant", [{"text": "Two."}])]
    expect(kept == expected, f"after forget() the history is {kept}")
