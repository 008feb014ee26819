"""The LangChain bridge's own promises: what the parity tests cannot show from the outside.

Registered the way LangChain users register middleware (``create_agent(..., middleware=[...])``);
LangChain's own objects come back when handlers change nothing; interrupts pause through
LangGraph with this library's ids and resume with ``Command(resume=...)``, in this process or in
another one through the SQLite checkpointer, without asking the model again or running anything
one time too many; what LangChain cannot carry is refused or stated.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId
from langchain_core.tools import tool as as_langchain_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from langgraph.types import Interrupt as HostInterrupt

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.bridges.langchain import (
    LangChainBridge,
    RelayChatModel,
    UnsupportedStageError,
    interrupts_of,
    resume_command,
)
from strands_middleware.bridges.langchain.testing import ScriptedChatModel
from strands_middleware.catalog import CallLimit, Retry, ToolApproval
from strands_middleware.events import TextDeltaEvent
from strands_middleware.exceptions import InterruptResumeError
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.interrupts import execute_tool_interrupt_id
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn

ran: list[str] = []


@as_langchain_tool
def delete_file(path: str) -> str:
    """Delete a file."""
    ran.append(path)
    return f"deleted {path}"


def prompt(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(content=text)]}


def thread() -> Any:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


class Inner(AgentMiddleware[Any, Any, Any]):
    """LangChain middleware registered inside the bridge: it sees what the bridge sends on."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Any] = []
        self.responses: list[Any] = []

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        self.requests.append(request)
        response = await handler(request)
        self.responses.append(response)
        return response

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        self.requests.append(request)
        answer = await handler(request)
        self.responses.append(answer)
        return answer


class Outer(Inner):
    """The same, registered outside the bridge: it sees what the bridge returns."""


async def passthrough(context: Any, next_fn: MiddlewareNext[Any, TypedEvent]) -> Any:
    async for event in next_fn(context):
        yield event


async def test_the_bridge_is_one_agent_middleware_given_to_create_agent() -> None:
    bridge = LangChainBridge(InvokeModelStage.wrap(passthrough))
    assert isinstance(bridge, AgentMiddleware)
    agent = create_agent(ScriptedChatModel([text_turn("hi")]), middleware=[bridge])
    result = await agent.ainvoke(prompt("hello"))
    assert result["messages"][-1].content == "hi"


async def test_what_handlers_leave_unchanged_goes_back_as_langchains_own_objects() -> None:
    outer, inner = Outer(), Inner()
    bridge = LangChainBridge(InvokeModelStage.wrap(passthrough), ExecuteToolStage.wrap(passthrough))
    model = ScriptedChatModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("done")]
    )
    agent = create_agent(
        model,
        tools=[delete_file],
        system_prompt="Be brief.",
        middleware=[outer, bridge, inner],
    )
    await agent.ainvoke(prompt("go"))
    assert len(outer.requests) == len(inner.requests) == 3  # model, tool, model
    for sent, received in zip(outer.requests, inner.requests, strict=True):
        if isinstance(sent, ModelRequest):
            # The model call streams through the chain: LangChain calls the relay around its
            # model; every other field is LangChain's own object.
            assert isinstance(received.model, RelayChatModel)
            assert received.model.inner is sent.model
            assert received.override(model=sent.model) == sent
            assert received.messages is sent.messages and received.tools is sent.tools
        else:
            assert received is sent
    for answered, returned in zip(inner.responses, outer.responses, strict=True):
        assert returned is answered


async def test_a_changed_request_reaches_langchain_with_every_field_set() -> None:
    inner = Inner()
    backup = ScriptedModel([text_turn("from the backup")])

    @InvokeModelStage.input
    def change(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Injected", model=backup, tool_specs=[])

    agent = create_agent(
        ScriptedChatModel([]),
        tools=[delete_file],
        middleware=[LangChainBridge(change), inner],
    )
    result = await agent.ainvoke(prompt("go"))
    [request] = inner.requests
    assert request.system_prompt == "Injected"
    assert request.tools == []
    assert result["messages"][-1].content == "from the backup"
    assert backup.requests[0].system_prompt == "Injected"


async def test_a_request_field_a_handler_read_goes_back_as_langchains_own_when_unchanged() -> None:
    inner = Inner()
    read: list[int] = []

    @InvokeModelStage.input
    def reads(context: InvokeModelContext) -> InvokeModelContext:
        read.append(len(context.messages) + len(context.tool_specs))
        return context

    agent = create_agent(
        ScriptedChatModel([text_turn("hi")]),
        tools=[delete_file],
        middleware=[Outer(), LangChainBridge(reads), inner],
    )
    await agent.ainvoke(prompt("go"))
    assert read == [2]
    [request] = inner.requests
    assert not isinstance(request.tools[0], dict)  # LangChain's own tool, not a translation
    assert request.messages[0].content == "go"


async def test_history_tools_and_a_prompt_of_blocks_edited_in_place_reach_langchain() -> None:
    inner = Inner()

    @InvokeModelStage.input
    def edit(context: InvokeModelContext) -> InvokeModelContext:
        context.messages.append({"role": "user", "content": [{"text": "and more"}]})
        context.tool_specs[0]["description"] = "Delete a file, carefully."
        assert isinstance(context.system_prompt, list)
        context.system_prompt[1] = {"text": "Be kind."}
        return context

    system = SystemMessage(
        content=[{"type": "text", "text": "Be brief."}, {"type": "text", "text": "Be exact."}]
    )
    agent = create_agent(
        ScriptedChatModel([text_turn("hi")]),
        tools=[delete_file],
        system_prompt=system,
        middleware=[LangChainBridge(edit), inner],
    )
    await agent.ainvoke(prompt("go"))
    [request] = inner.requests
    assert [message.content for message in request.messages] == ["go", "and more"]
    [tool] = request.tools
    assert tool["function"]["description"] == "Delete a file, carefully."
    assert [block["text"] for block in request.system_message.content] == ["Be brief.", "Be kind."]


async def test_a_history_and_tools_replaced_unread_are_compared_with_langchains() -> None:
    inner = Inner()

    @InvokeModelStage.input
    def replace(context: InvokeModelContext) -> InvokeModelContext:
        spec = {
            "name": "delete_file",
            "description": "Delete a file.",
            "inputSchema": {
                "json": {
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                    "type": "object",
                }
            },
        }
        return context.replace(
            messages=[{"role": "user", "content": [{"text": "go"}]}], tool_specs=[spec]
        )

    agent = create_agent(
        ScriptedChatModel([text_turn("hi")]),
        tools=[delete_file],
        middleware=[Outer(), LangChainBridge(replace), inner],
    )
    given = prompt("go")
    await agent.ainvoke(given)
    [request] = inner.requests
    # Equal to what LangChain had: its own objects go on, not a translation back.
    assert request.messages[0] is not None and request.messages[0].content == "go"
    assert request.messages[0].id is not None
    assert not isinstance(request.tools[0], dict)


def shouting(seen: list[str]) -> Any:
    """A model Wrap handler noting each text delta and letting it through in capitals."""

    @InvokeModelStage.wrap
    async def shout(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, TextDeltaEvent):
                seen.append(event.text)
                yield TextDeltaEvent(event.text.upper())
            else:
                yield event

    return shout


# Before Python 3.11 LangGraph cannot give an async node's model call the run's callbacks, so
# LangChain streams no tokens there, bridged or not: the messages stream shows the finished reply.
TOKENS_STREAM = sys.version_info >= (3, 11)


async def streamed_run(agent: Any) -> tuple[list[str], Any]:
    """The text LangChain streams in messages mode, and the last AIMessage of the run."""
    texts: list[str] = []
    values: Any = None
    async for mode, data in agent.astream(prompt("hi"), stream_mode=["messages", "values"]):
        if mode == "messages":
            chunk, _metadata = data
            if isinstance(chunk, AIMessage) and chunk.content:  # AIMessageChunk is one too
                texts.append(str(chunk.content))
        else:
            values = data
    return texts, values["messages"][-1]


async def test_a_model_wrap_handler_sees_and_rewrites_each_text_delta() -> None:
    seen: list[str] = []
    agent = create_agent(
        ScriptedChatModel([text_turn("quiet words all round")]),
        middleware=[LangChainBridge(shouting(seen))],
    )
    texts, last = await streamed_run(agent)
    assert len(seen) > 1 and "".join(seen) == "quiet words all round"
    shouted = [text.upper() for text in seen]
    assert texts == (shouted if TOKENS_STREAM else ["QUIET WORDS ALL ROUND"])
    assert last.content == "QUIET WORDS ALL ROUND"  # the aggregate of what the handler let out


async def test_a_langchain_chat_models_own_chunks_reach_handlers_and_only_theirs_are_streamed() -> (
    None
):
    seen: list[str] = []
    model = GenericFakeChatModel(messages=iter([AIMessage(content="one two three")]))
    agent = create_agent(model, middleware=[LangChainBridge(shouting(seen))])
    texts, last = await streamed_run(agent)
    assert seen == ["one", " ", "two", " ", "three"]
    # The model's own chunks are not shown: only the ones the handler let through.
    assert texts == (["ONE", " ", "TWO", " ", "THREE"] if TOKENS_STREAM else ["ONE TWO THREE"])
    assert last.content == "ONE TWO THREE"


async def test_model_wrap_handlers_see_the_reference_event_classes_for_a_tool_call() -> None:
    kinds: list[str] = []

    @InvokeModelStage.wrap
    async def record(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            kinds.append(type(event).__name__)
            yield event

    model = ScriptedChatModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("done")]
    )
    agent = create_agent(model, tools=[delete_file], middleware=[LangChainBridge(record)])
    ran.clear()
    result = await agent.ainvoke(prompt("go"))
    assert ran == ["/a"]
    assert result["messages"][1].tool_calls == [
        {"name": "delete_file", "args": {"path": "/a"}, "id": "t1", "type": "tool_call"}
    ]
    assert "ToolUseDeltaEvent" in kinds and "TextDeltaEvent" in kinds
    assert kinds[-2:] == ["ModelMessageEvent", "ModelStopReason"]
    assert kinds.count("ModelStopReason") == 2


async def test_langchain_middleware_answering_inside_the_bridge_is_the_model_calls_result() -> None:
    kinds: list[str] = []

    class Answer(AgentMiddleware[Any, Any, Any]):
        async def awrap_model_call(
            self,
            request: ModelRequest[Any],
            handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
        ) -> ModelResponse[Any]:
            return ModelResponse(result=[AIMessage(content="from LangChain")])

    @InvokeModelStage.wrap
    async def record(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            kinds.append(type(event).__name__)
            yield event

    agent = create_agent(ScriptedChatModel([]), middleware=[LangChainBridge(record), Answer()])
    result = await agent.ainvoke(prompt("go"))
    assert result["messages"][-1].content == "from LangChain"
    assert kinds == ["ModelMessageEvent", "ModelStopReason"]


async def test_a_streamed_call_retried_after_a_failure_streams_the_retry() -> None:
    model = ScriptedChatModel([RuntimeError("overloaded"), text_turn("second try")])
    agent = create_agent(model, middleware=[LangChainBridge(Retry(attempts=2, backoff=0.0))])
    texts, last = await streamed_run(agent)
    assert "".join(texts) == "second try"
    assert last.content == "second try"


def test_agent_stream_middleware_is_refused_at_registration_and_nothing_is_registered() -> None:
    @AgentStreamStage.input
    def note(context: AgentStreamContext) -> AgentStreamContext:
        return context

    bridge = LangChainBridge()
    with pytest.raises(UnsupportedStageError, match="no hook around a whole agent pass"):
        bridge.use(InvokeModelStage.wrap(passthrough), note)
    with pytest.raises(UnsupportedStageError, match="AgentStreamStage"):
        bridge.add_middleware(AgentStreamStage.Output, lambda result: result)
    assert not bridge.middleware_registry.has_handlers(InvokeModelStage)
    assert not bridge.middleware_registry.has_handlers(AgentStreamStage)


def test_a_synchronous_invoke_is_refused_by_langchain_with_the_fix() -> None:
    bridge = LangChainBridge(InvokeModelStage.wrap(passthrough))
    agent = create_agent(ScriptedChatModel([text_turn("hi")]), middleware=[bridge])
    with pytest.raises(NotImplementedError, match="ainvoke"):
        agent.invoke(prompt("hello"))


# ---- interrupts -------------------------------------------------------------------------


def gated_agent(script: ScriptedModel, *middleware: Any, checkpointer: Any = None) -> Any:
    return create_agent(
        ScriptedChatModel(script),
        tools=[delete_file],
        middleware=[LangChainBridge(*middleware)],
        checkpointer=checkpointer or InMemorySaver(),
    )


def answers(paused: Any, response: Any) -> list[dict[str, Any]]:
    return [
        {"interruptResponse": {"interruptId": i.id, "response": response}}
        for i in interrupts_of(paused)
    ]


async def test_an_approval_pauses_through_langgraph_with_the_spec_id_and_resumes() -> None:
    ran.clear()
    script = ScriptedModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")]
    )
    agent = gated_agent(script, ToolApproval())
    config = thread()
    paused = await agent.ainvoke(prompt("clean"), config)
    [interrupt] = interrupts_of(paused)
    name_hash = uuid.uuid5(uuid.NAMESPACE_OID, interrupt.name)
    assert interrupt.id == f"v1:middleware_execute_tool:t1:{name_hash}"
    assert paused["__interrupt__"][0].value["id"] == interrupt.id  # LangGraph holds our id
    snapshot = await agent.aget_state(config)
    assert interrupts_of(snapshot) == interrupts_of(paused)
    done = await agent.ainvoke(resume_command(snapshot, answers(paused, "approve")), config)
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
    assert len(script.requests) == 2  # the resume did not ask the model again for the call


def test_interrupts_come_in_the_order_of_the_turns_tool_calls() -> None:
    # LangGraph runs a turn's tool calls as parallel tasks and lists their interrupts in the
    # order the tasks reached them.
    first, second = (execute_tool_interrupt_id(call, "approve-tool-call") for call in ("t1", "t2"))
    foreign = HostInterrupt(value="a tool's own question", id="langgraph-id")
    listed = [
        foreign,
        HostInterrupt(value={"id": second, "name": "approve-tool-call", "reason": 2}, id="b"),
        HostInterrupt(value={"id": first, "name": "approve-tool-call", "reason": 1}, id="a"),
    ]
    turn = AIMessage(
        content="",
        tool_calls=[
            {"name": "delete_file", "args": {}, "id": "t1"},
            {"name": "delete_file", "args": {}, "id": "t2"},
        ],
    )
    paused = {"messages": [HumanMessage("clean"), turn], "__interrupt__": listed}
    assert [i.id for i in interrupts_of(paused)] == [first, second, "langgraph-id"]
    # What ainvoke(version="v2") returns holds the state as .value, the interrupts beside it.
    v2_output = SimpleNamespace(value={"messages": [turn]}, interrupts=tuple(listed))
    assert [i.id for i in interrupts_of(v2_output)] == [first, second, "langgraph-id"]
    # Without the messages there is no order to take: the list's own is kept.
    assert [i.id for i in interrupts_of(listed)] == ["langgraph-id", second, first]


async def test_a_resume_that_does_not_fit_the_pause_is_refused() -> None:
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1")])
    paused = await gated_agent(script, ToolApproval()).ainvoke(prompt("clean"), thread())
    with pytest.raises(InterruptResumeError, match="not paused on interrupt 'nope'"):
        resume_command(paused, {"nope": "yes"})
    with pytest.raises(InterruptResumeError, match="malformed"):
        resume_command(paused, [{"interruptResponse": {"response": "yes"}}])
    with pytest.raises(InterruptResumeError, match="answered twice"):
        resume_command(paused, answers(paused, "yes") * 2)
    with pytest.raises(InterruptResumeError, match="no answers"):
        resume_command(paused, [])
    with pytest.raises(TypeError, match="interrupts_of/resume_command take"):
        interrupts_of("paused")


async def test_a_resume_on_a_thread_no_longer_paused_is_refused_naming_the_fix() -> None:
    """Built from the thread's state, a resume after the run ended (the same answers sent
    twice) is refused before anything runs. Built from the old paused result it cannot be:
    LangGraph runs no node for a thread with nothing pending, so the command changes nothing."""
    ran.clear()
    script = ScriptedModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")]
    )
    agent = gated_agent(script, ToolApproval())
    config = thread()
    paused = await agent.ainvoke(prompt("clean"), config)
    given = answers(paused, "approve")
    await agent.ainvoke(resume_command(await agent.aget_state(config), given), config)
    before = await agent.aget_state(config)
    with pytest.raises(InterruptResumeError, match="not paused on any interrupt") as refused:
        resume_command(before, given)
    assert "send a new prompt instead" in str(refused.value)
    assert refused.value.interrupt_ids == tuple(i.id for i in interrupts_of(paused))
    with pytest.raises(InterruptResumeError, match="not paused on any interrupt"):
        resume_command(before, {i.id: "approve" for i in interrupts_of(paused)})
    stale = await agent.ainvoke(resume_command(paused, given), config)
    assert stale["messages"] == before.values["messages"]
    assert ran == ["/a"]
    assert len(script.requests) == 2


async def test_an_outer_call_limit_counts_the_resumed_call_once() -> None:
    """The tool call runs its chain again on resume (LangGraph re-runs the paused task), but
    the paused attempt gave its count back, so the limit sees one call, not two."""
    ran.clear()
    entered: list[str] = []

    @ExecuteToolStage.wrap
    async def count(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        entered.append(context.tool_use["toolUseId"])
        async for event in next_fn(context):
            yield event

    script = ScriptedModel(
        [
            tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"),
            text_turn("gone"),
            tool_turn("delete_file", {"path": "/b"}, tool_use_id="t2"),
            text_turn("limited"),
        ]
    )
    limit = CallLimit(tool_calls=1, scope="agent")
    agent = gated_agent(script, count, limit, ToolApproval())
    config = thread()
    paused = await agent.ainvoke(prompt("clean"), config)
    done = await agent.ainvoke(resume_command(paused, answers(paused, "approve")), config)
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
    assert entered == ["t1", "t1"]  # once paused, once resumed: nothing more
    # The agent's one tool call is spent by the resumed call: the next one is refused.
    again = await agent.ainvoke(prompt("clean more"), config)
    refused = [m for m in again["messages"] if isinstance(m, ToolMessage)][-1]
    assert "Tool call limit reached" in str(refused.content)
    assert ran == ["/a"]


CHILD = textwrap.dedent(
    """
    import asyncio, json, sys

    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from strands_middleware.bridges.langchain import LangChainBridge, resume_command
    from strands_middleware.bridges.langchain.testing import ScriptedChatModel
    from strands_middleware.catalog import ToolApproval
    from strands_middleware.testing import text_turn

    ran = []

    @tool
    def delete_file(path: str) -> str:
        \"\"\"Delete a file.\"\"\"
        ran.append(path)
        return f"deleted {path}"

    async def main(path, thread_id, answers):
        model = ScriptedChatModel([text_turn("gone")])
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            agent = create_agent(
                model, tools=[delete_file], middleware=[LangChainBridge(ToolApproval())],
                checkpointer=saver,
            )
            config = {"configurable": {"thread_id": thread_id}}
            snapshot = await agent.aget_state(config)
            done = await agent.ainvoke(resume_command(snapshot, answers), config)
        return {
            "text": done["messages"][-1].content,
            "ran": ran,
            "requests": len(model.script.requests),
            "last_sent": model.script.requests[0].messages[-1],
        }

    request = json.load(sys.stdin)
    print(json.dumps(asyncio.run(main(**request))))
    """
)


async def test_a_paused_run_resumes_in_another_process_through_the_sqlite_checkpointer(
    tmp_path: Path,
) -> None:
    ran.clear()
    path = str(tmp_path / "checkpoints.sqlite")
    script = ScriptedModel([tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1")])
    config = thread()
    async with AsyncSqliteSaver.from_conn_string(path) as saver:
        paused = await gated_agent(script, ToolApproval(), checkpointer=saver).ainvoke(
            prompt("clean"), config
        )
    assert ran == []
    request = {
        "path": path,
        "thread_id": config["configurable"]["thread_id"],
        "answers": answers(paused, "approve"),
    }
    child = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", CHILD],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout)
    assert report["text"] == "gone"
    assert report["ran"] == ["/a"]  # the tool ran once, in the other process
    assert report["requests"] == 1  # the model was asked only for the answer after the tool
    [block] = report["last_sent"]["content"]
    assert block["toolResult"]["toolUseId"] == "t1"
    assert block["toolResult"]["status"] == "success"


# ---- Converse at the boundary -----------------------------------------------------------


async def test_consecutive_human_messages_are_one_converse_user_message() -> None:
    seen: list[Any] = []
    inner = Inner()

    @InvokeModelStage.input
    def record(context: InvokeModelContext) -> InvokeModelContext:
        seen.append(context.messages)
        return context

    agent = create_agent(
        ScriptedChatModel([text_turn("ok")]), middleware=[LangChainBridge(record), inner]
    )
    first, second = HumanMessage(content="one"), HumanMessage(content="two")
    await agent.ainvoke({"messages": [first, second]})
    assert seen == [[{"role": "user", "content": [{"text": "one"}, {"text": "two"}]}]]
    # Left as it was, the merged message goes back as LangChain's two messages.
    assert inner.requests[0].messages == [first, second]


async def test_a_tool_command_keeps_its_update_with_the_handlers_result() -> None:
    @as_langchain_tool
    def remember(fact: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Remember a fact."""
        return Command(
            update={"messages": [ToolMessage(content=f"noted {fact}", tool_call_id=tool_call_id)]}
        )

    @ExecuteToolStage.output
    def shout(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
        assert result.value.tool_result["content"] == [{"text": "noted tea"}]
        tool_result: Any = {**result.value.tool_result, "content": [{"text": "NOTED TEA"}]}
        return result.replace(value=ToolResultEvent(tool_result))

    outer = Outer()
    agent = create_agent(
        ScriptedChatModel(
            [tool_turn("remember", {"fact": "tea"}, tool_use_id="t1"), text_turn("ok")]
        ),
        tools=[remember],
        middleware=[outer, LangChainBridge(shout)],
    )
    result = await agent.ainvoke(prompt("remember tea"))
    command = outer.responses[1]
    assert isinstance(command, Command)
    [message] = command.update["messages"]  # type: ignore[index]
    assert (message.tool_call_id, message.content) == ("t1", "NOTED TEA")
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == ["NOTED TEA"]


async def test_resume_command_refuses_an_answer_the_gate_does_not_accept() -> None:
    ran.clear()
    script = ScriptedModel(
        [tool_turn("delete_file", {"path": "/a"}, tool_use_id="t1"), text_turn("gone")]
    )
    bridge = LangChainBridge(ToolApproval())
    agent = create_agent(
        ScriptedChatModel(script),
        tools=[delete_file],
        middleware=[bridge],
        checkpointer=InMemorySaver(),
    )
    config = thread()
    paused = await agent.ainvoke(prompt("clean"), config)
    [interrupt] = interrupts_of(paused)
    before = await agent.aget_state(config)

    with pytest.raises(InterruptResumeError) as refused:
        resume_command(paused, answers(paused, "yes"), middleware=bridge)
    message = str(refused.value)
    assert message.startswith(
        "an answer is not one the middleware that asked accepts, so nothing was resumed"
    )
    assert f"{interrupt.id}: ToolApproval 'approve-tool-call': the answer 'yes'" in message
    assert refused.value.interrupt_ids == (interrupt.id,)
    after = await agent.aget_state(config)
    assert interrupts_of(after) == interrupts_of(before) == [interrupt]
    assert after.values["messages"] == before.values["messages"]
    assert ran == []

    command = resume_command(paused, answers(paused, "approve"), middleware=bridge)
    done = await agent.ainvoke(command, config)
    assert done["messages"][-1].content == "gone"
    assert ran == ["/a"]
