"""Mistakes a user can make when registering are said at registration, not at the first call."""

from __future__ import annotations

from typing import Any

import pytest

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.agent import Agent
from strands_middleware.catalog import Retry, ToolApproval
from strands_middleware.testing import ScriptedModel


def agent() -> Agent:
    return Agent(model=ScriptedModel([]))


def test_a_class_instead_of_an_instance_gets_a_hint_that_applies() -> None:
    with pytest.raises(TypeError) as raised:
        agent().use(Retry)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    message = str(raised.value)
    assert "Retry is a class: register an instance of it, e.g. use(Retry())" in message
    assert "bare handler" not in message


def test_a_list_of_catalog_items_inside_a_list_gets_a_hint_that_applies() -> None:
    nested: Any = [[Retry()]]
    with pytest.raises(TypeError, match=r"flattens one level only.*agent\.use\(\*items\)"):
        agent().use(*nested)


def test_a_list_of_middleware_sources_registers_each_in_order() -> None:
    first, second = Retry(), ToolApproval()
    host = agent().use([*first, *second])
    registry = host.middleware_registry
    assert [h.__qualname__ for _, h in registry.handlers(InvokeModelStage)] == [
        "Retry[invokeModel]"
    ]
    assert [h.__qualname__ for _, h in registry.handlers(ExecuteToolStage)] == [
        "ToolApproval[executeTool]"
    ]


def test_two_gates_under_one_name_are_refused_when_the_second_is_registered() -> None:
    host = agent().use(ToolApproval(tools=["delete_file", "send_mail"]))
    before = host.middleware_registry.handlers(ExecuteToolStage)
    with pytest.raises(ValueError) as raised:
        host.use(ToolApproval(tools=["send_mail"]))
    assert str(raised.value).startswith(
        "two ToolApproval gates ask under the name 'approve-tool-call' for the tool(s) send_mail"
    )
    assert 'ToolApproval(name="security-review")' in str(raised.value)
    # Nothing was registered, and a gate with its own name is accepted.
    assert host.middleware_registry.handlers(ExecuteToolStage) == before
    host.use(ToolApproval(tools=["send_mail"], name="security-review"))


def test_two_gates_under_one_name_in_one_call_or_the_constructor_are_refused() -> None:
    with pytest.raises(ValueError, match=r"for the same calls"):
        Agent(model=ScriptedModel([]), middleware=[ToolApproval(), ToolApproval()])
    gate = ToolApproval()
    with pytest.raises(ValueError, match=r"two ToolApproval gates"):
        agent().use(gate, gate)


def test_gates_under_one_name_for_different_tools_are_accepted() -> None:
    host = agent().use(ToolApproval(tools=["delete_file"]), ToolApproval(tools=["send_mail"]))
    assert len(host.middleware_registry.handlers(ExecuteToolStage)) == 2
