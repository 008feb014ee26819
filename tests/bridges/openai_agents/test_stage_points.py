"""The OpenAI Agents SDK bridge reaches the stages through the adapter layer's stage points only.

`ModelStagePoint` and `ToolStagePoint` build the handlers' context, run the chain and check its
result for every host; a bridge that made a context or opened a chain itself would drift from
the other hosts unnoticed. These tests read the bridge's source and fail naming the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import strands_middleware
from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    host,
)
from strands_middleware.bridges import openai_agents
from strands_middleware.stages import _agent_stream
from strands_middleware.stages._agent_stream import AgentStreamContext, AgentStreamStage

BRIDGE = Path(openai_agents.__file__).parent

CONTEXTS = frozenset(
    each.__name__ for each in (InvokeModelContext, ExecuteToolContext, AgentStreamContext)
)
# The stages are objects, not classes: their names as the bridge's source spells them.
STAGES = frozenset({"InvokeModelStage", "ExecuteToolStage", "AgentStreamStage"})
# The host helpers that build a context or run a chain without a stage point.
HELPERS = frozenset(
    {
        "model_call_context",
        "tool_call_context",
        "run_model_call",
        "run_tool_call",
        "run_tool_stage",
        "run_agent_pass",
    }
)


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def bypasses(source: str) -> list[str]:
    """Where ``source`` builds a stage context or runs a stage's chain without a stage point."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _called_name(node)
        first = node.args[0] if node.args else None
        opens_a_stage = name == "open" and isinstance(first, ast.Name) and first.id in STAGES
        if name in CONTEXTS or name in HELPERS or opens_a_stage:
            found.append(f"line {node.lineno}: {ast.unparse(node.func)}(...)")
    return found


def test_the_names_checked_are_still_the_library_s() -> None:
    # A renamed helper or stage would drop out of the check silently otherwise.
    assert {name for name in HELPERS if not hasattr(host, name)} == set()
    stages = {InvokeModelStage.name, ExecuteToolStage.name, AgentStreamStage.name}
    named = {
        getattr(strands_middleware, name, None) or getattr(_agent_stream, name) for name in STAGES
    }
    assert {each.name for each in named} == stages


def bridge_modules() -> list[Path]:
    return sorted(BRIDGE.glob("*.py"))


def test_the_bridge_has_modules_to_scan() -> None:
    names = {path.name for path in bridge_modules()}
    assert {"_model.py", "_tools.py"} <= names


@pytest.mark.parametrize("path", bridge_modules(), ids=lambda path: path.name)
def test_no_bridge_module_builds_a_context_or_runs_a_chain_itself(path: Path) -> None:
    assert bypasses(path.read_text()) == [], (
        f"bridges/openai_agents/{path.name} builds a stage context or runs a stage's chain "
        "itself: make a ModelStagePoint or ToolStagePoint (strands_middleware.host) and use its "
        "context, run/result/open and changed instead"
    )


def test_the_check_sees_what_it_is_for() -> None:
    source = (
        "context = InvokeModelContext(agent=a, messages=[])\n"
        "tool_context = stages.ExecuteToolContext(agent=a)\n"
        "stream = run_tool_stage(registry, context, terminal)\n"
        "chain = self.registry.open(InvokeModelStage, context, terminal)\n"
        "fine = point.open(terminal)\n"
        "also_fine = ModelStagePoint(registry, agent=a)\n"
    )
    assert bypasses(source) == [
        "line 1: InvokeModelContext(...)",
        "line 2: stages.ExecuteToolContext(...)",
        "line 3: run_tool_stage(...)",
        "line 4: self.registry.open(...)",
    ]
