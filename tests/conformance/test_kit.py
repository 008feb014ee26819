"""The kit itself: its clauses, the runner's verdicts, the command line, the pytest base class."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from strands_middleware.conformance import (
    BUILT_IN_HOSTS,
    CLAUSES,
    ClauseResult,
    HostReport,
    Outcome,
    load_harness,
    run_clause,
)
from strands_middleware.conformance.__main__ import main
from strands_middleware.conformance._clause import Trial, clause
from strands_middleware.conformance._harnesses._reference import ReferenceHarness
from strands_middleware.conformance._runner import _IN_A_FRESH_PROCESS, FRESH_PROCESS_TIME_LIMIT
from strands_middleware.conformance.suite import ConformanceSuite

from .faulty import SkipsOutputHandlers

ROOT = Path(__file__).parents[2]
HUMAN_IN_THE_LOOP = 'docs/concepts/interrupts.md "Interrupts and resume"'
_BY_ID = {c.id: c for c in CLAUSES}


def test_the_kit_has_at_least_thirty_clauses_each_named_titled_and_cited() -> None:
    assert len(CLAUSES) >= 30
    assert len(_BY_ID) == len(CLAUSES)
    for each in CLAUSES:
        assert re.fullmatch(r"[a-z][a-z_]+", each.id)
        assert each.title.endswith(".")
        assert each.cites
        assert all(
            re.match(r'(spec|DESIGN|issue \d+|docs/[\w/.-]+\.md) "', cite) for cite in each.cites
        )


def test_every_docs_section_a_clause_cites_exists() -> None:
    cited = {cite for each in CLAUSES for cite in each.cites if cite.startswith("docs/")}
    assert cited, "no clause cites the documentation"
    for cite in cited:
        page, heading = cite.split(" ", 1)
        assert (ROOT / page).exists(), cite
        headings = set(re.findall(r"^#+ (.+)$", (ROOT / page).read_text(), re.MULTILINE))
        assert heading.strip('"') in headings, cite


def test_a_host_raising_from_a_check_fails_the_clause_with_the_error() -> None:
    result = run_clause(SkipsOutputHandlers(), _BY_ID["output_rewrite_reaches_the_history"])
    assert result.outcome is Outcome.FAIL
    assert result.detail == "the run ended with 'Original.'"

    @clause(HUMAN_IN_THE_LOOP)
    async def host_raises(trial: Trial) -> None:
        """The host raises."""
        raise KeyError("deep inside the host")

    raised = run_clause(ReferenceHarness(), host_raises)
    assert (raised.outcome, raised.detail) == (
        Outcome.FAIL,
        "the host raised KeyError: 'deep inside the host'",
    )


def test_a_host_that_never_finishes_fails_the_clause_at_the_time_limit() -> None:
    @clause(HUMAN_IN_THE_LOOP)
    async def host_hangs(trial: Trial) -> None:
        """The host never answers."""
        await asyncio.Event().wait()

    result = run_clause(ReferenceHarness(), host_hangs, time_limit=0.01)
    assert (result.outcome, result.detail) == (Outcome.FAIL, "the host did not finish in 0.01 s")


def test_a_clause_resuming_in_a_fresh_process_is_given_that_process_time() -> None:
    # A fresh process imports the host framework before it resumes: the clauses that start one
    # get FRESH_PROCESS_TIME_LIMIT. A renamed clause would silently lose it.
    assert {each.id for each in CLAUSES} >= _IN_A_FRESH_PROCESS
    assert FRESH_PROCESS_TIME_LIMIT > 120  # the child's own timeout


def test_a_clause_needs_a_docstring_and_a_citation() -> None:
    async def undocumented(trial: Trial) -> None:
        pass

    with pytest.raises(TypeError, match="needs a docstring and at least one citation"):
        clause(HUMAN_IN_THE_LOOP)(undocumented)


def _report(outcome: Outcome, known: dict[str, str]) -> HostReport:
    first = CLAUSES[0]
    return HostReport("host", (ClauseResult(first, outcome),), known)


def test_a_report_is_ok_when_exactly_the_known_failures_fail() -> None:
    first = CLAUSES[0].id
    assert _report(Outcome.PASS, {}).ok
    assert _report(Outcome.NOT_APPLICABLE, {}).ok
    assert not _report(Outcome.FAIL, {}).ok
    assert _report(Outcome.FAIL, {first: "issue 1"}).ok
    # A listed clause that passes is reported (the list is out of date) without failing the run.
    assert _report(Outcome.PASS, {first: "issue 1"}).ok
    assert _report(Outcome.PASS, {first: "issue 1"}).fixed
    assert _report(Outcome.PASS, {"no_such_clause": "issue 1"}).unknown_ids == ["no_such_clause"]


def test_load_harness_knows_the_built_in_hosts_and_module_paths() -> None:
    assert load_harness("reference").name == "reference"
    assert load_harness("tests.conformance.faulty:SkipsOutputHandlers").name == "skips-output"
    hosts = {"reference", "strands", "pydantic_ai", "langchain", "openai_agents"}
    assert set(BUILT_IN_HOSTS) == hosts
    unknown = (
        r"unknown host 'nope': name one of langchain, openai_agents, pydantic_ai, reference, "
        "strands"
    )
    with pytest.raises(ValueError, match=unknown):
        load_harness("nope")
    with pytest.raises(TypeError, match="not a harness"):
        load_harness("tests.conformance.faulty:NativeEvent")


def test_the_command_line_prints_the_table_and_exits_zero_when_all_pass(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["reference", "--clause", "phases_run_input_wrap_output"]) == 0
    out = capsys.readouterr().out
    cite = 'docs/concepts/stages-and-phases.md "Stages and phases"'
    assert f"| 1 | `phases_run_input_wrap_output` | {cite} | pass |" in out
    assert "reference: 1 clauses, 1 pass, 0 fail, 0 known failures\n" in out


def test_the_command_line_exits_one_when_a_clause_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    faulty = "tests.conformance.faulty:SkipsOutputHandlers"
    assert main([faulty, "--clause", "output_rewrite_reaches_the_history"]) == 1
    out = capsys.readouterr().out
    assert "FAIL output_rewrite_reaches_the_history: the run ended with 'Original.'" in out


def test_the_command_line_reads_each_harness_known_failures(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clauses = ["--clause", "phases_run_input_wrap_output"]
    clauses += ["--clause", "handlers_closed_innermost_first_on_early_stop"]
    assert main(["strands", *clauses]) == 0
    out = capsys.readouterr().out
    assert "FAIL (known)" in out
    assert "strands: 2 clauses, 1 pass, 0 fail, 1 known failures\n" in out
    assert "strands [native model]: 2 clauses, 1 pass, 0 fail, 1 known failures" in out
    # No failure is known for the "skips-output" host, so the clause it breaks fails openly.
    faulty = "tests.conformance.faulty:SkipsOutputHandlers"
    assert main([faulty, "--clause", "phases_run_input_wrap_output"]) == 1
    out = capsys.readouterr().out
    assert "FAIL phases_run_input_wrap_output" in out
    assert "skips-output: 1 clauses, 0 pass, 1 fail, 0 known failures" in out


def test_the_command_line_reports_a_known_failure_that_passes_without_failing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    listed = "tests.conformance.test_kit:_ListsAPassingClause.harness"
    assert main([listed, "--clause", "phases_run_input_wrap_output"]) == 0
    out = capsys.readouterr().out
    assert "pass (listed as known!)" in out
    assert "remove it from the harness's known_failures" in out


def test_the_command_line_lists_every_clause_with_what_it_checks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    for each in CLAUSES:
        assert f"{each.id}: {each.title}" in out
    assert "[needs: lifecycle hooks]" in out


def test_a_reader_that_stops_early_gets_no_traceback() -> None:
    # As `python -m strands_middleware.conformance --list | head -3` does: the pipe is closed
    # before the command writes, so every write it makes fails.
    process = subprocess.Popen(
        [sys.executable, "-m", "strands_middleware.conformance", "--list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    process.stdout.close()
    _, errors = process.communicate(timeout=60)
    assert errors == ""
    assert process.returncode == 1


def test_the_module_runs_from_a_shell() -> None:
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "strands_middleware.conformance",
            "reference",
            "--clause",
            "wrap_short_circuit_skips_the_model",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert '`wrap_short_circuit_skips_the_model` | spec "Result encoding" | pass |' in (
        completed.stdout
    )


def test_the_kit_needs_strands_only_for_the_strands_host() -> None:
    code = (
        "import sys; sys.modules['strands'] = None\n"
        "from strands_middleware.conformance import load_harness\n"
        "print(load_harness('reference').name)\n"
        "load_harness('strands')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.stdout.strip() == "reference"
    assert 'pip install "strands-middleware[strands]"' in completed.stderr


def test_the_kit_needs_langchain_only_for_the_langchain_host() -> None:
    code = (
        "import sys; sys.modules['langchain'] = None\n"
        "from strands_middleware.conformance import load_harness\n"
        "print(load_harness('reference').name)\n"
        "load_harness('langchain')\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert completed.stdout.strip() == "reference"
    assert 'pip install "strands-middleware[langchain]"' in completed.stderr


class _ListsAPassing(ReferenceHarness):
    known_failures: Mapping[str, str] = {"phases_run_input_wrap_output": "issue 0: imagined"}


class _ListsAPassingClause(ConformanceSuite):
    harness = _ListsAPassing()


class _FaultyListed(SkipsOutputHandlers):
    known_failures: Mapping[str, str] = {"output_rewrite_reaches_the_history": "issue 0: the fault"}


class _FaultyWithoutList(ConformanceSuite):
    harness = _FaultyListed()


def test_the_suite_fails_a_known_failure_that_passes() -> None:
    with pytest.raises(pytest.fail.Exception, match="remove it from known_failures"):
        _ListsAPassingClause().test_clause(_BY_ID["phases_run_input_wrap_output"], False)


def test_the_suite_marks_a_known_failure_that_fails_as_xfail() -> None:
    with pytest.raises(pytest.xfail.Exception, match="issue 0: the fault: the run ended with"):
        _FaultyWithoutList().test_clause(_BY_ID["output_rewrite_reaches_the_history"], False)


def test_the_suite_fails_an_unlisted_failure_with_the_clause_and_its_citation() -> None:
    with pytest.raises(pytest.fail.Exception, match=r"phases_run_input_wrap_output \(docs/"):
        _FaultyWithoutList().test_clause(_BY_ID["phases_run_input_wrap_output"], False)


def test_the_suite_refuses_a_known_failure_naming_no_clause() -> None:
    class Misspelt(ReferenceHarness):
        known_failures: Mapping[str, str] = {"phase_order": "issue 0"}

    class MisspeltSuite(ConformanceSuite):
        harness = Misspelt()

    with pytest.raises(
        AssertionError, match=r"known_failures names no clause run: \['phase_order'\]"
    ):
        MisspeltSuite().test_known_failures_name_clauses()


def test_every_built_in_harness_declares_its_known_failures_on_its_class() -> None:
    # The one place each host's known failures are written: the harness class.
    for name, host in BUILT_IN_HOSTS.items():
        if not host.installed:
            continue
        harness = load_harness(name)
        assert "known_failures" in vars(type(harness)), name
        for reason in harness.known_failures.values():
            assert len(reason) > 40, (name, reason)  # says why, naming the upstream behaviour


def test_a_harness_with_a_native_model_runs_the_model_stage_clauses_twice() -> None:
    from strands_middleware.conformance import run_conformance

    class Native(ReferenceHarness):
        def native_model(self, script: object) -> object:
            return script

    model_stage = [c for c in CLAUSES if c.model_stage]
    report = run_conformance(Native(), clauses=model_stage[:2])
    assert [r.key for r in report.results] == [
        model_stage[0].id,
        model_stage[1].id,
        f"{model_stage[0].id}[native model]",
        f"{model_stage[1].id}[native model]",
    ]
    assert report.summary(native=True).startswith("reference [native model]: 2 clauses, 2 pass")
