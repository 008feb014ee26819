"""The provisional agent-stream stage: results, transforms, gates and the refusals around them.

A host that does not declare the stage must refuse its handlers at registration instead.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable

from ...content import Message, Usage
from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...events import EventLoopStopEvent, TypedEvent
from ...exceptions import ReplacedMessagesError
from ...stages._agent_stream import AgentStreamContext, AgentStreamStage
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ...testing import ScriptedModel, text_turn, tool_turn
from .._clause import Check, Clause, ClauseFailed, Trial, clause, expect
from .._harness import AgentSetup, Capability
from .._harnesses._reference import ReferenceHarness
from . import _sources as cite
from ._probes import (
    ZERO_METRICS,
    ZERO_USAGE,
    exception_chain,
    outcome,
    public_event_class,
    responses,
)

__all__ = [
    "agent_stream_gate_asks_once_per_cycle",
    "agent_stream_interrupt_after_the_pass_is_refused",
    "agent_stream_invocation_state_reaches_the_stages",
    "agent_stream_output_rewrite_keeps_the_usage",
    "agent_stream_output_rewrite_reaches_the_result",
    "agent_stream_replaced_messages_are_the_input",
    "agent_stream_short_circuit_skips_the_pass",
    "agent_stream_trailing_events_keep_the_result",
    "agent_stream_wrap_handlers_see_the_reference_events",
    "refuses_agent_stream_handlers",
]


async def refuses_agent_stream_handlers(trial: Trial) -> str:
    """What a host without the agent-stream stage must do: refuse its handlers at registration,
    with an error naming the stage."""

    async def passthrough(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    try:
        trial.build([text_turn("Hello.")], middleware=[AgentStreamStage.wrap(passthrough)])
    except Exception as error:
        named = "agentstream" in str(error).replace(" ", "").lower()
        expect(named, f"registration failed with {error!r}, which does not name the stage")
        return "not declared: its handlers are refused at registration"
    raise ClauseFailed(
        "the host does not declare the agent-stream stage, yet registering an AgentStreamStage "
        "handler raised nothing: the handler would be silently ignored"
    )


def _agent_stream(*cites: str) -> Callable[[Check], Clause]:
    return clause(*cites, needs=Capability.AGENT_STREAM, otherwise=refuses_agent_stream_handlers)


@_agent_stream(cite.PER_STAGE_RESULTS, cite.HANDLER_SHAPES)
async def agent_stream_output_rewrite_reaches_the_result(trial: Trial) -> None:
    """An agent-stream Output handler gets the pass's EventLoopStopEvent, and a replaced one is
    what the run returns."""
    seen: list[object] = []

    def rewrite(
        result: MiddlewareResult[EventLoopStopEvent],
    ) -> MiddlewareResult[EventLoopStopEvent]:
        stop = result.value
        seen.append(type(stop))
        message: Message = {"role": "assistant", "content": [{"text": "Rewritten pass."}]}
        return result.replace(
            value=EventLoopStopEvent(stop.stop_reason, message, stop.usage, stop.metrics)
        )

    built = trial.build([text_turn("Original.")], middleware=[AgentStreamStage.output(rewrite)])
    report = await built.agent.run("Hi")
    expect(
        len(seen) == 1 and isinstance(seen[0], type) and issubclass(seen[0], EventLoopStopEvent),
        f"the Output handler was given {seen}",
    )
    expect(report.text == "Rewritten pass.", f"the run ended with {report.text!r}")


@_agent_stream(cite.PER_STAGE_RESULTS, cite.RESULT_RULE)
async def agent_stream_trailing_events_keep_the_result(trial: Trial) -> None:
    """Events a Wrap handler yields after the pass's EventLoopStopEvent do not replace it: the
    last EventLoopStopEvent is the result."""

    async def trailing(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        yield TypedEvent({"conformance_note": "after the result"})

    built = trial.build([text_turn("Done.")], middleware=[AgentStreamStage.wrap(trailing)])
    report = await built.agent.run("Hi")
    expect(
        (report.stop_reason, report.text) == ("end_turn", "Done."),
        f"the run ended {report.stop_reason!r} with {report.text!r}",
    )


def _replace_input(context: AgentStreamContext) -> AgentStreamContext:
    return context.replace(messages=[{"role": "user", "content": [{"text": "Other."}]}])


async def refuses_replaced_pass_input(trial: Trial) -> str:
    """What a host with the agent-stream stage but no way to hand its loop a new input list must
    do: refuse the replaced list with ReplacedMessagesError before the model is asked."""
    if not trial.declares(Capability.AGENT_STREAM):
        return await refuses_agent_stream_handlers(trial)
    built = trial.build([text_turn("Hello.")], middleware=[AgentStreamStage.input(_replace_input)])
    ended = await outcome(built.agent.run("Hi"))
    if not isinstance(ended, BaseException):
        sent = built.script.requests[0].messages if built.script.requests else None
        raise ClauseFailed(
            "the host does not declare replacing an agent pass's input, yet a replaced "
            f"context.messages raised nothing (the model was sent {sent!r}): declare the "
            "capability, or refuse the list with ReplacedMessagesError"
        )
    expect(
        any(isinstance(link, ReplacedMessagesError) for link in exception_chain(ended)),
        f"the run raised {ended!r}, not ReplacedMessagesError",
    )
    expect(not built.script.requests, "the model was asked")
    return "not declared: a replaced input list is refused with ReplacedMessagesError"


@clause(
    cite.AGENT_STREAM_TRANSFORMS,
    cite.AGENT_STREAM_RULE,
    cite.STRANDS_DROP_IN,
    needs=Capability.REPLACE_PASS_INPUT,
    otherwise=refuses_replaced_pass_input,
)
async def agent_stream_replaced_messages_are_the_input(trial: Trial) -> str | None:
    """A list an agent-stream Input handler puts in place of the pass's messages is the pass's
    input: the model receives it and history keeps it, not the prompt it replaced."""
    if not trial.declares(Capability.AGENT_STREAM):
        # Without the stage the capability means nothing: its handlers must be refused.
        return await refuses_agent_stream_handlers(trial)
    built = trial.build([text_turn("Hello.")], middleware=[AgentStreamStage.input(_replace_input)])
    report = await built.agent.run("Hi")
    expect(report.text == "Hello.", f"the run ended with {report.text!r}")
    expect(len(built.script.requests) == 1, f"the model was asked {len(built.script.requests)}x")
    sent = [
        block.get("text")
        for message in built.script.requests[0].messages
        if message["role"] == "user"
        for block in message["content"]
    ]
    expect(sent == ["Other."], f"the model was sent the user text {sent!r}, not ['Other.']")
    kept = [
        block.get("text")
        for message in built.agent.messages
        if message["role"] == "user"
        for block in message["content"]
    ]
    expect(kept == ["Other."], f"history keeps the user text {kept!r}, not ['Other.']")
    return None


@_agent_stream(cite.AGENT_STREAM_TRANSFORMS, cite.AGENT_STREAM_FIELDS)
async def agent_stream_invocation_state_reaches_the_stages(trial: Trial) -> None:
    """An invocation_state an agent-stream Input handler replaces is the one the pass's model
    and tool calls see."""
    marks: list[object] = []

    def mark(context: AgentStreamContext) -> AgentStreamContext:
        state = {**context.invocation_state, "conformance_mark": "set by agentStream"}
        return context.replace(invocation_state=state)

    def read_model(context: InvokeModelContext) -> InvokeModelContext:
        marks.append(("model", context.invocation_state.get("conformance_mark")))
        return context

    def read_tool(context: ExecuteToolContext) -> ExecuteToolContext:
        marks.append(("tool", context.invocation_state.get("conformance_mark")))
        return context

    built = trial.build(
        [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("3")],
        tools=[trial.tools.add],
        middleware=[
            AgentStreamStage.input(mark),
            InvokeModelStage.input(read_model),
            ExecuteToolStage.input(read_tool),
        ],
    )
    await built.agent.run("Add 1 and 2")
    expected = [
        ("model", "set by agentStream"),
        ("tool", "set by agentStream"),
        ("model", "set by agentStream"),
    ]
    expect(marks == expected, f"the calls saw {marks}")


@_agent_stream(cite.AGENT_STREAM_RESUME, cite.RESPONSE_LIFETIME)
async def agent_stream_gate_asks_once_per_cycle(trial: Trial) -> None:
    """An agent-stream gate interrupting before next_fn pauses the pass under the spec's id
    before the model is asked; the answer lets it through once; the next invocation asks
    again."""

    async def gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("run-gate", reason="may this pass run?")
        async for event in next_fn(context):
            yield event

    built = trial.build(
        [text_turn("First."), text_turn("Second.")], middleware=[AgentStreamStage.wrap(gate)]
    )
    paused = await built.agent.run("Hi")
    expected = f"v1:middleware_agent_stream:{uuid.uuid5(uuid.NAMESPACE_OID, 'run-gate')}"
    owed = [i.id for i in paused.interrupts]
    expect(
        paused.stop_reason == "interrupt" and owed == [expected],
        f"the run ended {paused.stop_reason!r} owing {owed}",
    )
    expect(not built.script.requests, "the model was asked before the gate was answered")
    done = await built.agent.resume(responses(paused.interrupts, "go"))
    expect(done.text == "First.", f"the resumed run ended with {done.text!r}")
    expect(len(built.script.requests) == 1, f"the model was asked {len(built.script.requests)}x")
    again = await built.agent.run("Once more")
    expect(
        again.stop_reason == "interrupt",
        f"the next invocation ended {again.stop_reason!r} without asking",
    )


@_agent_stream(cite.INTERRUPT_BEFORE_RESULT)
async def agent_stream_interrupt_after_the_pass_is_refused(trial: Trial) -> None:
    """An agent-stream interrupt raised after the pass produced its EventLoopStopEvent is refused
    with an error, and the agent is not left paused: the next prompt runs."""
    passes: list[int] = []

    async def late(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        passes.append(1)
        async for event in next_fn(context):
            yield event
        if len(passes) == 1:
            context.interrupt("too-late")

    built = trial.build(
        [text_turn("First."), text_turn("Second.")], middleware=[AgentStreamStage.wrap(late)]
    )
    ended = await outcome(built.agent.run("Hi"))
    expect(
        isinstance(ended, Exception),
        f"the late interrupt was accepted: the run ended {ended!r}",
    )
    after = await outcome(built.agent.run("Next"))
    expect(
        not isinstance(after, BaseException) and after.text == "Second.",
        f"after the refusal the next prompt ended with {after!r}",
    )


@_agent_stream(cite.RESULT_ENCODING, cite.PER_STAGE_RESULTS)
async def agent_stream_short_circuit_skips_the_pass(trial: Trial) -> None:
    """An agent-stream Wrap handler that yields its own EventLoopStopEvent without next_fn ends
    the run with it; the model is not asked, and the pass's input never enters history (it is
    appended when the chain reaches the stage's terminal, as in strands-agents 1.62): the next
    run sends its own prompt alone."""
    passes: list[int] = []

    async def canned_once(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        passes.append(1)
        if len(passes) == 1:
            message: Message = {"role": "assistant", "content": [{"text": "Canned."}]}
            yield EventLoopStopEvent("end_turn", message, ZERO_USAGE, ZERO_METRICS)
            return
        async for event in next_fn(context):
            yield event

    built = trial.build([text_turn("Answered.")], middleware=[AgentStreamStage.wrap(canned_once)])
    report = await built.agent.run("Hi")
    expect(not built.script.requests, "the model was asked")
    expect(
        (report.stop_reason, report.text) == ("end_turn", "Canned."),
        f"the run ended {report.stop_reason!r} with {report.text!r}",
    )
    second = await built.agent.run("Again")
    expect(second.text == "Answered.", f"the next run ended with {second.text!r}")
    sent = [
        (message["role"], [block.get("text") for block in message["content"]])
        for message in built.script.requests[0].messages
    ]
    expect(
        sent == [("user", ["Again"])],
        f"after a short-circuited pass the next run sent the model {sent}; expected its own "
        "prompt alone (the short-circuited input is appended only when the terminal runs)",
    )


@_agent_stream(cite.PER_STAGE_RESULTS, cite.RESULT_ENCODING)
async def agent_stream_output_rewrite_keeps_the_usage(trial: Trial) -> None:
    """An agent-stream Output handler that replaces only the pass's message leaves the run's
    usage as the model reported it."""
    usage: Usage = {"inputTokens": 5, "outputTokens": 7, "totalTokens": 12}

    def polite(
        result: MiddlewareResult[EventLoopStopEvent],
    ) -> MiddlewareResult[EventLoopStopEvent]:
        stop = result.value
        message: Message = {"role": "assistant", "content": [{"text": "Politely: hi"}]}
        return result.replace(
            value=EventLoopStopEvent(
                stop.stop_reason, message, stop.usage, stop.metrics, interrupts=stop.interrupts
            )
        )

    script = ScriptedModel([text_turn("hi")], usage=usage)
    setup = AgentSetup(
        script=script, middleware=[AgentStreamStage.output(polite)], model=trial.model(script)
    )
    report = await trial.harness.build(setup).run("Hello")
    expect(report.text == "Politely: hi", f"the run ended with {report.text!r}")
    expect(report.usage is not None, "the harness reports no usage (RunReport.usage)")
    expect(
        report.usage is not None and dict(report.usage) == usage,
        f"the run reported usage {report.usage}, the model {usage}",
    )


@_agent_stream(cite.SAME_EVENTS, cite.AGENT_STREAM_RULE)
async def agent_stream_wrap_handlers_see_the_reference_events(trial: Trial) -> None:
    """An agent-stream Wrap handler sees this library's events of a pass in the same classes and
    order as on the reference agent (a host's own lifecycle events, plain ``TypedEvent`` objects
    or of a class of the host's, are the only extra)."""

    async def classes(on: Trial) -> list[str]:
        seen: list[str] = []

        async def record(
            context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn(context):
                seen.append(public_event_class(event))
                yield event

        turns = [tool_turn("add", {"a": 1, "b": 2}, "t1"), text_turn("It is 3.")]
        built = on.build(turns, tools=[on.tools.add], middleware=[AgentStreamStage.wrap(record)])
        await built.agent.run("Add")
        # A host's own events reach the handler as plain TypedEvents (or a class of its own).
        return [name for name in seen if name != "TypedEvent" and "." not in name]

    ours = await classes(trial)
    expected = await classes(Trial(ReferenceHarness()))
    expect(ours == expected, f"the Wrap handler saw {ours}; on the reference agent {expected}")
