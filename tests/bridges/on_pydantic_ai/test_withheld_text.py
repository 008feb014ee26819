"""What a Wrap handler withholds never reaches a pydantic-ai user's screen, on any read path.

A guardrail or a streaming redaction holds deltas back and sends a replacement. The model here
is pydantic-ai's own ``FunctionModel`` with a stream function (what a user's provider model is
to pydantic-ai), and each handler below withholds the secret's delta and yields a replacement:

* ``replace_one``: lets every other delta out as it comes, swaps the secret's delta for
  ``[x]`` and rewrites the result to match;
* ``hold_all``: lets no delta out, then yields one replacement delta and a redacted result;
* ``Redact`` (streamed text held back in its window and masked) and ``Guardrail`` (the reply
  blocked, its block message sent instead), as a user registers them.

Each is read on every path pydantic-ai 2.x offers for a streamed run, and none may show the
secret: ``run_stream`` with ``stream_text(delta=False)``, ``stream_text(delta=True)``,
``stream_output``, ``stream_response`` and ``get_output``; ``run_stream_events``; ``run`` with an
``event_stream_handler``; and ``iter`` with each model-request node's ``node.stream``. The text
each path shows must be the replacement (the text the handlers let out), not merely lack the
secret.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    AgentStreamEvent,
    ModelMessage,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from strands_middleware import InvokeModelStage, ModelStopReason, TypedEvent
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.catalog import Guardrail, GuardrailSubject, Redact, Verdict
from strands_middleware.engine._registry import MiddlewareSource
from strands_middleware.events import TextDeltaEvent

SECRET = "hunter2"
WORDS = ["Hello ", "the ", "password ", "is ", SECRET, " ok ", "bye"]


async def leaky(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for word in WORDS:
        yield word


def _reply(stop: ModelStopReason, text: str) -> ModelStopReason:
    message: Any = {"role": "assistant", "content": [{"text": text}]}
    return ModelStopReason(stop.stop_reason, message, stop.usage, stop.metrics)


@InvokeModelStage.wrap
async def replace_one(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
    """Withholds the secret's delta, sends ``[x]`` in its place; the result matches."""
    async for event in next_fn(context):
        if isinstance(event, TextDeltaEvent) and SECRET in event.text:
            yield TextDeltaEvent(event.text.replace(SECRET, "[x]"))
        elif isinstance(event, ModelStopReason):
            text = "".join(str(block.get("text", "")) for block in event.message["content"])
            yield _reply(event, text.replace(SECRET, "[x]"))
        else:
            yield event


@InvokeModelStage.wrap
async def hold_all(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
    """Lets no delta out; sends one replacement and the redacted result."""
    async for event in next_fn(context):
        if isinstance(event, TextDeltaEvent):
            continue
        if isinstance(event, ModelStopReason):
            yield TextDeltaEvent("[redacted]")
            yield _reply(event, "[redacted]")
            continue
        yield event


def _no_secret(subject: GuardrailSubject) -> Verdict:
    return Verdict.block("blocked") if SECRET in subject.text else Verdict.allow()


HANDLERS: dict[str, tuple[Callable[[], MiddlewareSource], str]] = {
    "replace_one": (lambda: replace_one, "Hello the password is [x] ok bye"),
    "hold_all": (lambda: hold_all, "[redacted]"),
    "Redact": (
        lambda: Redact(patterns={"password": SECRET}),
        "Hello the password is [REDACTED:password] ok bye",
    ),
    "Guardrail": (
        lambda: Guardrail(_no_secret, model_input=False, tool_input=False, tool_output=False),
        "blocked",
    ),
}


def _text_of(events: list[AgentStreamEvent]) -> str:
    """The text a UI rendering pydantic-ai's part events shows."""
    shown = ""
    for event in events:
        if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
            shown += event.part.content
        elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
            shown += event.delta.content_delta
    return shown


async def _stream_text(agent: Agent[None, str], delta: bool) -> list[str]:
    async with agent.run_stream("hi") as run:
        return [text async for text in run.stream_text(delta=delta, debounce_by=None)]


async def _text_snapshots(agent: Agent[None, str]) -> list[str]:
    return await _stream_text(agent, delta=False)


async def _text_deltas(agent: Agent[None, str]) -> list[str]:
    return ["".join(await _stream_text(agent, delta=True))]


async def _outputs(agent: Agent[None, str]) -> list[str]:
    async with agent.run_stream("hi") as run:
        return [output async for output in run.stream_output(debounce_by=None)]


async def _responses(agent: Agent[None, str]) -> list[str]:
    async with agent.run_stream("hi") as run:
        return [
            "".join(part.content for part in response.parts if isinstance(part, TextPart))
            async for response in run.stream_response(debounce_by=None)
        ]


async def _get_output(agent: Agent[None, str]) -> list[str]:
    async with agent.run_stream("hi") as run:
        return [await run.get_output()]


async def _run_stream_events(agent: Agent[None, str]) -> list[str]:
    events: list[AgentStreamEvent] = []
    async with agent.run_stream_events("hi") as stream:
        async for event in stream:
            if isinstance(event, (PartStartEvent, PartDeltaEvent)):
                events.append(event)
    return [_text_of(events)]


async def _event_stream_handler(agent: Agent[None, str]) -> list[str]:
    events: list[AgentStreamEvent] = []

    async def handler(_context: Any, stream: AsyncIterator[AgentStreamEvent]) -> None:
        async for event in stream:
            events.append(event)

    result = await agent.run("hi", event_stream_handler=handler)
    return [_text_of(events), result.output]


async def _iter_nodes(agent: Agent[None, str]) -> list[str]:
    events: list[AgentStreamEvent] = []
    async with agent.iter("hi") as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    async for event in stream:
                        events.append(event)
        assert run.result is not None
        return [_text_of(events), run.result.output]


PATHS: dict[str, Callable[[Agent[None, str]], Awaitable[list[str]]]] = {
    "run_stream.stream_text(delta=False)": _text_snapshots,
    "run_stream.stream_text(delta=True)": _text_deltas,
    "run_stream.stream_output": _outputs,
    "run_stream.stream_response": _responses,
    "run_stream.get_output": _get_output,
    "run_stream_events": _run_stream_events,
    "run(event_stream_handler=...)": _event_stream_handler,
    "iter + node.stream": _iter_nodes,
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("handler", HANDLERS)
async def test_no_read_path_shows_what_a_handler_withheld(handler: str, path: str) -> None:
    make, replacement = HANDLERS[handler]
    agent = Agent(FunctionModel(stream_function=leaky), capabilities=[PydanticAIMiddleware(make())])
    shown = await PATHS[path](agent)
    assert shown, f"{path} showed nothing"
    assert all(SECRET not in text for text in shown), shown
    # What the path ends on is the replacement: the handlers' text, not an empty screen.
    assert shown[-1] == replacement, shown
