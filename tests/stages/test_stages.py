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
    messages_on_read,
    messages_read,
    messages_source,
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


def test_messages_made_on_read_are_made_once_and_only_when_read() -> None:
    made: list[int] = []

    def translate() -> list[Any]:
        made.append(1)
        return [{"role": "user", "content": [{"text": "made"}]}]

    context = model_context()
    messages_on_read(context, translate)
    source = messages_source(context)
    copy = context.replace(system_prompt=None)
    assert made == []  # neither a copy nor the source makes them
    assert not messages_read(context)
    assert not messages_read(copy)
    messages = copy.messages
    assert made == [1]
    assert messages_read(context)  # the copy's read made them for both
    assert context.messages is messages
    assert source() is messages
    assert made == [1]
    assert dataclasses.replace(context).messages is messages


def test_messages_made_on_read_then_replaced_are_the_replacement() -> None:
    context = model_context()
    messages_on_read(context, lambda: pytest.fail("the replaced messages were made"))
    replaced = context.replace(messages=[])
    assert replaced.messages == []
    assert messages_read(replaced)
    assert not messages_read(context)
    context.messages = [{"role": "user", "content": [{"text": "set"}]}]
    assert messages_read(context)
    assert context.messages[0]["content"] == [{"text": "set"}]


def test_a_context_with_messages_made_on_read_copies_and_compares_with_them() -> None:
    context = model_context()
    messages_on_read(context, lambda: [{"role": "user", "content": [{"text": "made"}]}])
    deep = copy.deepcopy(context)
    assert deep.messages == [{"role": "user", "content": [{"text": "made"}]}]
    assert deep.messages is not context.messages
    shallow = copy.copy(context)
    assert shallow.messages is context.messages
    unpickled = pickle.loads(pickle.dumps(context))  # the making function is not pickled
    assert unpickled.messages == context.messages
    assert context == dataclasses.replace(context)
    assert "'made'" in repr(context)


def test_messages_stay_a_field_without_a_default() -> None:
    [field] = [f for f in dataclasses.fields(InvokeModelContext) if f.name == "messages"]
    assert field.default is dataclasses.MISSING
    with pytest.raises(AttributeError):
        InvokeModelContext.messages
    with pytest.raises(TypeError, match="messages"):
        InvokeModelContext(  # type: ignore[call-arg]
            agent=None,
            system_prompt=None,
            tool_specs=[],
            tool_choice=None,
            invocation_state={},
            model=None,  # type: ignore[arg-type]
        )


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
