"""Model calls: what reaches the model, what reaches the history, what handlers may change."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncGenerator
from typing import Any, cast

from ...content import (
    Message,
    ToolChoiceAny,
    ToolChoiceAnyDict,
    ToolChoiceAuto,
    ToolChoiceAutoDict,
    ToolSpec,
)
from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...events import ModelStopReason, TypedEvent
from ...host._token_projection import project_input_tokens
from ...models import Model
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ...testing import ScriptedModel, text_turn, tool_turn
from .._clause import ClauseFailed, Trial, clause, expect
from .._harness import Capability
from . import _sources as cite
from ._probes import ZERO_METRICS, ZERO_USAGE, conversation, exception_chain, outcome

__all__ = [
    "configured_system_prompt_reaches_the_model",
    "configured_tool_choice_reaches_the_model",
    "in_place_message_edits_reach_the_model",
    "input_messages_reach_the_model",
    "input_system_prompt_reaches_the_model",
    "input_tool_choice_reaches_the_model",
    "input_tool_specs_reach_the_model",
    "missing_model_result_is_an_error",
    "model_context_holds_what_the_model_receives",
    "model_context_is_a_defensive_copy",
    "model_error_reaches_handlers_unchanged",
    "output_rewrite_reaches_the_history",
    "per_call_model_switch_leaves_the_agent_model",
    "per_call_switch_to_a_model_of_this_library",
    "projected_input_tokens_follow_strands",
    "system_prompt_blocks_reach_the_model",
    "wrap_short_circuit_skips_the_model",
]


def _spec_names(specs: list[ToolSpec] | None) -> list[str]:
    return sorted(spec["name"] for spec in specs or [])


@clause(cite.CONTEXT_TRANSFORMATION, cite.BUILT_IN_STAGES, model_stage=True)
async def input_system_prompt_reaches_the_model(trial: Trial) -> None:
    """A system prompt an Input handler sets with replace() is the one the model receives."""

    def inject(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Answer in French.")

    built = trial.build(
        [text_turn("Bonjour.")],
        middleware=[InvokeModelStage.input(inject)],
        system_prompt="Answer in English.",
    )
    await built.agent.run("Hi")
    sent = built.script.requests[0].system_prompt
    expect(sent == "Answer in French.", f"the model was sent system prompt {sent!r}")


@clause(cite.CONTEXT_TRANSFORMATION, cite.BUILT_IN_STAGES, model_stage=True)
async def input_messages_reach_the_model(trial: Trial) -> None:
    """Messages an Input handler replaces are what the model receives, for that call only: the
    agent's history keeps the user's own turn."""

    def annotate(context: InvokeModelContext) -> InvokeModelContext:
        *earlier, last = context.messages
        extra: Message = {"role": last["role"], "content": [*last["content"], {"text": "(m)"}]}
        return context.replace(messages=[*earlier, extra])

    built = trial.build([text_turn("Noted.")], middleware=[InvokeModelStage.input(annotate)])
    await built.agent.run("Hi")
    sent = conversation(built.script.requests[0].messages)
    expect(
        sent == [("user", [{"text": "Hi"}, {"text": "(m)"}])],
        f"the model was sent {sent}",
    )
    history = conversation(built.agent.messages)
    expect(
        history[0] == ("user", [{"text": "Hi"}]),
        f"the history's first turn became {history[0]}",
    )


@clause(cite.CONTEXT_TRANSFORMATION, cite.BUILT_IN_STAGES, model_stage=True)
async def input_tool_specs_reach_the_model(trial: Trial) -> None:
    """Tool specs an Input handler narrows are the tools the model is offered."""

    def only_add(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(tool_specs=[s for s in context.tool_specs if s["name"] == "add"])

    built = trial.build(
        [text_turn("Fine.")],
        tools=[trial.tools.add, trial.tools.delete_file],
        middleware=[InvokeModelStage.input(only_add)],
    )
    await built.agent.run("Hi")
    offered = _spec_names(built.script.requests[0].tool_specs)
    expect(offered == ["add"], f"the model was offered {offered}")


@clause(cite.CONTEXT_TRANSFORMATION, cite.BUILT_IN_STAGES, model_stage=True)
async def input_tool_choice_reaches_the_model(trial: Trial) -> None:
    """A tool choice an Input handler sets is the one the model receives."""

    def must_use_a_tool(context: InvokeModelContext) -> InvokeModelContext:
        choice: ToolChoiceAnyDict = {"any": ToolChoiceAny()}
        return context.replace(tool_choice=choice)

    built = trial.build(
        [text_turn("Fine.")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(must_use_a_tool)],
    )
    await built.agent.run("Hi")
    sent = built.script.requests[0].tool_choice
    expect(sent == {"any": {}}, f"the model was sent tool choice {sent!r}")


@clause(cite.SYSTEM_PROMPT_UNION, model_stage=True)
async def system_prompt_blocks_reach_the_model(trial: Trial) -> None:
    """A system prompt given as a list of content blocks reaches the model as those blocks."""
    blocks: Any = [{"text": "Be brief."}, {"text": "Be kind."}]

    def as_blocks(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt=copy.deepcopy(blocks))

    built = trial.build([text_turn("Fine.")], middleware=[InvokeModelStage.input(as_blocks)])
    await built.agent.run("Hi")
    sent = built.script.requests[0].system_prompt_content
    expect(sent == blocks, f"the model was sent system prompt blocks {sent!r}")


@clause(cite.DEFENSIVE_COPIES, cite.CONVERSE_ONLY, model_stage=True)
async def model_context_holds_what_the_model_receives(trial: Trial) -> None:
    """Unchanged, a model call's context holds exactly the request the model receives: the same
    messages, system prompt and tool specs, and nothing else."""
    seen: list[tuple[Any, Any, Any]] = []

    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(
            copy.deepcopy((context.messages, context.system_prompt, context.tool_specs or None))
        )
        return context

    built = trial.build(
        [text_turn("One."), text_turn("Two.")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(record)],
        system_prompt="Be brief.",
    )
    await built.agent.run("Hi")
    await built.agent.run("Again")
    requests = built.script.requests
    expect(len(seen) == len(requests) == 2, f"{len(seen)} contexts for {len(requests)} requests")
    for (messages, system_prompt, tool_specs), request in zip(seen, requests, strict=True):
        expect(
            messages == request.messages,
            f"the handler saw messages {messages}, the model got {request.messages}",
        )
        expect(
            system_prompt == request.system_prompt,
            f"the handler saw system prompt {system_prompt!r}, the model got "
            f"{request.system_prompt!r}",
        )
        expect(
            tool_specs == request.tool_specs,
            f"the handler saw tool specs {tool_specs}, the model got {request.tool_specs}",
        )


@clause(cite.DEFENSIVE_COPIES, cite.BUILT_IN_STAGES, model_stage=True)
async def model_context_is_a_defensive_copy(trial: Trial) -> None:
    """A handler editing the model call's context in place (messages, tool specs) changes neither
    the agent's history nor its tools."""
    calls: list[int] = []

    def vandal(context: InvokeModelContext) -> InvokeModelContext:
        calls.append(1)
        if len(calls) == 1:
            context.messages[-1]["content"].append({"text": "(edited in place)"})
            context.messages.append({"role": "assistant", "content": [{"text": "(added)"}]})
            for spec in context.tool_specs:
                spec["description"] = "(edited in place)"
                spec["inputSchema"]["json"]["description"] = "(edited)"
            context.tool_specs.clear()
        return context

    built = trial.build(
        [text_turn("One."), text_turn("Two.")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(vandal)],
    )
    await built.agent.run("Hi")
    await built.agent.run("Again")
    history = conversation(built.agent.messages)
    expected = [
        ("user", [{"text": "Hi"}]),
        ("assistant", [{"text": "One."}]),
        ("user", [{"text": "Again"}]),
        ("assistant", [{"text": "Two."}]),
    ]
    expect(history == expected, f"the history became {history}")
    specs = built.script.requests[1].tool_specs
    offered = _spec_names(specs)
    expect(offered == ["add"], f"after the edit the model was offered {offered}")
    edited = [spec for spec in specs or [] if "(edited" in json.dumps(spec)]
    expect(not edited, f"an edit made in place of a tool spec stayed with the tool: {edited}")


@clause(cite.RESULT_ENCODING, cite.HANDLER_SHAPES, model_stage=True)
async def wrap_short_circuit_skips_the_model(trial: Trial) -> None:
    """A Wrap handler that yields its own ModelStopReason without calling next_fn answers the
    call: the model is not asked, and the answer is the run's result and joins the history."""

    async def cached(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ModelStopReason("end_turn", text_turn("From the cache."), ZERO_USAGE, ZERO_METRICS)

    built = trial.build([], middleware=[InvokeModelStage.wrap(cached)])
    report = await built.agent.run("Hi")
    expect(not built.script.requests, "the model was asked")
    expect(report.text == "From the cache.", f"the run ended with {report.text!r}")
    history = conversation(built.agent.messages)
    expect(
        history[-1] == ("assistant", [{"text": "From the cache."}]),
        f"the history ends with {history[-1]}",
    )


@clause(cite.RESULT_ENCODING, cite.HANDLER_SHAPES, model_stage=True)
async def output_rewrite_reaches_the_history(trial: Trial) -> None:
    """A model call's Output handler that replaces the result changes what the run returns and
    what the history keeps."""

    def sign(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
        stop = result.value
        signed: Message = {"role": "assistant", "content": [{"text": "Rewritten."}]}
        return result.replace(
            value=ModelStopReason(stop.stop_reason, signed, stop.usage, stop.metrics)
        )

    built = trial.build([text_turn("Original.")], middleware=[InvokeModelStage.output(sign)])
    report = await built.agent.run("Hi")
    expect(report.text == "Rewritten.", f"the run ended with {report.text!r}")
    history = conversation(built.agent.messages)
    expect(
        history[-1] == ("assistant", [{"text": "Rewritten."}]),
        f"the history ends with {history[-1]}",
    )


@clause(cite.PER_CALL_MODEL, model_stage=True)
async def per_call_model_switch_leaves_the_agent_model(trial: Trial) -> None:
    """An Input handler that points one call at another model (replace(model=...)) sends that
    call there and leaves the agent's model for the next call."""
    other = ScriptedModel([text_turn("From the other model.")])
    # context.model holds the host's own model, whatever its shape.
    other_model = cast(Model, trial.model(other))
    models: list[object] = []

    def switch_once(context: InvokeModelContext) -> InvokeModelContext:
        models.append(context.model)
        return context.replace(model=other_model) if len(models) == 1 else context

    built = trial.build(
        [text_turn("From the agent's model.")], middleware=[InvokeModelStage.input(switch_once)]
    )
    first = await built.agent.run("Hi")
    expect(first.text == "From the other model.", f"the switched call gave {first.text!r}")
    expect(not built.script.requests, "the agent's own model was asked by the switched call")
    second = await built.agent.run("Again")
    expect(second.text == "From the agent's model.", f"the next call gave {second.text!r}")
    expect(
        len(models) == 2 and models[0] is models[1],
        "the next call's context.model is not the agent's model of the first call",
    )


@clause(cite.CLEANUP_RULE, cite.USER_ERRORS, model_stage=True)
async def model_error_reaches_handlers_unchanged(trial: Trial) -> None:
    """An exception the model raises reaches a Wrap handler as the very object, and, unless a
    handler handles it, ends the run with that exception."""
    error = ConnectionError("the model is down")
    caught: list[BaseException] = []

    async def watch(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        except Exception as exc:
            caught.append(exc)
            raise

    built = trial.build([error], middleware=[InvokeModelStage.wrap(watch)])
    ended = await outcome(built.agent.run("Hi"))
    expect(
        len(caught) == 1 and caught[0] is error,
        f"the handler caught {caught!r}, not the model's own exception",
    )
    expect(isinstance(ended, BaseException), f"the run ended normally: {ended!r}")
    assert isinstance(ended, BaseException)
    expect(
        any(link is error for link in exception_chain(ended)),
        f"the run raised {ended!r}, which does not carry the model's exception",
    )


@clause(cite.RESULT_RULE, cite.USER_ERRORS, model_stage=True)
async def missing_model_result_is_an_error(trial: Trial) -> None:
    """A model call whose chain ends without a ModelStopReason ends the run with a RuntimeError
    naming the stage; it is never taken for an empty answer."""

    async def drop(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if not isinstance(event, ModelStopReason):
                yield event

    built = trial.build([text_turn("Lost.")], middleware=[InvokeModelStage.wrap(drop)])
    ended = await outcome(built.agent.run("Hi"))
    expect(isinstance(ended, BaseException), f"the run ended normally: {ended!r}")
    assert isinstance(ended, BaseException)
    named = [
        link
        for link in exception_chain(ended)
        if isinstance(link, RuntimeError) and "invokemodel" in str(link).lower()
    ]
    expect(bool(named), f"the run raised {ended!r}, not a RuntimeError naming invokeModel")


@clause(cite.SYSTEM_PROMPT_UNION, cite.BUILT_IN_STAGES, model_stage=True)
async def configured_system_prompt_reaches_the_model(trial: Trial) -> str | None:
    """The agent's configured system prompt is what handlers see and what the model receives:
    as its text when a string, as its blocks when a list of blocks (or, from a host that cannot
    take blocks, a refusal when the agent is built)."""
    seen: list[Any] = []

    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(copy.deepcopy(context.system_prompt))
        return context

    built = trial.build(
        [text_turn("Fine.")],
        middleware=[InvokeModelStage.input(record)],
        system_prompt="Be brief.",
    )
    await built.agent.run("Hi")
    request = built.script.requests[0]
    expect(
        request.system_prompt == "Be brief.",
        f"the model was sent system prompt {request.system_prompt!r}, not the agent's",
    )
    expect(
        request.system_prompt_content == [{"text": "Be brief."}],
        f"the model was sent system prompt blocks {request.system_prompt_content!r}",
    )
    expect(seen == ["Be brief."], f"the handler saw system prompt {seen!r}")
    blocks: Any = [{"text": "Be brief."}, {"text": "Be kind."}]
    try:
        built = trial.build([text_turn("Fine.")], system_prompt=copy.deepcopy(blocks))
    except (TypeError, ValueError) as refused:
        return f"refuses system prompt blocks when built: {refused}"
    await built.agent.run("Hi")
    given = built.script.requests[0].system_prompt_content
    expect(given == blocks, f"the model was sent system prompt blocks {given!r}, not the agent's")
    return None


async def _tool_choice_is_refused(trial: Trial) -> str:
    try:
        trial.build([text_turn("Fine.")], tools=[trial.tools.add], tool_choice=_AUTO)
    except (TypeError, ValueError):
        return "not declared: a configured tool choice is refused when the agent is built"
    raise ClauseFailed(
        "the host declares no agent tool choice, yet built an agent with one: the choice would "
        "be silently dropped"
    )


@clause(
    cite.CONTEXT_TRANSFORMATION,
    cite.BUILT_IN_STAGES,
    needs=Capability.TOOL_CHOICE,
    otherwise=_tool_choice_is_refused,
    model_stage=True,
)
async def configured_tool_choice_reaches_the_model(trial: Trial) -> None:
    """The agent's configured tool choice is what handlers see and what the model receives on
    every call."""
    seen: list[Any] = []

    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(copy.deepcopy(context.tool_choice))
        return context

    built = trial.build(
        [_ADD_TURN, text_turn("3")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(record)],
        tool_choice=_AUTO,
    )
    await built.agent.run("Add")
    sent = [request.tool_choice for request in built.script.requests]
    expect(sent == [{"auto": {}}] * 2, f"the model was sent tool choices {sent!r}")
    expect(seen == [{"auto": {}}] * 2, f"the handlers saw tool choices {seen!r}")


_ADD_TURN = tool_turn("add", {"a": 1, "b": 2}, "t1")
_AUTO: ToolChoiceAutoDict = {"auto": ToolChoiceAuto()}


@clause(cite.CONTEXT_TRANSFORMATION, cite.DEFENSIVE_COPIES, model_stage=True)
async def in_place_message_edits_reach_the_model(trial: Trial) -> None:
    """Messages an Input handler edits, adds or removes in place (on the context's own list)
    are what the model receives, for that call only: the history keeps every turn."""

    def shout(context: InvokeModelContext) -> InvokeModelContext:
        context.messages[-1]["content"] = [{"text": "HI"}]
        context.messages.append({"role": "assistant", "content": [{"text": "noted"}]})
        context.messages.append({"role": "user", "content": [{"text": "be brief"}]})
        return context

    built = trial.build([text_turn("ok")], middleware=[InvokeModelStage.input(shout)])
    await built.agent.run("hi")
    sent = conversation(built.script.requests[0].messages)
    expected = [
        ("user", [{"text": "HI"}]),
        ("assistant", [{"text": "noted"}]),
        ("user", [{"text": "be brief"}]),
    ]
    expect(sent == expected, f"the model was sent {sent}")

    def drop_first(context: InvokeModelContext) -> InvokeModelContext:
        del context.messages[0]
        return context

    built = trial.build(
        [text_turn("one"), text_turn("two")], middleware=[InvokeModelStage.input(drop_first)]
    )
    await built.agent.run("first")
    await built.agent.run("second")
    sent = conversation(built.script.requests[1].messages)
    expected = [("assistant", [{"text": "one"}]), ("user", [{"text": "second"}])]
    expect(sent == expected, f"the second call sent {sent}")
    kept = len(built.agent.messages)
    expect(kept == 4, f"the history kept {kept} turns, not 4")


@clause(cite.PER_CALL_MODEL, cite.CONVERSE_ONLY, model_stage=True)
async def per_call_switch_to_a_model_of_this_library(trial: Trial) -> None:
    """An Input handler can point a call at a model of this library's own shape (whatever the
    host's model is): that model answers the call."""
    backup = ScriptedModel([text_turn("From the backup.")])

    def switch(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(model=backup)

    built = trial.build([], middleware=[InvokeModelStage.input(switch)])
    report = await built.agent.run("Hi")
    expect(report.text == "From the backup.", f"the switched call gave {report.text!r}")
    expect(len(backup.requests) == 1, f"the backup was asked {len(backup.requests)}x")


@clause(cite.BUILT_IN_STAGES, cite.COMING_FROM_STRANDS, cite.STRANDS_DROP_IN, model_stage=True)
async def projected_input_tokens_follow_strands(trial: Trial) -> None:
    """Every model call's context holds projected_input_tokens as strands-agents computes it: the
    whole request estimated on the agent's first call, then the previous call's reported usage
    plus an estimate of the messages added after the turn it produced."""
    seen: list[InvokeModelContext] = []
    results: list[ModelStopReason] = []

    def look(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context)
        return context

    async def note(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ModelStopReason):
                results.append(event)
            yield event

    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("Three.")],
        tools=[trial.tools.add],
        middleware=[InvokeModelStage.input(look), InvokeModelStage.wrap(note)],
        system_prompt="Be brief.",
        usage={"inputTokens": 40, "outputTokens": 7, "totalTokens": 47},
    )
    await built.agent.run("Add 1 and 2.")
    expect(len(seen) == 2 and len(results) == 2, f"{len(seen)} model calls, not 2")
    first, second = seen
    whole = project_input_tokens(
        first.messages, system_prompt=first.system_prompt, tool_specs=first.tool_specs
    )
    expect(
        first.projected_input_tokens == whole,
        f"the first call projected {first.projected_input_tokens} input tokens, not the whole "
        f"request's estimate {whole}",
    )
    turn = next((m for m in reversed(second.messages) if m["role"] == "assistant"), None)
    expect(turn is not None, "the second call's messages hold no assistant turn")
    assert turn is not None
    reported = results[0].usage
    expected = project_input_tokens(second.messages, last_call=(turn, reported))
    expect(
        second.projected_input_tokens == expected,
        f"the second call projected {second.projected_input_tokens} input tokens, not the first "
        f"call's usage {dict(reported)} plus the messages after its turn ({expected})",
    )
