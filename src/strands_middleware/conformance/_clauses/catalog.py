"""Catalog smoke: ready-made items run on the host as on the reference agent."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from ...catalog import (
    Cache,
    ContextWindow,
    Guardrail,
    GuardrailSubject,
    Redact,
    Retry,
    ToolApproval,
    Verdict,
)
from ...content import Message
from ...testing import ScriptedModel, text_turn, tool_turn
from .._clause import Trial, clause, expect
from .._harness import AgentSetup, Capability, run_with_state_of
from . import _sources as cite
from ._probes import last_tool_results, responses, texts

__all__ = [
    "catalog_cache_answers_a_repeated_call",
    "catalog_context_window_follows_a_window_given_per_call",
    "catalog_guardrail_block_never_reaches_the_stream",
    "catalog_guardrail_monitor_blocks_nothing",
    "catalog_redact_reversible_restores_values_past_the_model",
    "catalog_retry_recovers_a_failed_model_call",
    "catalog_tool_approval_gates_the_tool",
]


@clause(cite.CATALOG, model_stage=True)
async def catalog_retry_recovers_a_failed_model_call(trial: Trial) -> None:
    """Retry calls the model again after a failure it is told to retry, and the run succeeds."""
    retry = Retry(attempts=3, on=(ConnectionError,), backoff=0.0, jitter=0.0)
    built = trial.build([ConnectionError("busy"), text_turn("Recovered.")], middleware=[retry])
    report = await built.agent.run("Hi")
    expect(report.text == "Recovered.", f"the run ended with {report.text!r}")
    expect(len(built.script.requests) == 2, f"the model was asked {len(built.script.requests)}x")


@clause(cite.CATALOG, cite.CONVERSE_ONLY, model_stage=True)
async def catalog_cache_answers_a_repeated_call(trial: Trial) -> None:
    """One Cache shared by two agents of one model and system prompt answers the second agent's
    identical request without asking the model."""
    cache = Cache()
    script = ScriptedModel([text_turn("Cached answer."), text_turn("Fresh answer.")])
    setup = AgentSetup(
        script=script, middleware=[cache], system_prompt="Be brief.", model=trial.model(script)
    )
    first, second = trial.harness.build(setup), trial.harness.build(setup)
    await first.run("What is the capital of France?")
    report = await second.run("What is the capital of France?")
    expect(len(script.requests) == 1, "the second agent's request reached the model: a miss")
    expect(report.text == "Cached answer.", f"the second run ended with {report.text!r}")


@clause(cite.CATALOG, cite.HUMAN_IN_THE_LOOP)
async def catalog_tool_approval_gates_the_tool(trial: Trial) -> None:
    """ToolApproval pauses a chosen tool's call; "approve" runs it once, "deny" keeps it from
    running and the model reads the refusal."""
    turns = [
        tool_turn("delete_file", {"path": "/a"}, "t1"),
        text_turn("Deleted."),
        tool_turn("delete_file", {"path": "/b"}, "t2"),
        text_turn("Not deleted."),
    ]
    built = trial.build(
        turns, tools=[trial.tools.delete_file], middleware=[ToolApproval(tools=["delete_file"])]
    )
    paused = await built.agent.run("Delete /a")
    expect(paused.stop_reason == "interrupt", f"the gated run ended {paused.stop_reason!r}")
    expect(not trial.tools.calls, "the tool ran before approval")
    await built.agent.resume(responses(paused.interrupts, "approve"))
    expect(trial.tools.called("delete_file") == [{"path": "/a"}], "the approved call did not run")
    paused = await built.agent.run("Delete /b")
    expect(paused.stop_reason == "interrupt", f"the second gated run ended {paused.stop_reason!r}")
    denied = await built.agent.resume(responses(paused.interrupts, "deny"))
    expect(denied.text == "Not deleted.", f"the denied run ended with {denied.text!r}")
    expect(len(trial.tools.calls) == 1, f"the denied call ran: {trial.tools.calls}")
    sent = last_tool_results(built.script.requests[-1])
    expect(
        len(sent) == 1 and sent[0]["status"] == "error" and "denied" in texts(sent[0]).lower(),
        f"the model read {sent} after the denial",
    )


@clause(cite.CATALOG, cite.SAME_EVENTS, model_stage=True)
async def catalog_guardrail_block_never_reaches_the_stream(trial: Trial) -> None:
    """A reply Guardrail blocks never reaches the host's own event stream: a caller streaming the
    run sees the block message, never the text the guardrail withheld."""

    def block_secrets(subject: GuardrailSubject) -> Verdict:
        if subject.flow == "model_output" and "secret" in subject.text:
            return Verdict.block()
        return Verdict.allow()

    built = trial.build([text_turn("the secret is 42")], middleware=[Guardrail(block_secrets)])
    stream: Any = built.agent.stream("Tell me")
    seen: list[str] = []
    try:
        async for event in stream:
            seen.append(repr(event))
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
    leaked = [each for each in seen if "secret" in each or "is 42" in each]
    expect(not leaked, f"the host's stream carried the withheld reply: {leaked[:2]}")


@clause(cite.CATALOG)
async def catalog_guardrail_monitor_blocks_nothing(trial: Trial) -> None:
    """A Guardrail in monitor mode whose check blocks everything blocks nothing: the tool runs,
    the model reads its result and the user its reply; each would-be block is reported."""
    reported: list[str] = []
    guardrail = Guardrail(
        lambda subject: Verdict.block(),
        mode="monitor",
        on_violation=lambda subject, verdict: reported.append(subject.flow),
    )
    turns = [tool_turn("delete_file", {"path": "/a"}, "t1"), text_turn("Deleted.")]
    built = trial.build(turns, tools=[trial.tools.delete_file], middleware=[guardrail])
    report = await built.agent.run("Delete /a")
    expect(report.text == "Deleted.", f"the run ended with {report.text!r}")
    expect(trial.tools.called("delete_file") == [{"path": "/a"}], "the tool did not run")
    sent = last_tool_results(built.script.requests[-1])
    expect(
        len(sent) == 1 and "deleted /a" in texts(sent[0]),
        f"the model read {sent} as the tool's result",
    )
    expected = ["model_input", "tool_input", "tool_output", "model_output"]
    expect(reported == expected, f"the guardrail reported {reported}, not {expected}")


@clause(cite.CATALOG, cite.CONVERSE_ONLY)
async def catalog_redact_reversible_restores_values_past_the_model(trial: Trial) -> None:
    """A reversible Redact sends the model a pseudonym where the prompt holds an address; the
    tool gets the address back in its arguments, the model reads its result masked again, and
    the user reads the address in the answer. A host without run state refuses it when built."""
    turns = [
        tool_turn("delete_file", {"path": "/files/<EMAIL_1>"}, "t1"),
        text_turn("Deleted /files/<EMAIL_1>."),
    ]
    middleware = [Redact(reversible=True)]
    if not trial.declares(Capability.RUN_STATE):
        try:
            trial.build(turns, tools=[trial.tools.delete_file], middleware=middleware)
        except ValueError as error:
            expect("Redact(reversible=True) cannot run on" in str(error), f"refused: {error}")
            return
        expect(False, "a host without run state took a reversible Redact: it cannot restore")
    built = trial.build(turns, tools=[trial.tools.delete_file], middleware=middleware)
    report = await built.agent.run("Delete the file of jane@example.com")
    requests = built.script.requests
    first = json.dumps(requests[0].messages) if requests else ""
    expect(
        "<EMAIL_1>" in first and "jane@" not in first, f"the model was first sent {first[-120:]}"
    )
    called = trial.tools.called("delete_file")
    expect(called == [{"path": "/files/jane@example.com"}], f"the tool was called with {called}")
    last = json.dumps(requests[-1].messages) if len(requests) > 1 else ""
    expect(
        "deleted /files/<EMAIL_1>" in last and "jane@" not in last,
        "the model read the tool's result unmasked, or not at all",
    )
    answer = "Deleted /files/jane@example.com."
    expect(report.text == answer, f"the run ended with {report.text!r}, not {answer!r}")


def _ten_tokens(message: Message) -> int:
    return 10


@clause(cite.CATALOG, cite.CALLER_STATE, needs=Capability.CALLER_STATE)
async def catalog_context_window_follows_a_window_given_per_call(trial: Trial) -> None:
    """A context window a caller gives one run (``invocation_state["context_window"]``) is what
    ContextWindow's fractional budget is a share of on that run's model calls, over the item's
    own; the runs before and after keep the item's."""
    # Ten tokens a message: half of 1,000,000 holds any of these conversations, half of 30
    # only the latest prompt.
    window = ContextWindow(
        max_tokens=("fraction", 0.5),
        context_window=1_000_000,
        token_counter=_ten_tokens,
        marker=None,
    )
    turns = [text_turn("First."), text_turn("Second."), text_turn("Third.")]
    built = trial.build(turns, middleware=[window])
    run_with_state = run_with_state_of(built.agent)
    expect(
        run_with_state is not None,
        "the harness declares CALLER_STATE, but its agent has no run_with_state(prompt, values)",
    )
    assert run_with_state is not None
    await built.agent.run("Question one?")
    await run_with_state("Question two?", {"context_window": 30})
    await built.agent.run("Question three?")
    requests = built.script.requests
    expect(len(requests) == 3, f"the model was asked {len(requests)} times, not 3")
    sent = [json.dumps(request.messages) for request in requests]
    expect(
        "Question two?" in sent[1] and "Question one?" not in sent[1],
        f"with a window of 30 tokens given for the run, the model was sent {sent[1][-160:]}",
    )
    expect(
        "Question one?" in sent[2] and "Second." in sent[2],
        "the next run, given no window, was cut too: the window given for one run outlived it",
    )
