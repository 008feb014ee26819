"""Human-in-the-loop on the reference agent: pause, resume, lifetime, and bad resumes."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncGenerator
from typing import Any, ClassVar

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    MiddlewareNext,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent, AgentResult
from strands_middleware.catalog import ToolApproval
from strands_middleware.exceptions import InterruptResumeError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.host import InterruptState
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

deleted: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


@ExecuteToolStage.wrap
async def approval(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    answer = context.interrupt("approve-delete", reason={"input": context.tool_use["input"]})
    if answer.response != "yes":
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "error",
                "content": [{"text": f"denied by a human: {answer.response}"}],
            }
        )
        return
    async for event in next_fn(context):
        yield event


def respond(result: AgentResult, response: Any) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": response}}
        for interrupt in result.interrupts
    ]


def make_agent(*turns: Any) -> Agent:
    deleted.clear()
    return Agent(model=ScriptedModel(list(turns)), tools=[delete], middleware=[approval])


def test_first_call_pauses_with_the_spec_id() -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"))
    result = agent("clean up")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert (
        interrupt.id
        == f"v1:middleware_execute_tool:t1:{uuid.uuid5(uuid.NAMESPACE_OID, 'approve-delete')}"
    )
    assert interrupt.reason == {"input": {"path": "/a"}}
    assert deleted == []
    assert agent.interrupt_state.activated


def test_resume_with_yes_runs_the_tool_without_calling_the_model_again() -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("done"))
    paused = agent("clean up")
    result = agent(respond(paused, "yes"))
    assert result.stop_reason == "end_turn"
    assert deleted == ["/a"]
    assert not agent.interrupt_state.activated
    model = agent.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 2
    roles = [m["role"] for m in agent.messages]
    assert roles == ["user", "assistant", "user", "assistant"]


def test_resume_with_no_denies_and_the_model_reads_the_denial() -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok"))
    agent(respond(agent("clean up"), "no"))
    assert deleted == []
    result_block = agent.messages[2]["content"][0]
    assert result_block["toolResult"]["content"] == [{"text": "denied by a human: no"}]  # type: ignore[typeddict-item]


def test_the_next_cycle_asks_again() -> None:
    agent = make_agent(
        tool_turn("delete", {"path": "/a"}, tool_use_id="t1"),
        text_turn("done"),
        tool_turn("delete", {"path": "/b"}, tool_use_id="t2"),
    )
    agent(respond(agent("first"), "yes"))
    again = agent("second")
    assert again.stop_reason == "interrupt"
    assert deleted == ["/a"]


def test_a_fresh_prompt_while_an_interrupt_is_owed_is_refused_and_changes_nothing() -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"))
    agent("clean up")
    before_messages = json.dumps(agent.messages)
    before_state = agent.interrupt_state.to_dict()
    with pytest.raises(InterruptResumeError):
        agent("something else")
    assert json.dumps(agent.messages) == before_messages
    assert agent.interrupt_state.to_dict() == before_state


@pytest.mark.parametrize(
    "prompt",
    [
        [{"interruptResponse": {"interruptId": "v1:nope", "response": "yes"}}],
        [{"interruptResponse": {"response": "yes"}}],
        [{"interruptResponse": "yes"}],
    ],
)
def test_malformed_or_unknown_responses_are_refused_and_change_nothing(prompt: Any) -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("x"))
    agent("clean up")
    before = agent.interrupt_state.to_dict()
    with pytest.raises((InterruptResumeError, TypeError)):
        agent(prompt)
    assert agent.interrupt_state.to_dict() == before
    assert deleted == []


def test_a_resume_when_nothing_is_owed_is_refused() -> None:
    agent = make_agent()
    with pytest.raises(InterruptResumeError):
        agent([{"interruptResponse": {"interruptId": "x", "response": "yes"}}])
    assert agent.messages == []


def test_a_paused_run_resumes_in_another_process_from_json() -> None:
    agent = make_agent(tool_turn("delete", {"path": "/a"}, tool_use_id="t1"))
    paused = agent("clean up")
    saved = json.dumps({"messages": agent.messages, "state": agent.interrupt_state.to_dict()})

    loaded = json.loads(saved)
    revived = Agent(
        model=ScriptedModel([text_turn("done")]),
        tools=[delete],
        middleware=[approval],
        messages=loaded["messages"],
        interrupt_state=InterruptState.from_dict(loaded["state"]),
    )
    result = revived(respond(paused, "yes"))
    assert result.stop_reason == "end_turn"
    assert deleted == ["/a"]


def test_a_tool_raised_interrupt_pauses_and_resumes_into_the_tool() -> None:
    from strands_middleware.exceptions import InterruptException
    from strands_middleware.interrupts import Interrupt

    answers: list[Any] = []

    class AskingTool:
        tool_name = "ask"
        tool_spec: ClassVar[Any] = {
            "name": "ask",
            "description": "asks",
            "inputSchema": {"json": {}},
        }

        def __init__(self, agent_ref: list[Agent]) -> None:
            self.agent_ref = agent_ref

        async def stream(
            self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any
        ) -> AsyncGenerator[Any, None]:
            interrupt_id = f"v1:tool_call:{tool_use['toolUseId']}:ask"
            existing = self.agent_ref[0].interrupt_state.interrupts.get(interrupt_id)
            if existing is None or existing.response is None:
                raise InterruptException(Interrupt(id=interrupt_id, name="ask"))
            answers.append(existing.response)
            yield ToolResultEvent(
                {
                    "toolUseId": tool_use["toolUseId"],
                    "status": "success",
                    "content": [{"text": "ok"}],
                }
            )

    holder: list[Agent] = []
    agent = Agent(
        model=ScriptedModel([tool_turn("ask", {}, tool_use_id="t1"), text_turn("thanks")]),
        tools=[AskingTool(holder)],  # type: ignore[list-item]
    )
    holder.append(agent)
    paused = agent("go")
    assert paused.stop_reason == "interrupt"
    assert [i.name for i in paused.interrupts] == ["ask"]
    assert str(agent(respond(paused, 42))) == "thanks"
    assert answers == [42]


def test_an_agent_stream_gate_asks_once_per_cycle() -> None:
    asked: list[Any] = []

    @AgentStreamStage.wrap
    async def budget_gate(
        context: AgentStreamContext, next_fn: MiddlewareNext[AgentStreamContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        asked.append(context.interrupt("approve-run").response)
        async for event in next_fn(context):
            yield event

    agent = Agent(
        model=ScriptedModel([text_turn("one"), text_turn("two")]), middleware=[budget_gate]
    )
    paused = agent("first")
    assert paused.stop_reason == "interrupt"
    assert paused.interrupts[0].id.startswith("v1:middleware_agent_stream:")
    assert str(agent(respond(paused, "go"))) == "one"
    assert not agent.interrupt_state.activated
    # The answer does not become a standing approval.
    assert agent("second").stop_reason == "interrupt"
    assert asked == ["go"]


class TestGatesFailClosedOnTheAgent:
    """The issue's scenarios end to end: a gate that is bypassed never lets its tool run."""

    def test_a_gate_whose_broad_except_swallows_the_interrupt_does_not_run_the_tool(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        @ExecuteToolStage.wrap
        async def careless(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            try:
                answer = context.interrupt("approve-delete").response
            except Exception:
                answer = "yes"  # "if asking fails, go ahead": the pause is caught as a failure
            if answer != "yes":
                yield ToolResultEvent.error(context.tool_use["toolUseId"], "denied")
                return
            async for event in next_fn(context):
                yield event

        deleted.clear()
        model = ScriptedModel(
            [tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")]
        )
        agent = Agent(model=model, tools=[delete], middleware=[careless])
        with caplog.at_level(logging.ERROR, logger="strands_middleware"):
            result = agent("clean up")
        assert deleted == []
        assert result.stop_reason == "end_turn"
        text = agent.messages[2]["content"][0]["toolResult"]["content"][0]["text"]  # type: ignore[typeddict-item]
        assert "interrupt 'approve-delete'" in text and "never reached the executor" in text
        assert "careless (executeTool.Wrap)" in caplog.text

    def test_an_interrupt_after_next_fn_is_refused_and_the_tool_runs_once(self) -> None:
        @ExecuteToolStage.wrap
        async def confirm_after(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn(context):
                if isinstance(event, ToolResultEvent):
                    context.interrupt("confirm")
                yield event

        deleted.clear()
        model = ScriptedModel(
            [tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")]
        )
        agent = Agent(model=model, tools=[delete], middleware=[confirm_after])
        result = agent("clean up")
        assert result.stop_reason == "end_turn"
        assert deleted == ["/a"]
        assert not agent.interrupt_state.activated
        text = agent.messages[2]["content"][0]["toolResult"]["content"][0]["text"]  # type: ignore[typeddict-item]
        assert "interrupt 'confirm'" in text and "after the tool ran" in text

    def test_two_approval_gates_with_one_name_do_not_share_an_answer(self) -> None:
        deleted.clear()
        model = ScriptedModel(
            [tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")]
        )
        agent = Agent(
            model=model,
            tools=[delete],
            # Named by functions: one name as a string is refused at registration already.
            middleware=[
                ToolApproval(tools=["delete"], name=lambda context: "approve-tool-call"),
                ToolApproval(tools=["delete"], name=lambda context: "approve-tool-call"),
            ],
        )
        paused = agent("clean up")
        assert len(paused.interrupts) == 1
        agent(respond(paused, "approve"))
        assert deleted == []
        text = agent.messages[2]["content"][0]["toolResult"]["content"][0]["text"]  # type: ignore[typeddict-item]
        assert "two handlers asked interrupt 'approve-tool-call'" in text

    def test_two_approval_gates_with_their_own_names_ask_both(self) -> None:
        deleted.clear()
        model = ScriptedModel(
            [tool_turn("delete", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")]
        )
        agent = Agent(
            model=model,
            tools=[delete],
            middleware=[ToolApproval(name="security"), ToolApproval(name="owner")],
        )
        first = agent("clean up")
        second = agent(respond(first, "approve"))
        assert [i.name for i in second.interrupts] == ["owner"]
        assert agent(respond(second, "approve")).stop_reason == "end_turn"
        assert deleted == ["/a"]
