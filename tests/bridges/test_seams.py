"""The private strands-agents names the bridge uses: all in `_seams`, all still where they were.

When a strands-agents release moves or reshapes one of them, a test here fails and says which
name and what to update, instead of the bridge mistranslating a stream.
"""

from __future__ import annotations

import ast
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from strands.interrupt import Interrupt as HostInterrupt
from strands.middleware import MiddlewareStage as HostMiddlewareStage
from strands.telemetry import EventLoopMetrics

from strands_middleware.bridges.strands import _seams as seams

STRANDS = metadata.version("strands-agents")
BRIDGE = Path(seams.__file__).parent


def moved(what: str) -> str:
    return (
        f"strands-agents {STRANDS} changed {what}, which the strands bridge relies on: update "
        "src/strands_middleware/bridges/strands/_seams.py (and _translate.py, which reads the "
        "payload) for this release"
    )


@pytest.mark.parametrize(
    ("module", "name"), seams.PRIVATE_NAMES, ids=[f"{m}.{n}" for m, n in seams.PRIVATE_NAMES]
)
def test_every_private_name_is_still_where_the_bridge_reads_it(module: str, name: str) -> None:
    try:
        seams.private_name(module, name)
    except ImportError:
        pytest.fail(moved(f"{module}.{name} (it is gone)"))


def test_a_moved_name_fails_at_import_naming_it_and_the_fix() -> None:
    with pytest.raises(ImportError) as raised:
        seams.private_name("strands.types._events", "NoSuchEvent")
    message = str(raised.value)
    assert "strands.types._events.NoSuchEvent" in message
    assert f"strands-agents {STRANDS} does not have" in message
    assert 'pip install "strands-agents==1.62.0"' in message


def private_uses(source: str) -> list[str]:
    """Private strands modules and names imported, and private attributes read off objects."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("strands"):
            module = node.module or ""
            found += [f"{module}.{a.name}" for a in node.names if a.name.startswith("_")]
            if any(part.startswith("_") for part in module.split(".")):
                found.append(module)
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if "._" in a.name and a.name.startswith("strands")]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{ast.unparse(node.value)}.{node.attr}")
    return found


def test_no_other_bridge_module_reads_a_private_name() -> None:
    offenders = {
        path.name: private_uses(path.read_text())
        for path in sorted(BRIDGE.glob("*.py"))
        if path.name != "_seams.py"
    }
    assert {name: uses for name, uses in offenders.items() if uses} == {}, (
        "private strands names belong in bridges/strands/_seams.py only"
    )


def test_the_private_name_check_sees_what_it_is_for() -> None:
    source = (
        "from strands.middleware._agent_stream import AgentStreamStage\n"
        "from strands.types import _events\n"
        "state = host_context._interrupt_state\n"
    )
    assert private_uses(source) == [
        "strands.middleware._agent_stream",
        "strands.types._events",
        "host_context._interrupt_state",
    ]


# ---- the payload of every event class, as translate reads and builds it --------------------

TOOL_USE: Any = {"toolUseId": "t1", "name": "add", "input": {}}
MESSAGE: Any = {"role": "assistant", "content": [{"text": "hi"}]}


def payload(event: Any) -> dict[str, Any]:
    return dict(event)


SHAPES: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "ModelStreamChunkEvent(chunk)",
        lambda: seams.ModelStreamChunkEvent({"messageStop": {"stopReason": "end_turn"}}),
        {"event": {"messageStop": {"stopReason": "end_turn"}}},
    ),
    (
        "TextStreamEvent(delta=, text=)",
        lambda: seams.TextStreamEvent(delta={"text": "hi"}, text="hi"),
        {"data": "hi", "delta": {"text": "hi"}},
    ),
    (
        "ToolUseStreamEvent(delta, current_tool_use)",
        lambda: seams.ToolUseStreamEvent({"toolUse": {"input": "{"}}, {**TOOL_USE, "input": "{"}),
        {
            "type": "tool_use_stream",
            "delta": {"toolUse": {"input": "{"}},
            "current_tool_use": {**TOOL_USE, "input": "{"},
        },
    ),
    (
        "ReasoningTextStreamEvent(delta=, reasoning_text=)",
        lambda: seams.ReasoningTextStreamEvent(
            delta={"reasoningContent": {"text": "hm"}}, reasoning_text="hm"
        ),
        {"reasoningText": "hm", "delta": {"reasoningContent": {"text": "hm"}}, "reasoning": True},
    ),
    (
        "ReasoningSignatureStreamEvent(delta=, reasoning_signature=)",
        lambda: seams.ReasoningSignatureStreamEvent(
            delta={"reasoningContent": {"signature": "s"}}, reasoning_signature="s"
        ),
        {
            "reasoning_signature": "s",
            "delta": {"reasoningContent": {"signature": "s"}},
            "reasoning": True,
        },
    ),
    (
        "ReasoningRedactedContentStreamEvent(delta=, redacted_content=)",
        lambda: seams.ReasoningRedactedContentStreamEvent(
            delta={"reasoningContent": {"redactedContent": b"x"}}, redacted_content=b"x"
        ),
        {
            "reasoningRedactedContent": b"x",
            "delta": {"reasoningContent": {"redactedContent": b"x"}},
            "reasoning": True,
        },
    ),
    ("ModelMessageEvent(message)", lambda: seams.ModelMessageEvent(MESSAGE), {"message": MESSAGE}),
    (
        "ToolStreamEvent(tool_use, data)",
        lambda: seams.ToolStreamEvent(TOOL_USE, 50),
        {"type": "tool_stream", "tool_stream_event": {"tool_use": TOOL_USE, "data": 50}},
    ),
    (
        "ToolInterruptEvent(tool_use, interrupts)",
        lambda: seams.ToolInterruptEvent(TOOL_USE, []),
        {"tool_interrupt_event": {"tool_use": TOOL_USE, "interrupts": []}},
    ),
]


@pytest.mark.parametrize(("what", "build", "expected"), SHAPES, ids=[s[0] for s in SHAPES])
def test_each_event_class_has_the_payload_translate_reads(
    what: str, build: Any, expected: dict[str, Any]
) -> None:
    try:
        built = payload(build())
    except TypeError as error:
        pytest.fail(moved(f"the constructor {what} ({error})"))
    assert built == expected, moved(f"the payload of {what}")


def test_the_pass_stop_event_carries_the_seven_part_stop_tuple() -> None:
    metrics = EventLoopMetrics()
    interrupts = [HostInterrupt(id="i", name="n")]
    event = seams.EventLoopStopEvent("end_turn", MESSAGE, metrics, {}, interrupts, None, None)
    assert payload(event) == {"stop": ("end_turn", MESSAGE, metrics, {}, interrupts, None, None)}, (
        moved("EventLoopStopEvent's stop tuple")
    )
    for figure in ("accumulated_usage", "accumulated_metrics", "agent_invocations"):
        assert hasattr(metrics, figure), moved(f"EventLoopMetrics.{figure}")


def test_the_agent_stream_stage_token_is_a_strands_stage_ending_in_the_stop_event() -> None:
    stage = seams.AgentStreamStage
    assert isinstance(stage, HostMiddlewareStage), moved("AgentStreamStage")
    assert stage.result_event is seams.EventLoopStopEvent, moved("AgentStreamStage's result")


# ---- the bridge reaches strands' private names through the seam alone -----------------------

_STRANDS_BRIDGE = Path(seams.__file__).parent
_BRIDGES = _STRANDS_BRIDGE.parent


def test_the_strands_bridge_imports_no_private_strands_module_outside_the_seam() -> None:
    for path in sorted(_STRANDS_BRIDGE.glob("*.py")):
        if path.name == "_seams.py":
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            for module in modules:
                parts = module.split(".")
                if parts[0] == "strands":
                    assert not any(part.startswith("_") for part in parts), (path.name, module)


def test_no_bridge_reassigns_a_class_or_a_constructor() -> None:
    for path in sorted(_BRIDGES.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute):
                    assert target.attr not in ("__class__", "__init__"), (path, node.lineno)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
            ):
                assert node.args[1].value not in ("__class__", "__init__"), (path, node.lineno)
