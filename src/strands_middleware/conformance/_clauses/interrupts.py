"""Human in the loop on the tool stage: pause, resume, refusals, lifetime, another process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping
from typing import Any

from ...content import Message
from ...engine._handlers import MiddlewareNext
from ...engine._result import MiddlewareResult
from ...events import ToolResultEvent, TypedEvent
from ...interrupts import MiddlewareInterruptResult
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...testing import text_turn, tool_turn
from .._clause import Built, Trial, clause, expect
from .._harness import AgentSetup, Capability, Harness, RunReport
from .._hosts import harness_reference
from . import _sources as cite
from ._probes import conversation, gate, last_tool_results, outcome, responses, texts, tool_id

__all__ = [
    "each_tool_call_owes_its_own_interrupt",
    "fresh_prompt_while_paused_is_refused",
    "interrupt_after_the_tool_ran_is_refused",
    "interrupt_answer_reaches_the_handler",
    "malformed_resume_is_refused_state_unchanged",
    "no_standing_approval_across_cycles",
    "output_skipped_while_the_call_is_paused",
    "paused_run_resumes_in_a_fresh_agent",
    "resume_does_not_reask_the_model",
    "resume_reuses_finished_tool_results",
    "resume_runs_the_tool_exactly_once",
    "resume_setup",
    "resume_when_not_paused_is_refused",
    "resumed_report",
    "swallowed_interrupt_never_runs_the_tool",
    "tool_interrupt_pauses_before_the_tool",
    "unknown_interrupt_id_is_refused_state_unchanged",
]

_DELETE = tool_turn("delete_file", {"path": "/tmp/report"}, "t1")
_DONE = text_turn("Deleted.")
_PROMPT = "Delete the report"


async def _paused(trial: Trial, answers: list[Any] | None = None) -> tuple[Built, RunReport]:
    built = trial.build(
        [_DELETE, _DONE],
        tools=[trial.tools.delete_file],
        middleware=[gate(answers if answers is not None else [])],
    )
    report = await built.agent.run(_PROMPT)
    expect(report.stop_reason == "interrupt", f"the gated run ended {report.stop_reason!r}")
    return built, report


def _saved(built: Built) -> str:
    return json.dumps(built.agent.save(), sort_keys=True, default=repr)


async def _refused_and_unchanged(trial: Trial, attempt: str, prompt: Any) -> None:
    """Send ``prompt`` to a paused run: it must raise and leave the run resumable as it was."""
    built, report = await _paused(trial)
    history, state = conversation(built.agent.messages), _saved(built)
    if isinstance(prompt, str):
        ended = await outcome(built.agent.run(prompt))
    else:
        ended = await outcome(built.agent.resume(prompt))
    expect(isinstance(ended, Exception), f"{attempt} was accepted: the run ended {ended!r}")
    expect(conversation(built.agent.messages) == history, f"{attempt} changed the history")
    expect(_saved(built) == state, f"{attempt} changed the saved state of the paused run")
    expect(not trial.tools.calls, f"{attempt} ran the tool: {trial.tools.calls}")
    done = await built.agent.resume(responses(report.interrupts, "yes"))
    expect(
        done.stop_reason == "end_turn"
        and trial.tools.called("delete_file") == [{"path": "/tmp/report"}],
        f"after {attempt} the proper resume ended {done.stop_reason!r} with tool calls "
        f"{trial.tools.calls}",
    )
    expect(
        len(built.script.requests) == 2,
        f"after {attempt} the model was asked {len(built.script.requests)}x, expected 2",
    )


@clause(cite.INTERRUPTS, cite.HUMAN_IN_THE_LOOP)
async def tool_interrupt_pauses_before_the_tool(trial: Trial) -> None:
    """A Wrap handler's context.interrupt() pauses the run before the tool runs; the run reports
    one interrupt owed, with the spec's deterministic id, the handler's name and reason."""
    _built, report = await _paused(trial)
    expect(not trial.tools.calls, f"the tool ran before the answer: {trial.tools.calls}")
    owed = [(i.id, i.name, i.reason) for i in report.interrupts]
    expected = [(tool_id("t1", "approve"), "approve", {"input": {"path": "/tmp/report"}})]
    expect(owed == expected, f"the run owes {owed}, expected {expected}")


@clause(cite.INTERRUPTS, cite.HUMAN_IN_THE_LOOP)
async def resume_runs_the_tool_exactly_once(trial: Trial) -> None:
    """Answering the interrupt resumes the paused tool call: the tool runs exactly once and the
    run ends as the script does."""
    built, report = await _paused(trial)
    done = await built.agent.resume(responses(report.interrupts, "yes"))
    expect(done.stop_reason == "end_turn", f"the resumed run ended {done.stop_reason!r}")
    expect(done.text == "Deleted.", f"the resumed run ended with {done.text!r}")
    ran = trial.tools.called("delete_file")
    expect(ran == [{"path": "/tmp/report"}], f"the tool ran {len(ran)}x: {ran}")


@clause(cite.INTERRUPTS, cite.AGENT_STREAM_RESUME)
async def resume_does_not_reask_the_model(trial: Trial) -> None:
    """A resume replays the paused tool round: the model is not asked again for the tool call,
    and its next request carries the tool's result."""
    built, report = await _paused(trial)
    await built.agent.resume(responses(report.interrupts, "yes"))
    requests = built.script.requests
    expect(len(requests) == 2, f"the model was asked {len(requests)}x, expected 2")
    sent = last_tool_results(requests[1])
    expect(
        [(r["toolUseId"], r["status"]) for r in sent] == [("t1", "success")],
        f"the model's second request ends with tool results {sent}",
    )


@clause(cite.INTERRUPTS, cite.HUMAN_IN_THE_LOOP)
async def interrupt_answer_reaches_the_handler(trial: Trial) -> None:
    """On resume the same interrupt() call returns the human's answer, as a
    MiddlewareInterruptResult holding the response unchanged."""
    answers: list[Any] = []
    answer = {"approved": True, "note": "go ahead"}
    built = trial.build(
        [_DELETE, _DONE],
        tools=[trial.tools.delete_file],
        middleware=[gate(answers, approve=answer)],
    )
    report = await built.agent.run(_PROMPT)
    await built.agent.resume(responses(report.interrupts, answer))
    expect(len(answers) == 1, f"the handler got {len(answers)} answers: {answers!r}")
    got = answers[0]
    expect(
        isinstance(got, MiddlewareInterruptResult) and got.response == answer,
        f"interrupt() returned {got!r}",
    )


@clause(cite.RESULT_RULE, cite.INTERRUPTS)
async def output_skipped_while_the_call_is_paused(trial: Trial) -> None:
    """A paused tool call has no result, so its Output handlers do not run until the resumed
    call produces one."""
    seen: list[str] = []

    def watch(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        seen.append(texts(result.value.tool_result))
        return result

    built = trial.build(
        [_DELETE, _DONE],
        tools=[trial.tools.delete_file],
        middleware=[gate([]), ExecuteToolStage.output(watch)],
    )
    report = await built.agent.run(_PROMPT)
    expect(not seen, f"the Output handler ran on the paused call: {seen}")
    await built.agent.resume(responses(report.interrupts, "yes"))
    expect(seen == ["deleted /tmp/report"], f"after the resume the Output handler saw {seen}")


@clause(cite.INTERRUPTS, cite.HUMAN_IN_THE_LOOP)
async def each_tool_call_owes_its_own_interrupt(trial: Trial) -> None:
    """Two gated tool calls in one model turn owe one interrupt each (each id names its call);
    answering both runs each tool once, without asking the model again."""
    both: Message = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/a"}}},
            {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "/b"}}},
        ],
    }
    built = trial.build([both, _DONE], tools=[trial.tools.delete_file], middleware=[gate([])])
    report = await built.agent.run("Delete both")
    ids = sorted(i.id for i in report.interrupts)
    expected = sorted([tool_id("t1", "approve"), tool_id("t2", "approve")])
    expect(ids == expected, f"the run owes {ids}, expected {expected}")
    done = await built.agent.resume(responses(report.interrupts, "yes"))
    ran = sorted(call["path"] for call in trial.tools.called("delete_file"))
    expect(ran == ["/a", "/b"], f"the tools ran for {ran}")
    expect(done.stop_reason == "end_turn", f"the resumed run ended {done.stop_reason!r}")
    expect(len(built.script.requests) == 2, f"the model was asked {len(built.script.requests)}x")


@clause(cite.RESPONSE_LIFETIME, cite.HUMAN_IN_THE_LOOP)
async def no_standing_approval_across_cycles(trial: Trial) -> None:
    """An answer lives for its own interrupt cycle: the same gate on a later call (even one with
    the same tool-use id) asks again instead of reusing the old approval."""
    built = trial.build(
        [
            _DELETE,
            _DONE,
            tool_turn("delete_file", {"path": "/tmp/other"}, "t1"),
            text_turn("Deleted again."),
        ],
        tools=[trial.tools.delete_file],
        middleware=[gate([])],
    )
    report = await built.agent.run(_PROMPT)
    await built.agent.resume(responses(report.interrupts, "yes"))
    again = await built.agent.run("Delete the other one")
    expect(
        again.stop_reason == "interrupt",
        f"the second cycle ended {again.stop_reason!r} without asking",
    )
    ran = trial.tools.called("delete_file")
    expect(ran == [{"path": "/tmp/report"}], f"the tool ran for {ran}")


@clause(cite.HUMAN_IN_THE_LOOP, cite.USER_ERRORS)
async def unknown_interrupt_id_is_refused_state_unchanged(trial: Trial) -> None:
    """A resume answering an interrupt id the run does not owe is refused before anything runs;
    the paused run is unchanged and the proper answer still resumes it."""
    unknown = [{"interruptResponse": {"interruptId": tool_id("t9", "approve"), "response": "yes"}}]
    await _refused_and_unchanged(trial, "a resume with an unknown id", unknown)


@clause(cite.HUMAN_IN_THE_LOOP, cite.USER_ERRORS)
async def malformed_resume_is_refused_state_unchanged(trial: Trial) -> None:
    """A malformed resume (an interruptResponse block without a response) is refused before
    anything runs; the paused run is unchanged and the proper answer still resumes it."""
    malformed = [{"interruptResponse": {"interruptId": tool_id("t1", "approve")}}]
    await _refused_and_unchanged(trial, "a malformed resume", malformed)


@clause(cite.HUMAN_IN_THE_LOOP, cite.USER_ERRORS)
async def fresh_prompt_while_paused_is_refused(trial: Trial) -> None:
    """A fresh prompt while interrupts are owed is refused; the paused run is unchanged and the
    proper answer still resumes it."""
    await _refused_and_unchanged(trial, "a fresh prompt", "Never mind, do something else")


@clause(cite.HUMAN_IN_THE_LOOP, cite.USER_ERRORS)
async def resume_when_not_paused_is_refused(trial: Trial) -> None:
    """Answers sent once the run is no longer paused (a stale resume, or the same answers
    sent twice) are refused: nothing runs, the history is unchanged, and a fresh prompt is
    still answered."""
    built = trial.build(
        [_DELETE, _DONE, text_turn("Anything else?")],
        tools=[trial.tools.delete_file],
        middleware=[gate([])],
    )
    report = await built.agent.run(_PROMPT)
    expect(report.stop_reason == "interrupt", f"the gated run ended {report.stop_reason!r}")
    answers = responses(report.interrupts, "yes")
    done = await built.agent.resume(answers)
    expect(done.stop_reason == "end_turn", f"the resumed run ended {done.stop_reason!r}")
    history = conversation(built.agent.messages)
    again = await outcome(built.agent.resume(answers))
    expect(isinstance(again, Exception), f"the answers sent again were accepted: {again!r}")
    expect(conversation(built.agent.messages) == history, "the refused resume changed the history")
    ran = trial.tools.called("delete_file")
    expect(ran == [{"path": "/tmp/report"}], f"the tool ran {len(ran)}x: {ran}")
    expect(
        len(built.script.requests) == 2,
        f"the refused resume asked the model: {len(built.script.requests)} requests, expected 2",
    )
    fresh = await built.agent.run("Thanks")
    expect(
        fresh.stop_reason == "end_turn" and fresh.text == "Anything else?",
        f"after the refused resume a fresh prompt ended {fresh.stop_reason!r}: {fresh.text!r}",
    )


@clause(cite.FAIL_CLOSED, cite.INTERRUPTS)
async def swallowed_interrupt_never_runs_the_tool(trial: Trial) -> None:
    """A gate whose interrupt is swallowed by a broad except Exception never lets the tool run
    (the spec's hazard fails closed)."""

    async def careless(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        # The hazard under test: a broad suppression catches the InterruptException too.
        with contextlib.suppress(Exception):
            context.interrupt("approve", reason="may I?")
        async for event in next_fn(context):
            yield event

    built = trial.build(
        [_DELETE, _DONE, _DONE],
        tools=[trial.tools.delete_file],
        middleware=[ExecuteToolStage.wrap(careless)],
    )
    await outcome(built.agent.run(_PROMPT))
    expect(not trial.tools.calls, "the tool ran although the gate's interrupt was swallowed")


@clause(cite.FAIL_CLOSED, cite.INTERRUPT_BEFORE_RESULT)
async def interrupt_after_the_tool_ran_is_refused(trial: Trial) -> None:
    """An interrupt raised after the tool ran in that call is refused, not registered: resuming
    it would run the tool a second time."""

    async def late(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event
        context.interrupt("confirm", reason="was that right?")

    built = trial.build(
        [_DELETE, _DONE, _DONE],
        tools=[trial.tools.delete_file],
        middleware=[ExecuteToolStage.wrap(late)],
    )
    ended = await outcome(built.agent.run(_PROMPT))
    paused = isinstance(ended, RunReport) and ended.stop_reason == "interrupt"
    expect(not paused, "the run paused on an interrupt raised after the tool ran")
    ran = trial.tools.called("delete_file")
    expect(len(ran) == 1, f"the tool ran {len(ran)}x")


def resume_setup(trial: Trial) -> AgentSetup:
    """The agent a saved paused run is restored into: the rest of the script, the same gate."""
    return trial.setup([_DONE], tools=[trial.tools.delete_file], middleware=[gate([])])


async def resumed_report(
    harness: Harness, saved: Mapping[str, Any], answers: list[dict[str, Any]]
) -> dict[str, Any]:
    """Restore ``saved`` into a fresh agent of ``harness``, resume it, and say what happened."""
    trial = Trial(harness)
    setup = resume_setup(trial)
    agent = harness.restore(setup, saved)
    report = await agent.resume(answers)
    script: Any = setup.script  # the ScriptedModel resume_setup made
    requests: list[Any] = script.requests
    return {
        "stop_reason": report.stop_reason,
        "text": report.text,
        "tool_calls": [[name, arguments] for name, arguments in trial.tools.calls],
        "requests": len(requests),
        "results_sent": [dict(r) for r in last_tool_results(requests[0])] if requests else [],
    }


def _in_another_process(harness: Harness, saved: Mapping[str, Any], answers: Any) -> Any:
    payload = json.dumps(
        {"harness": harness_reference(harness), "saved": saved, "responses": answers}
    )
    # The child must import what this process can: the harness may live in a test suite.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    child = subprocess.run(
        [sys.executable, "-m", "strands_middleware.conformance._fresh_process"],
        input=payload,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    expect(
        child.returncode == 0,
        f"resuming in another process failed (exit {child.returncode}): "
        f"{child.stderr.strip()[-1500:]}",
    )
    return json.loads(child.stdout)


@clause(cite.HUMAN_IN_THE_LOOP, cite.HOST_PROMISES)
async def paused_run_resumes_in_a_fresh_agent(trial: Trial) -> str:
    """A paused run saved as JSON resumes in a fresh agent (in another process where the host
    declares it): the tool runs once there and the model is not asked again for the tool call."""
    built, report = await _paused(trial)
    saved = json.loads(json.dumps(built.agent.save()))
    answers = responses(report.interrupts, "yes")
    elsewhere = trial.declares(Capability.RESUME_IN_ANOTHER_PROCESS)
    if elsewhere:
        resumed = await asyncio.to_thread(_in_another_process, trial.harness, saved, answers)
    else:
        resumed = await resumed_report(trial.harness, saved, answers)
    expect(not trial.tools.calls, f"the tool ran in the first agent: {trial.tools.calls}")
    expect(
        resumed["tool_calls"] == [["delete_file", {"path": "/tmp/report"}]],
        f"the restored agent ran tools {resumed['tool_calls']}",
    )
    expect(
        resumed["requests"] == 1
        and [(r["toolUseId"], r["status"]) for r in resumed["results_sent"]] == [("t1", "success")],
        f"the restored agent asked the model {resumed['requests']}x, first with tool results "
        f"{resumed['results_sent']}",
    )
    expect(
        (resumed["stop_reason"], resumed["text"]) == ("end_turn", "Deleted."),
        f"the restored run ended {resumed['stop_reason']!r} with {resumed['text']!r}",
    )
    return "in another process" if elsewhere else "in this process (not declared: another process)"


@clause(cite.HUMAN_IN_THE_LOOP, cite.INTERRUPTS)
async def resume_reuses_finished_tool_results(trial: Trial) -> None:
    """In a round of two tool calls where only one is gated, the resume runs the gated call
    alone: the call that finished before the pause is not run again, and the model reads both
    results."""

    async def gate_deletes(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        if context.tool_use["name"] == "delete_file":
            context.interrupt("approve", reason={"input": dict(context.tool_use["input"])})
        async for event in next_fn(context):
            yield event

    both: Message = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 1, "b": 2}}},
            {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "/a"}}},
        ],
    }
    built = trial.build(
        [both, _DONE],
        tools=[trial.tools.add, trial.tools.delete_file],
        middleware=[ExecuteToolStage.wrap(gate_deletes)],
    )
    paused = await built.agent.run(_PROMPT)
    expect(paused.stop_reason == "interrupt", f"the gated run ended {paused.stop_reason!r}")
    resumed = await built.agent.resume(responses(paused.interrupts, "yes"))
    expect(resumed.text == "Deleted.", f"the resumed run ended with {resumed.text!r}")
    added = trial.tools.called("add")
    expect(len(added) == 1, f"the ungated tool ran {len(added)}x over the pause and the resume")
    expect(
        trial.tools.called("delete_file") == [{"path": "/a"}],
        f"the gated tool ran as {trial.tools.called('delete_file')}",
    )
    sent = sorted(result["toolUseId"] for result in last_tool_results(built.script.requests[-1]))
    expect(sent == ["t1", "t2"], f"after the resume the model read results for {sent}")
