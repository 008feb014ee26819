"""The built-in stages and their contexts."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading
import uuid
from typing import Any

import pytest

import strands_middleware
from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolResult,
    ExecuteToolStage,
    Interrupt,
    InterruptException,
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
    ModelStopReason,
    ToolResultEvent,
    testing,
)
from strands_middleware.events import EventLoopStopEvent
from strands_middleware.experimental import AgentStreamContext, AgentStreamResult, AgentStreamStage
from strands_middleware.stages import split_system_prompt
from strands_middleware.stages._invoke_model import (
    field_read,
    field_source,
    made_on_read,
    project_on_read,
)


def model_context() -> InvokeModelContext:
    return testing.model_context(
        messages=[{"role": "user", "content": [{"text": "hi"}]}],
        system_prompt="be brief",
        invocation_state={"k": 1},
    )


def tool_context() -> ExecuteToolContext:
    return testing.tool_context("delete", {"path": "/tmp"}, tool_use_id="t-1")


def tool_context_reading(interrupts: dict[str, Interrupt]) -> ExecuteToolContext:
    """A tool call whose ``interrupt()`` reads ``interrupts``, the lookup a host hands it."""
    return ExecuteToolContext(
        agent=None,
        tool=None,
        tool_use={"toolUseId": "t-1", "name": "delete", "input": {"path": "/tmp"}},
        invocation_state={},
        _interrupts=interrupts,
    )


def test_stages_name_their_result_events() -> None:
    assert InvokeModelStage.result_event is ModelStopReason
    assert ExecuteToolStage.result_event is ToolResultEvent
    assert AgentStreamStage.result_event is EventLoopStopEvent
    # strands' spelling: result_type is the wrapper Output handlers receive
    assert InvokeModelStage.result_type is InvokeModelResult
    assert ExecuteToolStage.result_type is ExecuteToolResult
    assert AgentStreamStage.result_type is AgentStreamResult
    assert (InvokeModelStage.name, ExecuteToolStage.name, AgentStreamStage.name) == (
        "invokeModel",
        "executeTool",
        "agentStream",
    )


def test_agent_stream_stage_is_provisional_and_not_exported_from_the_root() -> None:
    assert not hasattr(strands_middleware, "AgentStreamStage")
    assert "AgentStreamStage" not in strands_middleware.__all__


def test_replace_changes_only_the_fields_passed() -> None:
    context = model_context()
    replaced = context.replace(system_prompt="other")
    assert replaced is not context
    assert replaced.system_prompt == "other"
    assert context.system_prompt == "be brief"
    assert replaced.messages is context.messages
    assert replaced.invocation_state is context.invocation_state


def test_replace_takes_an_explicit_none() -> None:
    assert model_context().replace(system_prompt=None).system_prompt is None


def test_replace_is_keyword_only_and_refuses_unknown_fields() -> None:
    context = model_context()
    with pytest.raises(TypeError):
        context.replace("other")  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        context.replace(no_such_field=1)  # type: ignore[call-arg]


def test_dataclasses_replace_still_works() -> None:
    assert dataclasses.replace(model_context(), tool_choice={"auto": {}}).tool_choice == {
        "auto": {}
    }
    assert dataclasses.replace(tool_context(), tool=None).tool_use["toolUseId"] == "t-1"


def test_projected_input_tokens_is_a_field_with_none_by_default() -> None:
    context = model_context()
    assert context.projected_input_tokens is None
    assert [f.name for f in dataclasses.fields(context)][-1] == "projected_input_tokens"
    context.projected_input_tokens = 12
    assert context.replace(system_prompt=None).projected_input_tokens == 12
    assert context == dataclasses.replace(context)
    assert "projected_input_tokens=12" in repr(context)


def test_a_projection_made_on_read_is_made_once_and_only_when_read() -> None:
    made: list[int] = []

    def estimate() -> int:
        made.append(1)
        return 30

    context = model_context()
    project_on_read(context, estimate)
    copy = context.replace(system_prompt=None)
    assert made == []  # a copy shares the projection, made or not
    assert copy.projected_input_tokens == 30
    assert context.projected_input_tokens == 30
    assert made == [1]
    assert dataclasses.replace(context).projected_input_tokens == 30
    assert "projected_input_tokens=30" in repr(context)

    untouched = model_context()
    project_on_read(untouched, estimate)
    untouched.projected_input_tokens = 5  # a handler's own figure: the estimate is never made
    assert untouched.projected_input_tokens == 5
    assert made == [1]


ON_READ = ["messages", "tool_specs"]
MADE: dict[str, Any] = {
    "messages": [{"role": "user", "content": [{"text": "made"}]}],
    "tool_specs": [{"name": "made", "description": "", "inputSchema": {"json": {}}}],
}


def made_value(name: str) -> Any:
    return copy.deepcopy(MADE[name])


@pytest.mark.parametrize("name", ON_READ)
def test_a_field_made_on_read_is_made_once_and_only_when_read(name: Any) -> None:
    made: list[int] = []

    def translate() -> Any:
        made.append(1)
        return made_value(name)

    context = model_context()
    made_on_read(context, name, translate)
    source = field_source(context, name)
    other = "tool_specs" if name == "messages" else "messages"
    made_on_read(context, other, lambda: pytest.fail(f"{other} were made"))
    copied = context.replace(system_prompt=None)
    assert made == []  # neither a copy nor the source makes it
    assert not field_read(context, name)
    assert not field_read(copied, name)
    value = getattr(copied, name)
    assert made == [1]
    assert value == MADE[name]
    assert field_read(context, name)  # the copy's read made it for both
    assert getattr(context, name) is value
    assert source() is value
    assert made == [1]
    assert not field_read(context, other)  # each field is made on its own


@pytest.mark.parametrize("name", ON_READ)
def test_a_field_made_on_read_then_replaced_is_the_replacement(name: Any) -> None:
    context = model_context()
    made_on_read(context, name, lambda: pytest.fail(f"the replaced {name} were made"))
    replaced = context.replace(**{name: []})
    assert getattr(replaced, name) == []
    assert field_read(replaced, name)
    assert not field_read(context, name)
    setattr(context, name, made_value(name))
    assert field_read(context, name)
    assert getattr(context, name) == MADE[name]


@pytest.mark.parametrize("name", ON_READ)
def test_a_context_with_a_field_made_on_read_copies_and_compares_with_it(name: Any) -> None:
    context = model_context()
    made_on_read(context, name, lambda: made_value(name))
    deep = copy.deepcopy(context)
    assert getattr(deep, name) == MADE[name]
    assert getattr(deep, name) is not getattr(context, name)
    assert copy.copy(context).__dict__[name] is getattr(context, name)
    assert dataclasses.replace(context).__dict__[name] is getattr(context, name)
    unpickled = pickle.loads(pickle.dumps(context))  # the making function is not pickled
    assert getattr(unpickled, name) == MADE[name]
    assert context == dataclasses.replace(context)
    assert "'made'" in repr(context)


def test_an_attribute_error_while_making_a_field_is_not_a_missing_field() -> None:
    def broken() -> Any:
        raise AttributeError("'NoneType' object has no attribute 'content'")

    context = model_context()
    made_on_read(context, "messages", broken)
    with pytest.raises(RuntimeError, match="making the context's messages failed: 'NoneType'"):
        getattr(context, "messages", None)


@pytest.mark.parametrize("name", ON_READ)
def test_fields_that_may_be_made_on_read_stay_fields_without_a_default(name: str) -> None:
    [field] = [f for f in dataclasses.fields(InvokeModelContext) if f.name == name]
    assert field.default is dataclasses.MISSING
    with pytest.raises(AttributeError):
        getattr(InvokeModelContext, name)
    given: dict[str, Any] = {
        "agent": None,
        "messages": [],
        "system_prompt": None,
        "tool_specs": [],
        "tool_choice": None,
        "invocation_state": {},
        "model": None,
    }
    del given[name]
    with pytest.raises(TypeError, match=name):
        InvokeModelContext(**given)


def test_tool_context_replace_keeps_its_interrupt_lookup() -> None:
    answered = Interrupt(id="x", name="n", response="yes")
    context = tool_context_reading({"x": answered})
    assert context.replace(invocation_state={"a": 1})._interrupts == {"x": answered}


class TestSplitSystemPrompt:
    def test_none(self) -> None:
        assert split_system_prompt(None) == (None, None)

    def test_a_string_is_itself_and_one_block(self) -> None:
        assert split_system_prompt("be brief") == ("be brief", [{"text": "be brief"}])

    def test_blocks_join_their_text_and_keep_the_list(self) -> None:
        blocks = [{"text": "one"}, {"cachePoint": {"type": "default"}}, {"text": "two"}]
        text, content = split_system_prompt(blocks)  # type: ignore[arg-type]
        assert text == "one\n\ntwo"
        assert content == blocks
        assert content is not blocks

    def test_blocks_without_text(self) -> None:
        assert split_system_prompt([{"cachePoint": {"type": "default"}}]) == (
            None,
            [{"cachePoint": {"type": "default"}}],
        )


class TestToolInterrupt:
    def test_first_call_raises_with_the_deterministic_id(self) -> None:
        with pytest.raises(InterruptException) as caught:
            tool_context().interrupt("approve", reason={"path": "/tmp"})
        interrupt = caught.value.interrupt
        expected_hash = uuid.uuid5(uuid.NAMESPACE_OID, "approve")
        assert interrupt.id == f"v1:middleware_execute_tool:t-1:{expected_hash}"
        assert interrupt.name == "approve"
        assert interrupt.reason == {"path": "/tmp"}

    def test_a_human_answer_is_returned_wrapped(self) -> None:
        with pytest.raises(InterruptException) as caught:
            tool_context().interrupt("approve")
        interrupt_id = caught.value.interrupt.id
        answered = tool_context_reading(
            {interrupt_id: Interrupt(interrupt_id, "approve", response="y")}
        )
        assert answered.interrupt("approve").response == "y"

    def test_a_preemptive_response_is_used_when_no_answer_exists(self) -> None:
        assert tool_context().interrupt("approve", response="auto").response == "auto"

    def test_interrupt_never_writes_the_lookup(self) -> None:
        lookup: dict[str, Interrupt] = {}
        with pytest.raises(InterruptException):
            tool_context_reading(lookup).interrupt("approve")
        assert lookup == {}


def test_agent_stream_interrupt_id_has_no_scope() -> None:
    context = AgentStreamContext(agent=None, messages=[], invocation_state={})
    with pytest.raises(InterruptException) as caught:
        context.interrupt("gate")
    assert caught.value.interrupt.id == (
        f"v1:middleware_agent_stream:{uuid.uuid5(uuid.NAMESPACE_OID, 'gate')}"
    )


def test_cancel_signal_is_not_shown_in_repr() -> None:
    context = tool_context()
    assert isinstance(context.cancel_signal, threading.Event)
    assert "cancel_signal" not in repr(context)
