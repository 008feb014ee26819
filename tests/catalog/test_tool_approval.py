"""ToolApproval: pause before the tool, resume with approve / deny / edit, and fail closed."""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    MiddlewareRegistry,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent, AgentResult
from strands_middleware.catalog._tool_approval import ACCEPTED_ANSWERS, ToolApproval
from strands_middleware.content import Message
from strands_middleware.exceptions import InterruptResumeError
from strands_middleware.host import InterruptState
from strands_middleware.interrupts import execute_tool_interrupt_id
from strands_middleware.testing import ScriptedModel, text_turn, tool_context, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory

ran: list[tuple[str, str]] = []


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(("delete_file", path))
    return f"deleted {path}"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    ran.append(("read_file", path))
    return f"contents of {path}"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


def respond(result: AgentResult, *answers: Any) -> list[dict[str, Any]]:
    """One response per interrupt: the answers in order, or the single answer for all."""
    given = answers if len(answers) > 1 else answers * len(result.interrupts)
    return [
        {"interruptResponse": {"interruptId": interrupt.id, "response": answer}}
        for interrupt, answer in zip(result.interrupts, given, strict=True)
    ]


def approval_agent(make_agent: AgentFactory, *turns: Message, **options: Any) -> Any:
    return make_agent(
        model=ScriptedModel(list(turns)),
        tools=[delete_file, read_file],
        middleware=[ToolApproval(**options)],
    )


def tool_results(agent: Any) -> list[dict[str, Any]]:
    """The tool results of the agent's history, in order."""
    return [
        dict(block["toolResult"])
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block
    ]


def two_calls() -> Message:
    return {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/a"}}},
            {"toolUse": {"toolUseId": "t2", "name": "delete_file", "input": {"path": "/b"}}},
        ],
    }


# ---- pausing ------------------------------------------------------------------------------------


def test_the_first_call_pauses_before_the_tool_runs_with_the_call_as_reason(
    make_agent: AgentFactory,
) -> None:
    agent = approval_agent(make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"))
    result = agent("clean up")
    assert result.stop_reason == "interrupt"
    [interrupt] = result.interrupts
    assert interrupt.name == "approve-tool-call"
    assert interrupt.id == execute_tool_interrupt_id("t1", "approve-tool-call")
    assert interrupt.reason == {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/a"}}
    assert ran == []


def test_two_calls_in_one_turn_get_two_interrupts_and_separate_decisions(
    make_agent: AgentFactory,
) -> None:
    agent = approval_agent(make_agent, two_calls(), text_turn("done"))
    paused = agent("clean up")
    assert [i.id for i in paused.interrupts] == [
        execute_tool_interrupt_id("t1", "approve-tool-call"),
        execute_tool_interrupt_id("t2", "approve-tool-call"),
    ]
    agent(respond(paused, "approve", {"decision": "deny", "message": "keep b"}))
    assert ran == [("delete_file", "/a")]
    [first, second] = tool_results(agent)
    assert first["status"] == "success"
    assert second["status"] == "error"
    assert second["content"] == [
        {"text": "A human denied this call to 'delete_file'. Their message: keep b"}
    ]


# ---- answers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer", ["approve", True, {"decision": "approve"}, " Approve ", {"decision": "APPROVE"}]
)
def test_approve_runs_the_tool_without_asking_the_model_again(
    make_agent: AgentFactory, answer: Any
) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    paused = agent("clean up")
    result = agent(respond(paused, answer))
    assert result.stop_reason == "end_turn"
    model = agent.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 2
    assert ran == [("delete_file", "/a")]
    assert tool_results(agent)[0]["content"] == [{"text": "deleted /a"}]


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ("deny", "A human denied this call to 'delete_file'."),
        (" DENY ", "A human denied this call to 'delete_file'."),
        (False, "A human denied this call to 'delete_file'."),
        ({"decision": "deny"}, "A human denied this call to 'delete_file'."),
        (
            {"decision": "deny", "message": "not today"},
            "A human denied this call to 'delete_file'. Their message: not today",
        ),
    ],
)
def test_deny_is_an_error_result_the_model_reads(
    make_agent: AgentFactory, answer: Any, text: str
) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    agent(respond(agent("clean up"), answer))
    assert ran == []
    [result] = tool_results(agent)
    assert result == {"toolUseId": "t1", "status": "error", "content": [{"text": text}]}
    model = agent.model
    assert isinstance(model, ScriptedModel)
    sent = model.requests[1].messages[-1]["content"][0]
    assert sent["toolResult"]["content"] == [{"text": text}]


def test_edit_runs_the_tool_with_the_new_input_and_keeps_the_models_request(
    make_agent: AgentFactory,
) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    paused = agent("clean up")
    agent(respond(paused, {"decision": "edit", "input": {"path": "/tmp/a"}}))
    assert ran == [("delete_file", "/tmp/a")]
    assert tool_results(agent)[0]["content"] == [{"text": "deleted /tmp/a"}]
    assert agent.messages[1]["content"][0]["toolUse"]["input"] == {"path": "/a"}


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("yes", "the answer 'yes' is not an approval decision."),
        (1, "the answer 1 is not an approval decision."),
        (["approve"], "the answer ['approve'] is not an approval decision."),
        ({"decision": "maybe"}, "has no valid 'decision' (approve, deny or edit)."),
        ({"approve": True}, "has no valid 'decision' (approve, deny or edit)."),
        ({"decision": "deny", "mesage": "x"}, "has unexpected key(s) ['mesage']."),
        ({"decision": "approve", "input": {}}, "has unexpected key(s) ['input']."),
        ({"decision": "deny", "message": 5}, "has a 'message' that is not a string."),
        ({"decision": "edit"}, "needs an 'input' object holding the new arguments."),
        ({"decision": "edit", "input": "/b"}, "needs an 'input' object holding the new arguments."),
    ],
)
def test_any_other_answer_is_refused_at_resume_and_says_what_is_accepted(
    make_agent: AgentFactory, answer: Any, problem: str
) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    paused = agent("clean up")
    with pytest.raises(InterruptResumeError, match=re.escape(problem)) as refused:
        agent(respond(paused, answer))
    assert str(refused.value).endswith(f"Accepted: {ACCEPTED_ANSWERS}.")
    assert refused.value.interrupt_ids == (paused.interrupts[0].id,)
    assert ran == []


def test_a_long_answer_is_shortened_in_the_refusal(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("ok")
    )
    paused = agent("clean up")
    with pytest.raises(InterruptResumeError) as refused:
        agent(respond(paused, "x" * 1000))
    assert "'" + "x" * 199 + "... is not an approval decision." in str(refused.value)  # cut at 200


@pytest.mark.parametrize("answer", ["yes", {"approved": True}])
def test_every_host_refuses_a_wrong_answer_and_the_run_stays_paused_and_answerable(
    make_agent: AgentFactory, answer: Any
) -> None:
    agent = approval_agent(
        make_agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("done")
    )
    paused = agent("clean up")
    messages_before = copy.deepcopy(list(agent.messages))

    with pytest.raises(InterruptResumeError) as refused:
        agent(respond(paused, answer))
    message = str(refused.value)
    assert message.startswith(
        "an answer is not one the middleware that asked accepts, so nothing was resumed and the "
        "run is still paused; send the answers again, corrected: "
        f"{paused.interrupts[0].id}: ToolApproval 'approve-tool-call': the answer {answer!r}"
    )
    assert message.endswith(f"Accepted: {ACCEPTED_ANSWERS}.")

    # Nothing ran, the model was not asked, the history is as it was; a right answer works.
    assert ran == []
    model = agent.model
    assert isinstance(model, ScriptedModel) and len(model.requests) == 1
    assert list(agent.messages) == messages_before
    result = agent(respond(paused, "approve"))
    assert result.stop_reason == "end_turn"
    assert str(result).strip() == "done"
    assert ran == [("delete_file", "/a")]
    assert tool_results(agent)[0]["content"] == [{"text": "deleted /a"}]


@pytest.mark.parametrize("answer", ["yes", "ok", "Yes", "approved", 1, {"approved": True}])
def test_a_wrong_answer_is_refused_at_resume_and_the_run_stays_paused_and_answerable(
    answer: Any,
) -> None:
    agent = Agent(
        model=ScriptedModel(
            [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("done")]
        ),
        tools=[delete_file, read_file],
        middleware=[ToolApproval()],
    )
    paused = agent("clean up")
    state_before = agent.interrupt_state.to_dict()
    messages_before = copy.deepcopy(agent.messages)

    with pytest.raises(InterruptResumeError) as refused:
        agent(respond(paused, answer))
    message = str(refused.value)
    assert "nothing was resumed and the run is still paused" in message
    assert f"ToolApproval 'approve-tool-call': the answer {answer!r}" in message
    assert message.endswith(f"Accepted: {ACCEPTED_ANSWERS}.")
    assert refused.value.interrupt_ids == (paused.interrupts[0].id,)

    # Nothing ran and nothing changed: the same interrupts are owed, and a right answer works.
    assert ran == []
    assert agent.interrupt_state.to_dict() == state_before
    assert agent.messages == messages_before
    assert str(agent(respond(paused, "approve"))).strip() == "done"
    assert ran == [("delete_file", "/a")]


def test_a_gate_named_by_a_function_knows_its_answers_at_resume_too() -> None:
    agent = Agent(
        model=ScriptedModel([tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1")]),
        tools=[delete_file],
        middleware=[ToolApproval(name=lambda context: f"approve-{context.tool_use['name']}")],
    )
    paused = agent("clean up")
    with pytest.raises(InterruptResumeError, match=r"ToolApproval 'approve-delete_file'"):
        agent(respond(paused, "yes"))
    assert agent.interrupt_state.activated


def test_an_answer_not_checked_at_resume_still_fails_closed_when_the_gate_reads_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A gate named by a function knows its names once it has asked; restored into a new
    # process, its interrupt cannot be told apart at resume, so the gate itself refuses.
    def name(context: ExecuteToolContext) -> str:
        return f"approve-{context.tool_use['name']}"

    first = approval_agent(
        Agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), name=name
    )
    paused = first("clean up")
    revived = Agent(
        model=ScriptedModel([text_turn("ok")]),
        tools=[delete_file],
        middleware=[ToolApproval(name=name)],
        messages=first.messages,
        interrupt_state=InterruptState.from_dict(first.interrupt_state.to_dict()),
    )
    with caplog.at_level(logging.WARNING, logger="strands_middleware"):
        revived(respond(paused, "yes"))
    assert ran == []
    [result] = tool_results(revived)
    assert result["status"] == "error"
    text = result["content"][0]["text"]
    assert text == (
        f"Not run: the answer 'yes' is not an approval decision. Accepted: {ACCEPTED_ANSWERS}."
    )
    assert "ToolApproval: tool call 't1' (delete_file) not run" in caplog.text


# ---- lifetime and persistence -------------------------------------------------------------------


def test_a_new_cycle_asks_again_even_for_the_same_tool_use_id(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent,
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
        text_turn("done"),
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
    )
    agent(respond(agent("first"), "approve"))
    assert ran == [("delete_file", "/a")]
    again = agent("second")
    assert again.stop_reason == "interrupt"
    assert ran == [("delete_file", "/a")]


def test_a_later_turn_in_the_same_invocation_asks_again(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent,
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
        tool_turn("delete_file", {"path": "/b"}, tool_use_id="t2"),
        text_turn("done"),
    )
    first = agent("clean up")
    second = agent(respond(first, "approve"))
    assert second.stop_reason == "interrupt"
    assert [i.id for i in second.interrupts] == [
        execute_tool_interrupt_id("t2", "approve-tool-call")
    ]
    assert str(agent(respond(second, "approve"))) == "done"
    assert ran == [("delete_file", "/a"), ("delete_file", "/b")]


def test_a_paused_run_resumes_from_json_in_another_process() -> None:
    agent = approval_agent(Agent, tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"))
    paused = agent("clean up")
    saved = json.dumps({"messages": agent.messages, "state": agent.interrupt_state.to_dict()})

    loaded = json.loads(saved)
    revived = Agent(
        model=ScriptedModel([text_turn("done")]),
        tools=[delete_file, read_file],
        middleware=[ToolApproval()],
        messages=loaded["messages"],
        interrupt_state=InterruptState.from_dict(loaded["state"]),
    )
    [interrupt] = revived.interrupt_state.owed
    assert interrupt.reason == {"toolUseId": "t1", "name": "delete_file", "input": {"path": "/a"}}
    result = revived(respond(paused, {"decision": "edit", "input": {"path": "/b"}}))
    assert str(result) == "done"
    assert ran == [("delete_file", "/b")]


# ---- what is gated ------------------------------------------------------------------------------


def test_tool_names_gate_only_those_tools(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent,
        tool_turn("read_file", {"path": "/a"}, tool_use_id="t1"),
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t2"),
        tools=["delete_file"],
    )
    paused = agent("go")
    assert ran == [("read_file", "/a")]
    assert [i.id for i in paused.interrupts] == [
        execute_tool_interrupt_id("t2", "approve-tool-call")
    ]


def test_a_predicate_chooses_the_calls_to_hold(make_agent: AgentFactory) -> None:
    def outside_tmp(context: ExecuteToolContext) -> bool:
        return not str(context.tool_use["input"].get("path", "")).startswith("/tmp/")

    agent = approval_agent(
        make_agent,
        tool_turn("delete_file", {"path": "/tmp/x"}, tool_use_id="t1"),
        tool_turn("delete_file", {"path": "/etc/x"}, tool_use_id="t2"),
        tools=outside_tmp,
    )
    paused = agent("go")
    assert ran == [("delete_file", "/tmp/x")]
    assert paused.interrupts[0].reason["input"] == {"path": "/etc/x"}


def test_a_call_to_a_tool_the_agent_does_not_have_is_gated_too(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent, tool_turn("format_disk", {}, tool_use_id="t1"), text_turn("ok")
    )
    paused = agent("go")
    assert paused.stop_reason == "interrupt"
    agent(respond(paused, "approve"))
    assert tool_results(agent)[0]["content"] == [{"text": "Unknown tool: format_disk"}]


def test_a_name_function_gives_each_tool_its_own_stable_name(make_agent: AgentFactory) -> None:
    agent = approval_agent(
        make_agent,
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
        text_turn("ok"),
        name=lambda context: f"approve-{context.tool_use['name']}",
        reason=lambda context: f"delete {context.tool_use['input']['path']}?",
    )
    paused = agent("go")
    [interrupt] = paused.interrupts
    assert interrupt.name == "approve-delete_file"
    assert interrupt.id == execute_tool_interrupt_id("t1", "approve-delete_file")
    assert interrupt.reason == "delete /a?"
    agent(respond(paused, "approve"))
    assert ran == [("delete_file", "/a")]


def test_a_name_function_returning_no_string_is_an_error_the_model_reads(
    make_agent: AgentFactory,
) -> None:
    agent = approval_agent(
        make_agent,
        tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
        text_turn("ok"),
        name=lambda context: 5,
    )
    assert agent("go").stop_reason == "end_turn"
    assert ran == []
    text = tool_results(agent)[0]["content"][0]["text"]
    assert "ToolApproval(name=...) returned 5 for tool call 't1'" in text
    assert "must return a non-empty string" in text


# ---- the handler itself -------------------------------------------------------------------------


async def test_the_edited_input_is_a_copy_of_the_answer() -> None:
    seen: list[Any] = []

    async def terminal(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        seen.append(context.tool_use)
        yield ToolResultEvent({"toolUseId": "t1", "status": "success", "content": []})

    new_input = {"path": "/b", "options": {"force": True}}
    context = tool_context(
        "delete_file",
        {"path": "/a"},
        tool_use_id="t1",
        answers={"approve-tool-call": {"decision": "edit", "input": new_input}},
    )
    registry = MiddlewareRegistry()
    registry.use(ToolApproval())
    await registry.run(ExecuteToolStage, context, terminal)
    [tool_use] = seen
    assert tool_use == {"toolUseId": "t1", "name": "delete_file", "input": new_input}
    assert tool_use["input"] is not new_input
    assert tool_use["input"]["options"] is not new_input["options"]


def test_selects_and_interrupt_name_answer_for_a_context() -> None:
    context = tool_context("read_file", tool_use_id="t1")
    assert ToolApproval().selects(context)
    assert not ToolApproval(tools=["delete_file"]).selects(context)
    assert ToolApproval(tools=lambda c: c.tool_use["name"] == "read_file").selects(context)
    assert ToolApproval(name="gate").interrupt_name(context) == "gate"


def test_it_is_one_wrap_middleware_on_the_tool_stage() -> None:
    [middleware] = list(ToolApproval())
    assert middleware.phase is ExecuteToolStage.Wrap
    assert "ToolApproval[executeTool]" in repr(middleware)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"tools": "delete_file"},
            TypeError,
            r"not a single string; write tools=\['delete_file'\]",
        ),
        ({"tools": [1]}, TypeError, r"tools=\.\.\.\) takes tool names as non-empty strings"),
        ({"tools": [""]}, TypeError, "non-empty strings"),
        ({"tools": 5}, TypeError, "takes all, a collection of tool names or a predicate"),
        ({"tools": any}, TypeError, r"tools=any\) is not a tool selection; use tools=all"),
        ({"name": ""}, ValueError, r"name=\.\.\.\) must be a non-empty string"),
        ({"name": 5}, TypeError, r"name=\.\.\.\) takes a string or a function"),
        ({"reason": "why"}, TypeError, r"reason=\.\.\.\) takes a function of the context"),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        ToolApproval(**kwargs)
