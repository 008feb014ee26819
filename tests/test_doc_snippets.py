"""Every Python block of README.md and docs/**/*.md type-checks (strict mypy, pyright) and runs.

A reader copies the documentation's snippets into a project checked as strictly as this one, so
they are held to the same bar as ``src/``. Each ```` ```python ```` (or ```` ```py ````) block is
a snippet; one that builds on the block before it (it uses names that block defined) says so
with the HTML comment ``<!-- continues -->`` on the line just above its fence, and is checked
together with it. Blocks that are not Python (shell commands, trees) use another fence
(```` ```console ````, a bare ```` ``` ````) and are not checked. Pages added under docs/ are
covered with no change here.

Every snippet is type-checked, and every snippet is run as a script (``__main__``, a fresh
namespace each, in one process apart from pytest's, with a temporary folder as its working
directory). A snippet that cannot run here (it talks to a server that is not there) opts out of
running, not of checking, with ``<!-- no-run -->`` on a line just above its fence (with
``<!-- continues -->``, in either order); for a continued group the marker on its first block
decides.

Both checkers run once over all the snippets (one file per group), with the configuration a user
gets from ``--strict`` alone, not this project's; a failure names the snippet by its file, lines
and section, and quotes the checker with the line mapped back to the Markdown file. A snippet
importing a framework not installed here (pydantic-ai needs Python 3.11) is left out of the run
on that Python, as the bridge's own tests are. A snippet that needs a module the top-level
import does not show (a submodule another package adds, such as ``temporalio.strands_agents``,
which cannot be installed beside this project's dev extra) names it with
``<!-- needs: temporalio.strands_agents -->`` above its fence (with the other markers, in any
order; for a continued group the marker on its first block decides): where that module cannot be
imported, the snippet is left out of the checks and the run, and where it can, it is held to
them like any other.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BIN = Path(sys.executable).parent
CONTINUES = "<!-- continues -->"
NO_RUN = "<!-- no-run -->"
MARKERS = (CONTINUES, NO_RUN)
# ``<!-- needs: package.module -->``: the snippet is checked only where that module imports.
_NEEDS = re.compile(r"^<!-- needs: (?P<module>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*) -->$")
RUN_TIMEOUT = 60  # seconds, per snippet
PYTHON_VERSION = "3.10"  # the oldest Python the package supports (requires-python)

# A file checked beside the snippets, with one certain error, so that a checker that checks
# nothing (a wrong path, a config that excludes the files) fails the suite instead of passing it.
CANARY_FILE = "canary.py"
CANARY = 'count: int = "three"\n'

# A fence's info string may carry attributes after the language (```python title="x.py").
_FENCE = re.compile(r"^```(?P<info>[^\s`]*)(?:\s.*)?$")
PYTHON_FENCES = ("python", "py")
_HEADING = re.compile(r"^#+\s+(?P<title>.+?)\s*$")
_MYPY_LINE = re.compile(
    r"^(?P<path>[^:\n]+\.py):(?P<line>\d+):(?:\d+:)? (?P<severity>error|note): (?P<message>.*)$"
)


@dataclass
class Snippet:
    """A group of Markdown blocks checked as one file: a block and those that continue it."""

    first_line: int
    last_line: int
    section: str
    source: str = "README.md"
    runs: bool = True
    # Modules a ``<!-- needs: ... -->`` marker names: the snippet is left out where one is missing.
    needs: list[str] = field(default_factory=list[str])
    code_lines: list[str] = field(default_factory=list[str])
    # The Markdown file's line for each line of the code, to report errors where a reader sees them.
    readme_lines: list[int] = field(default_factory=list[int])

    @property
    def name(self) -> str:
        return f"{self.source}:{self.first_line}-{self.last_line} ({self.section})"

    @property
    def code(self) -> str:
        return "".join(f"{line}\n" for line in self.code_lines)

    def readme_line(self, file_line: int) -> int:
        """The Markdown line of the snippet file's 1-based ``file_line``."""
        if 1 <= file_line <= len(self.readme_lines):
            return self.readme_lines[file_line - 1]
        return self.first_line


def _is_marker(text: str) -> bool:
    return text in MARKERS or _NEEDS.match(text) is not None


def _markers_above(lines: list[str], fence: int) -> set[str]:
    """The markers on the lines just above the fence at index ``fence``."""
    found: set[str] = set()
    number = fence - 1
    while number >= 0 and _is_marker(lines[number].strip()):
        found.add(lines[number].strip())
        number -= 1
    return found


def extract_snippets(markdown: str, source: str = "README.md") -> list[Snippet]:
    """The ```` ```python ```` blocks of ``markdown``, a continued block joined to the one before.

    Raises:
        ValueError: a ``<!-- continues -->``, ``<!-- no-run -->`` or ``<!-- needs: ... -->``
            marker is not directly above a Python fence, or ``<!-- continues -->`` sits above the
            first Python block (there is nothing for it to continue).
    """
    lines = markdown.splitlines()
    snippets: list[Snippet] = []
    section = "top"
    number = 0
    while number < len(lines):
        text = lines[number]
        fence = _FENCE.match(text)
        if fence is None:
            heading = _HEADING.match(text)
            if heading is not None:
                section = heading["title"]
            if _is_marker(text.strip()):
                following = number + 1
                while following < len(lines) and _is_marker(lines[following].strip()):
                    following += 1
                below = _FENCE.match(lines[following].strip()) if following < len(lines) else None
                if below is None or below["info"] not in PYTHON_FENCES:
                    raise ValueError(
                        f"{source}:{number + 1}: {text.strip()} must sit on the line just above a "
                        "```python fence"
                    )
            number += 1
            continue
        body_start = number + 1
        end = body_start
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if fence["info"] in PYTHON_FENCES:
            markers = _markers_above(lines, number)
            continues = CONTINUES in markers
            if continues and not snippets:
                raise ValueError(
                    f"{source}:{number}: {CONTINUES} above the first Python block: there is no "
                    "block before it to continue"
                )
            if continues:
                snippet = snippets[-1]
                snippet.last_line = end + 1
            else:
                snippet = Snippet(
                    first_line=number + 1,
                    last_line=end + 1,
                    section=section,
                    source=source,
                    runs=NO_RUN not in markers,
                    needs=sorted(
                        match["module"] for match in map(_NEEDS.match, markers) if match is not None
                    ),
                )
                snippets.append(snippet)
            for body_line in range(body_start, end):
                snippet.code_lines.append(lines[body_line])
                snippet.readme_lines.append(body_line + 1)
        number = end + 1
    return snippets


def documentation_files() -> list[Path]:
    """README.md and every Markdown page under docs/, in a stable order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def all_snippets() -> list[Snippet]:
    found: list[Snippet] = []
    for path in documentation_files():
        source = path.relative_to(ROOT).as_posix()
        found.extend(extract_snippets(path.read_text(encoding="utf-8"), source))
    return found


_IMPORTED = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.MULTILINE)


def imports_installed(snippet: Snippet) -> bool:
    """Whether every package the snippet imports is installed here."""
    names = set(_IMPORTED.findall(snippet.code))
    return all(importlib.util.find_spec(name) is not None for name in names)


def needs_met(snippet: Snippet) -> bool:
    """Whether every module the snippet's ``<!-- needs: ... -->`` marker names imports here."""
    for module in snippet.needs:
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except ModuleNotFoundError:  # a parent package of the module is missing
            return False
    return True


SNIPPETS = [s for s in all_snippets() if imports_installed(s) and needs_met(s)]


def _file_name(index: int) -> str:
    return f"snippet_{index:02d}.py"


@dataclass
class CheckerRun:
    """What one checker said, per file it was given."""

    diagnostics: dict[str, list[str]]
    output: str = field(repr=False)

    def about(self, file_name: str) -> list[str]:
        return self.diagnostics.get(file_name, [])


def _start_checkers(directory: Path, files: list[str]) -> dict[str, subprocess.Popen[str]]:
    # An empty mypy config keeps any mypy.ini or pyproject.toml above the temp dir out of it.
    (directory / "mypy.ini").write_text("[mypy]\n", encoding="utf-8")
    (directory / "pyrightconfig.json").write_text(
        json.dumps(
            {
                "include": files,
                "typeCheckingMode": "strict",
                "pythonVersion": PYTHON_VERSION,
            }
        ),
        encoding="utf-8",
    )
    mypy = [
        str(BIN / "mypy"),
        "--strict",
        "--python-version",
        PYTHON_VERSION,
        "--config-file",
        "mypy.ini",
        "--cache-dir",
        ".mypy_cache",
        "--no-error-summary",
        "--no-pretty",
        "--show-error-codes",
        "--show-column-numbers",
        *files,
    ]
    pyright = [
        str(BIN / "pyright"),
        "--outputjson",
        "--pythonpath",
        sys.executable,
        "--project",
        "pyrightconfig.json",
    ]
    # Both at once: each spends most of its time loading the library and typeshed.
    return {
        name: subprocess.Popen(
            command, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for name, command in (("mypy", mypy), ("pyright", pyright))
    }


def _finish(name: str, process: subprocess.Popen[str]) -> str:
    """The checker's stdout, once it has exited with 0 (clean) or 1 (it found errors)."""
    try:
        stdout, stderr = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    # Both checkers exit with 2 or more when they could not check at all (bad options, a crash).
    assert process.returncode in (0, 1), (
        f"{name} failed to run (exit status {process.returncode}):\n{stdout}\n{stderr}"
    )
    return stdout


def _mypy_diagnostics(stdout: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    last_file: str | None = None
    for text in stdout.splitlines():
        match = _MYPY_LINE.match(text)
        if match is None:
            continue
        file_name = Path(match["path"]).name
        # A note belongs to the error just before it ("Revealed type", "See ...").
        if match["severity"] == "note" and last_file != file_name:
            continue
        last_file = file_name
        found.setdefault(file_name, []).append(
            f"{match['line']}: {match['severity']}: {match['message']}"
        )
    return found


def _pyright_diagnostics(stdout: str) -> dict[str, list[str]]:
    report = json.loads(stdout)
    found: dict[str, list[str]] = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] not in ("error", "warning"):
            continue
        file_name = Path(diagnostic["file"]).name
        line = diagnostic["range"]["start"]["line"] + 1  # pyright counts lines from 0
        rule = f" ({diagnostic['rule']})" if diagnostic.get("rule") else ""
        found.setdefault(file_name, []).append(
            f"{line}: {diagnostic['severity']}: {diagnostic['message']}{rule}"
        )
    return found


# Runs each snippet file named on its command line as a script (``runpy``, ``__main__``), each in
# a fresh namespace and under an alarm, and prints one JSON object: file name to the traceback of
# its failure, or null. One process for all: the libraries are imported once, not per snippet.
RUNNER = f"""
import json, runpy, signal, sys, traceback

def timed_out(signum, frame):
    raise TimeoutError("the snippet ran longer than {RUN_TIMEOUT} s")

signal.signal(signal.SIGALRM, timed_out)
outcome = {{}}
for name in sys.argv[1:]:
    signal.alarm({RUN_TIMEOUT})
    try:
        runpy.run_path(name, run_name="__main__")
        outcome[name] = None
    except BaseException:
        outcome[name] = traceback.format_exc()
    finally:
        signal.alarm(0)
sys.stdout.flush()
sys.stderr.write("\\n" + json.dumps(outcome) + "\\n")
"""
# A snippet that must fail when run, so that a runner that runs nothing fails the suite.
FAILING_FILE = "failing.py"
FAILING = 'raise RuntimeError("this snippet fails on purpose")\n'


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | None]:
    """Each runnable snippet's failure (its traceback), or None when it ran to its end."""
    directory = tmp_path_factory.mktemp("doc_snippets_run")
    files: list[str] = []
    for index, snippet in enumerate(SNIPPETS):
        if snippet.runs:
            (directory / _file_name(index)).write_text(snippet.code, encoding="utf-8")
            files.append(_file_name(index))
    (directory / FAILING_FILE).write_text(FAILING, encoding="utf-8")
    files.append(FAILING_FILE)
    completed = subprocess.run(
        [sys.executable, "-c", RUNNER, *files],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=RUN_TIMEOUT * len(files) + 60,
    )
    # The outcome is the runner's last line on stderr: snippets may print to either stream.
    last = completed.stderr.strip().splitlines()[-1] if completed.stderr.strip() else ""
    assert last.startswith("{"), (
        f"the snippet runner stopped early (exit status {completed.returncode}):\n"
        f"{completed.stdout[-2000:]}\n{completed.stderr[-4000:]}"
    )
    outcome: dict[str, str | None] = json.loads(last)
    return outcome


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CheckerRun]:
    """Both checkers' findings over every snippet (and the canary), from one run of each."""
    directory = tmp_path_factory.mktemp("readme_snippets")
    files: list[str] = []
    for index, snippet in enumerate(SNIPPETS):
        (directory / _file_name(index)).write_text(snippet.code, encoding="utf-8")
        files.append(_file_name(index))
    (directory / CANARY_FILE).write_text(CANARY, encoding="utf-8")
    files.append(CANARY_FILE)
    for executable in ("mypy", "pyright"):
        assert (BIN / executable).exists(), (
            f"{BIN / executable} is missing: install the dev extra (make install)"
        )
    processes = _start_checkers(directory, files)
    mypy_out, pyright_out = (_finish(name, process) for name, process in processes.items())
    return {
        "mypy": CheckerRun(_mypy_diagnostics(mypy_out), mypy_out),
        "pyright": CheckerRun(_pyright_diagnostics(pyright_out), pyright_out),
    }


def _readable(snippet: Snippet, diagnostics: list[str]) -> str:
    """The checker's lines with each file line number replaced by the Markdown file's."""
    lines: list[str] = []
    for diagnostic in diagnostics:
        file_line, _, rest = diagnostic.partition(": ")
        lines.append(f"  {snippet.source}:{snippet.readme_line(int(file_line))}: {rest}")
    return "\n".join(lines)


def test_readme_has_python_snippets_to_check() -> None:
    assert len(SNIPPETS) >= 5, f"found only {len(SNIPPETS)} ```python blocks in the docs"
    pages = {snippet.source for snippet in SNIPPETS}
    assert "README.md" in pages, "README.md has no ```python block"
    assert any(page.startswith("docs/") for page in pages), "no page under docs/ has one"


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
@pytest.mark.parametrize("index", range(len(SNIPPETS)), ids=[snippet.name for snippet in SNIPPETS])
def test_doc_snippet_type_checks(checked: dict[str, CheckerRun], checker: str, index: int) -> None:
    snippet = SNIPPETS[index]
    diagnostics = checked[checker].about(_file_name(index))
    assert not diagnostics, (
        f"{checker} (strict) rejects the snippet at {snippet.name}:\n"
        f"{_readable(snippet, diagnostics)}"
    )


@pytest.mark.parametrize("checker", ["mypy", "pyright"])
def test_checker_reports_an_error_in_a_broken_snippet(
    checked: dict[str, CheckerRun], checker: str
) -> None:
    run = checked[checker]
    assert any("error" in line for line in run.about(CANARY_FILE)), (
        f"{checker} did not report the error in {CANARY!r}, so it checked nothing:\n{run.output}"
    )


RUNNABLE = [index for index, snippet in enumerate(SNIPPETS) if snippet.runs]


@pytest.mark.parametrize("index", RUNNABLE, ids=[SNIPPETS[i].name for i in RUNNABLE])
def test_doc_snippet_runs(ran: dict[str, str | None], index: int) -> None:
    snippet = SNIPPETS[index]
    failure = ran[_file_name(index)]
    assert failure is None, f"the snippet at {snippet.name} failed when run:\n{failure}"


def test_runner_reports_a_snippet_that_fails(ran: dict[str, str | None]) -> None:
    failure = ran[FAILING_FILE]
    assert failure is not None and "fails on purpose" in failure, (
        f"the runner did not report the failing snippet, so it ran nothing: {failure!r}"
    )


def test_extraction_joins_a_continued_block_to_the_block_before_it() -> None:
    markdown = "\n".join(
        [
            "# Tour",
            "```python",
            "x = 1",
            "```",
            "text",
            CONTINUES,
            "```python",
            "y = x",
            "```",
            "## Other",
            "```python",
            "z = 2",
            "```",
        ]
    )
    first, second = extract_snippets(markdown)
    assert first.code == "x = 1\ny = x\n"
    assert first.readme_lines == [3, 8]
    assert first.name == "README.md:2-9 (Tour)"
    assert second.code == "z = 2\n"
    assert second.name == "README.md:11-13 (Other)"


def test_a_snippet_importing_a_package_not_installed_is_left_out() -> None:
    present, absent = extract_snippets(
        "```python\nimport json\nfrom re import compile\n```\n\n"
        "```python\nfrom no_such_framework_here import Agent\n```\n"
    )
    assert imports_installed(present)
    assert not imports_installed(absent)


def test_extraction_takes_py_fences_and_fences_with_attributes() -> None:
    markdown = '```py\na = 1\n```\n```python title="b.py"\nb = 2\n```\n```pycon\n>>> 3\n```\n'
    assert [snippet.code for snippet in extract_snippets(markdown)] == ["a = 1\n", "b = 2\n"]


def test_extraction_skips_fences_that_are_not_python() -> None:
    markdown = "```console\nmake test\n```\n```\nsrc/\n```\n```python\nok = True\n```\n"
    (only,) = extract_snippets(markdown)
    assert only.code == "ok = True\n"


def test_extraction_refuses_a_continues_marker_with_no_python_block_below() -> None:
    with pytest.raises(ValueError, match="just above a ```python fence"):
        extract_snippets(f"```python\nx = 1\n```\n{CONTINUES}\n\n```python\ny = x\n```\n")


def test_a_no_run_marker_keeps_the_group_checked_but_not_run() -> None:
    markdown = "\n".join(
        [
            NO_RUN,
            "```python",
            "x = 1",
            "```",
            NO_RUN,
            CONTINUES,
            "```python",
            "y = x",
            "```",
            "```python",
            "z = 2",
            "```",
        ]
    )
    first, second = extract_snippets(markdown, "docs/page.md")
    assert (first.runs, first.code) == (False, "x = 1\ny = x\n")
    assert first.name == "docs/page.md:2-9 (top)"
    assert (second.runs, second.code) == (True, "z = 2\n")


def test_a_needs_marker_names_modules_and_leaves_the_group_out_where_one_is_missing() -> None:
    markdown = "\n".join(
        [
            "<!-- needs: no_such_package_here.sub -->",
            NO_RUN,
            "```python",
            "x = 1",
            "```",
            CONTINUES,
            "```python",
            "y = x",
            "```",
            "<!-- needs: json.decoder -->",
            "```python",
            "z = 2",
            "```",
            "```python",
            "w = 3",
            "```",
        ]
    )
    absent, present, plain = extract_snippets(markdown, "docs/page.md")
    assert (absent.needs, absent.runs, absent.code) == (
        ["no_such_package_here.sub"],
        False,
        "x = 1\ny = x\n",
    )
    assert (present.needs, present.runs) == (["json.decoder"], True)
    assert plain.needs == []
    assert not needs_met(absent)
    assert needs_met(present) and needs_met(plain)
    assert not needs_met(Snippet(1, 1, "top", needs=["json.no_such_submodule"]))


def test_extraction_refuses_a_needs_marker_with_no_python_block_below() -> None:
    marker = "<!-- needs: json -->"
    with pytest.raises(ValueError, match=re.escape(f"docs/x.md:1: {marker} must sit")):
        extract_snippets(f"{marker}\n```console\nmake\n```\n", "docs/x.md")


def test_extraction_refuses_a_no_run_marker_with_no_python_block_below() -> None:
    with pytest.raises(ValueError, match=re.escape("docs/x.md:1: <!-- no-run --> must sit")):
        extract_snippets(f"{NO_RUN}\n```console\nmake\n```\n", "docs/x.md")


def test_every_docs_page_is_scanned() -> None:
    pages = documentation_files()
    assert pages[0].name == "README.md"
    assert all(page.suffix == ".md" for page in pages)
    assert {p.relative_to(DOCS).as_posix() for p in pages[1:]} >= {"index.md", "getting-started.md"}


def test_extraction_refuses_a_continues_marker_above_the_first_block() -> None:
    with pytest.raises(ValueError, match="no block before it"):
        extract_snippets(f"{CONTINUES}\n```python\ny = 1\n```\n")
