"""A pydantic-ai ``Agent`` with the bridge, behind the interfaces the shared host tests use.

`pydantic_ai_run` builds what ``tests/bridges/hosts.py`` calls a `Run` (the parity tests);
`PydanticAIHostAgent` takes the reference agent's keywords (the catalog tests). Both keep the
run's pydantic-ai history, pause on this library's interrupts through pydantic-ai's approval
deferral and resume with ``interruptResponse`` blocks, as the other hosts do. Each run gets an
event loop of its own (closed afterwards), or a thread when the caller's loop is running.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
from collections.abc import AsyncIterable, Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import RunContext, Tool
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.tools import DeferredToolRequests

from strands_middleware.agent import AgentResult
from strands_middleware.bridges.pydantic_ai import (
    PydanticAIMiddleware,
    interrupts_of,
    resume_results,
)
from strands_middleware.bridges.pydantic_ai._messages import (
    converse_message,
    converse_messages,
    host_messages,
    stop_reason_of,
)
from strands_middleware.bridges.pydantic_ai.testing import ScriptedPydanticAIModel
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.events import ToolResultEvent
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, ScriptedTurn
from strands_middleware.tools import AgentTool

T = TypeVar("T")
PAUSABLE: Any = [str, DeferredToolRequests]


def run_to_end(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` in an event loop of its own (in a thread when one is running here)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _drain(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
    async for _event in events:
        pass


class _Session:
    """One pydantic-ai agent and its conversation: history and what a pause waits on."""

    def __init__(
        self, agent: PydanticAgent[None, Any], history: list[ModelMessage], *, streamed: bool
    ) -> None:
        self.agent = agent
        # A streamed run asks the model through request_stream (its deltas reach handlers); a
        # FunctionModel then estimates the usage, so runs that check usage are not streamed.
        self.streamed = streamed
        self.history = history
        self.paused: DeferredToolRequests | None = None
        self.last_usage: dict[str, int] = {}

    async def invoke(self, prompt: Any) -> AgentResult:
        if _is_resume(prompt):
            if self.paused is None:
                raise RuntimeError("nothing is paused: there is no interrupt to answer")
            result = await self.agent.run(
                message_history=self.history,
                deferred_tool_results=resume_results(self.paused, prompt),
                event_stream_handler=_drain if self.streamed else None,
            )
        else:
            if self.paused is not None:
                raise RuntimeError("the run is paused on interrupts: answer them first")
            result = await self.agent.run(
                prompt,
                message_history=self.history,
                event_stream_handler=_drain if self.streamed else None,
            )
        self.history = result.all_messages()
        usage = result.usage
        self.last_usage = {
            "inputTokens": usage.input_tokens,
            "outputTokens": usage.output_tokens,
            "totalTokens": usage.input_tokens + usage.output_tokens,
        }
        last = next((m for m in reversed(self.history) if isinstance(m, ModelResponse)), None)
        message: Any = (
            converse_message(last) if last is not None else {"role": "assistant", "content": []}
        )
        interrupts: list[Interrupt] = []
        stop_reason = stop_reason_of(last) if last is not None else "end_turn"
        if isinstance(result.output, DeferredToolRequests):
            self.paused = result.output
            interrupts = interrupts_of(result.output)
            stop_reason = "interrupt"
        else:
            self.paused = None
        return AgentResult(
            stop_reason=stop_reason,
            message=message,
            interrupts=interrupts,
            usage=dict(self.last_usage),  # type: ignore[arg-type]
            metrics={"latencyMs": 0},
        )


def _is_resume(prompt: Any) -> bool:
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and all(isinstance(b, dict) and "interruptResponse" in b for b in prompt)
    )


class PydanticAIRun:
    """One pydantic-ai agent in the parity tests (the interface of ``hosts.Run``)."""

    def __init__(self, session: _Session, script: ScriptedModel) -> None:
        self.agent = session.agent
        self.session = session
        self.script = script

    def __call__(self, prompt: Any) -> Any:
        from ..hosts import Outcome

        result = run_to_end(self.session.invoke(prompt))
        text = "".join(block.get("text", "") for block in result.message["content"])
        return Outcome(result.stop_reason, text, list(result.interrupts), dict(result.usage))

    @property
    def messages(self) -> list[Any]:
        return converse_messages(self.session.history)

    def answer(self, outcome: Any, response: Any) -> Any:
        return self(
            [
                {"interruptResponse": {"interruptId": i.id, "response": response}}
                for i in outcome.interrupts
            ]
        )


def pydantic_ai_run(
    turns: Sequence[ScriptedTurn] | ScriptedModel,
    functions: Sequence[Callable[..., Any]],
    middleware: Sequence[MiddlewareSource],
    *,
    system_prompt: str | None = None,
) -> PydanticAIRun:
    script = turns if isinstance(turns, ScriptedModel) else ScriptedModel(turns)
    agent: PydanticAgent[None, Any] = PydanticAgent(
        ScriptedPydanticAIModel(script),
        tools=list(functions),
        instructions=system_prompt,
        capabilities=[PydanticAIMiddleware(*middleware)],
        output_type=PAUSABLE,
    )
    return PydanticAIRun(_Session(agent, [], streamed=True), script)


# ---- the catalog's agents --------------------------------------------------------------------


def library_tool(tool: AgentTool) -> Tool[Any]:
    """A tool of this library as a pydantic-ai tool, running the tool's own ``stream``."""

    async def run(ctx: RunContext[Any], **arguments: Any) -> Any:
        tool_use: Any = {
            "toolUseId": ctx.tool_call_id or "",
            "name": tool.tool_name,
            "input": arguments,
        }
        result: ToolResultEvent | None = None
        async for event in tool.stream(tool_use, {}):
            if isinstance(event, ToolResultEvent):
                result = event
        assert result is not None
        contents = result.tool_result["content"]
        text = "".join(str(item.get("text", "")) for item in contents)
        if result.tool_result["status"] == "error":
            # What the tool raised, as pydantic-ai would see it raised.
            raise result.exception or ToolFailed(text)
        if len(contents) == 1 and "json" in contents[0]:
            return contents[0]["json"]
        return text

    spec = tool.tool_spec
    return Tool.from_schema(
        run,
        name=spec["name"],
        description=spec.get("description"),
        json_schema=spec["inputSchema"]["json"],
        takes_ctx=True,
    )


class PydanticAIHostAgent:
    """A pydantic-ai ``Agent`` with the bridge, behind the reference agent's interface.

    Only what the catalog tests use: construction with the same keywords, calling it (sync and
    async), ``messages`` (as Converse), ``model``, ``use()``.
    """

    def __init__(
        self,
        *,
        model: Any,
        tools: Iterable[Any] = (),
        system_prompt: Any = None,
        middleware: Iterable[MiddlewareSource] = (),
        messages: Any = None,
        sequential_tools: bool = False,
    ) -> None:
        self.model = model
        self.bridge = PydanticAIMiddleware(*middleware)
        agent: PydanticAgent[None, Any] = PydanticAgent(
            ScriptedPydanticAIModel(model),
            tools=[library_tool(t) for t in tools],
            instructions=system_prompt,
            capabilities=[self.bridge],
            output_type=PAUSABLE,
        )
        self.agent = agent
        history = copy.deepcopy(list(messages or []))
        self._session = _Session(
            agent, host_messages(history, (), (), []) if history else [], streamed=False
        )

    def use(self, *middleware: MiddlewareSource) -> PydanticAIHostAgent:
        self.bridge.use(*middleware)
        return self

    def __call__(self, prompt: Any = None) -> AgentResult:
        return run_to_end(self._session.invoke(prompt))

    async def invoke_async(self, prompt: Any = None) -> AgentResult:
        return await self._session.invoke(prompt)

    @property
    def messages(self) -> list[Any]:
        return _History(self._session)


class _History(list[Any]):
    """The history as Converse messages; ``clear()`` clears the agent's own."""

    def __init__(self, session: _Session) -> None:
        super().__init__(converse_messages(session.history))
        self._session = session

    def clear(self) -> None:
        super().clear()
        self._session.history = []


_UNKNOWN_TOOL = (
    "pydantic-ai answers a call to a tool the agent does not have itself, before any tool hook "
    "runs, so the chain never sees it"
)

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {
    ("pydantic_ai", "test_an_unknown_tool_is_observed_with_tool_none"): _UNKNOWN_TOOL,
    # The catalog's tests.
    ("pydantic_ai", "test_an_interrupt_is_never_retried_even_when_on_catches_everything"): (
        _UNKNOWN_TOOL
    ),
    ("pydantic_ai", "test_a_call_to_a_tool_the_agent_does_not_have_is_gated_too"): _UNKNOWN_TOOL,
    ("pydantic_ai", "test_a_tool_the_agent_does_not_have_can_be_mocked"): _UNKNOWN_TOOL,
    ("pydantic_ai", "test_calls_are_recorded_in_order_as_copies"): _UNKNOWN_TOOL,
    ("pydantic_ai", "test_an_interrupt_raised_by_a_fixture_function_pauses_the_run"): (
        _UNKNOWN_TOOL
    ),
    ("pydantic_ai", "test_model_input_never_touches_reasoning_or_media_blocks"): (
        "pydantic-ai's messages have no guard-content block and no media in an assistant turn: "
        "a Converse message holding them loses them on the way to pydantic-ai"
    ),
}
"""(host, parity test) to why pydantic-ai behaves otherwise by design."""
