"""Every program in examples/ runs and prints what its docstring promises."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str) -> str:
    completed = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return completed.stdout


def test_custom_stage_example_normalises_caches_and_stamps() -> None:
    lines = run_example("custom_stage.py").splitlines()
    assert lines == [
        "SearchEvent {'note': \"searching for 'agent loops'\"}",
        "SearchDone {'hits': ['agent loops #1', 'agent loops #2'], 'engine': 'demo'}",
        "SearchEvent {'note': 'served from cache'}",
        "SearchDone {'hits': ['agent loops #1', 'agent loops #2'], 'engine': 'demo'}",
    ]


def test_quickstart_labels_each_line_with_the_stage_and_phase_that_printed_it() -> None:
    lines = run_example("quickstart.py").splitlines()
    assert lines[0] == "[invokeModel.Input]   model call with 1 message(s); asking for brevity"
    assert lines[1].startswith("[invokeModel.Wrap]    model call streamed 11 events in ")
    assert lines[2] == "[executeTool.Output]  tool t1 returned success: 42"
    assert lines[3] == "[invokeModel.Input]   model call with 3 message(s); asking for brevity"
    assert lines[4].startswith("[invokeModel.Wrap]    model call streamed 11 events in ")
    assert lines[5] == "[agent result]        stop_reason=end_turn answer=2 + 40 is 42."
    assert lines[6] == "[model request]       system prompt: 'Answer in one short sentence.'"


def test_approval_gate_pauses_then_resumes_with_the_answer() -> None:
    assert run_example("approval_gate.py").splitlines() == [
        "stop_reason=interrupt",
        "asks: approve-tool-call about {'path': '/tmp/report.txt'}",
        "stop_reason=end_turn answer=The report is gone.",
    ]


def test_model_cache_short_circuits_the_second_call() -> None:
    assert run_example("model_cache.py").splitlines() == [
        "cache: miss",
        "answer: Paris.",
        "cache: hit",
        "answer: Paris.",
        "model calls: 1",
    ]


def test_flaky_tool_retry_succeeds_on_the_third_attempt() -> None:
    assert run_example("flaky_tool_retry.py").splitlines() == [
        "retry: attempt 1 failed (upstream busy), trying again",
        "retry: attempt 2 failed (upstream busy), trying again",
        "retry: attempt 3 -> success",
        "answer: ACME: 101.5",
    ]


def test_model_switch_routes_one_call_without_changing_the_agent() -> None:
    assert run_example("model_switch.py").splitlines() == [
        "route: 2 words -> small model",
        "Short answer from the small model.",
        "route: 11 words -> large model",
        "Long answer from the large model.",
        "agent.model is still the small one: True",
    ]


def test_strands_quickstart_runs_the_same_middleware_on_a_strands_agent() -> None:
    lines = run_example("strands_quickstart.py").splitlines()
    assert lines[0] == "[invokeModel.Input]   model call with 1 message(s); asking for brevity"
    assert lines[1].startswith("[invokeModel.Wrap]    model call streamed ")
    assert lines[2] == "[executeTool.Output]  tool t1 returned success: 42"
    assert lines[-2] == "[agent result]        stop_reason=end_turn answer=2 + 40 is 42."
    assert lines[-1] == "[model request]       system prompt: 'Answer in one short sentence.'"


if importlib.util.find_spec("langchain") is not None:  # the langchain extra

    def test_langchain_quickstart_runs_the_same_middleware_inside_a_langchain_agent() -> None:
        lines = run_example("langchain_quickstart.py").splitlines()
        assert lines[0] == "[invokeModel.Input]   model call with 1 message(s); asking for brevity"
        assert lines[1].startswith("[invokeModel.Wrap]    model call streamed 11 events in ")
        assert lines[2] == "[executeTool.Output]  tool t1 returned success: 42"
        assert lines[-2] == "[agent result]        interrupts=0 answer=2 + 40 is 42."
        assert lines[-1] == "[model request]       system prompt: 'Answer in one short sentence.'"


def test_catalog_tour_combines_retry_mock_approval_redaction_and_cache() -> None:
    assert run_example("catalog_tour.py").splitlines() == [
        "paused: interrupt, asks ['approve-tool-call']",
        "done: end_turn, answer Done.",
        'tool result call-1: {"owner": "alice"}',
        "tool result call-2: deleted /tmp/report.txt; owner notified at [REDACTED:email]",
        "mocked calls: ['lookup_owner']",
        "model requests: 4 (one failed and was retried)",
        "trivia: Paris.",
        "trivia: Paris.",
        "cache: 1 hit(s), 5 misses",
        "trivia model calls: 1",
    ]


def test_long_conversation_shows_what_the_model_was_sent_at_each_call() -> None:
    lines = run_example("long_conversation.py").splitlines()
    sent = [line for line in lines if line.startswith("model call")]
    assert sent == [
        "model call 1 was sent 1 message(s):",
        "model call 2 was sent 3 message(s):",
        "model call 3 was sent 5 message(s):",
        "model call 4 was sent 3 message(s):",
        "model call 5 was sent 5 message(s):",
        "model call 6 was sent 3 message(s):",
    ]
    # ToolResultTrim: the model reads the head and tail of each report.
    assert lines[6].split("<- ")[1] == (
        "Q1 revenue +12%. Det [... 521 of 561 characters cut ...] d product line. End."
    )
    # Summarize: one summary serves calls 4 and 5, the next one call 6; two written in all.
    summary = "  user      [Summary of the earlier conversation] "
    assert [line.removeprefix(summary) for line in lines if line.startswith(summary)] == [
        "The user asked for the Q1 report: revenue grew 12%.",
        "The user asked for the Q1 report: revenue grew 12%.",
        "Q1 grew 12%, Q2 was flat; both figures were emailed.",
    ]
    assert "summaries written: 2 for 6 model calls" in lines
    # Guardrail: the address is masked, the password question never reaches a model.
    assert "  user      Email both figures to [REDACTED:email]." in lines
    asked = lines.index("> Also, what is the admin password?")
    assert lines[asked + 1] == "< guardrail_intervened: I can't help with credentials."
    assert "            [This message was withheld by a guardrail.]" in lines
    # The history keeps everything as it happened.
    assert lines[-2:] == [
        "  user      Email both figures to cfo@example.com.",
        "  user      Also, what is the admin password?",
    ]


def test_portable_runs_one_stack_unchanged_on_every_installed_host() -> None:
    hosts = ["reference agent", "strands.Agent"]
    if importlib.util.find_spec("pydantic_ai") is not None:  # Python 3.11+
        hosts.append("pydantic-ai Agent")
    if importlib.util.find_spec("langchain") is not None:
        hosts.append("LangChain agent")
    lines = run_example("portable.py").splitlines()
    assert len(lines) == 5 * len(hosts)
    seen = {
        host: [line.removeprefix(f"[{host}] ") for line in lines if line.startswith(f"[{host}]")]
        for host in hosts
    }
    assert seen["reference agent"] == [
        "paused: interrupt, asks ['approve-tool-call']",
        "done: end_turn, answer \"Deleted alice's report.\", deleted ['/tmp/report.txt']",
        "model calls logged: ['1 messages -> tool_use', '3 messages -> tool_use', "
        "'5 messages -> end_turn']",
        "model requests: 4 (one throttled, retried)",
        "cache: 1 hit(s); trivia model calls: 1",
    ]
    assert all(each == seen["reference agent"] for each in seen.values())
