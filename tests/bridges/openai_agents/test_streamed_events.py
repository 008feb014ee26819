"""What a caller streaming an SDK run sees of the model's own events, with handlers in between.

The model's Responses events reach the SDK's stream as the chain lets the chunks made of them
through: all of them, in order, when handlers pass the stream on; none of the ones a handler held
back and replaced, so a withheld reply never reaches the caller.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from agents import Agent, RawResponsesStreamEvent, RunConfig, Runner, set_tracing_disabled

from strands_middleware import InvokeModelContext, InvokeModelStage
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import Redact
from strands_middleware.engine._handlers import MiddlewareNext
from strands_middleware.engine._watch import Outcome, watching
from strands_middleware.events import ModelStopReason, ModelStreamEvent, TextDeltaEvent, TypedEvent
from strands_middleware.exceptions import ModelStreamError
from strands_middleware.testing import text_turn

set_tracing_disabled(True)
CONFIG = RunConfig(tracing_disabled=True)


async def raw_events(middleware: OpenAIAgentsMiddleware | None) -> tuple[list[Any], Any]:
    """The model's own events the caller of a streamed run saw, and the run's final output."""
    agent: Agent[Any] = Agent("a", model=ScriptedOpenAIModel([text_turn("the secret is 42")]))
    if middleware is not None:
        agent = middleware.wrap(agent)
    result = Runner.run_streamed(agent, "Tell me", run_config=CONFIG)
    seen = [
        event.data
        async for event in result.stream_events()
        if isinstance(event, RawResponsesStreamEvent)
    ]
    return seen, result.final_output


def shape(events: list[Any]) -> list[tuple[str, str]]:
    return [(event.type, str(getattr(event, "delta", ""))) for event in events]


@InvokeModelStage.wrap
async def passthrough(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


@InvokeModelStage.wrap
async def withhold(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        if isinstance(event, ModelStopReason):
            yield TextDeltaEvent("[withheld]")
            message: Any = {"role": "assistant", "content": [{"text": "[withheld]"}]}
            yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)


async def test_a_passing_handler_lets_every_model_event_through_in_order() -> None:
    alone, _ = await raw_events(None)
    through, output = await raw_events(OpenAIAgentsMiddleware(passthrough))
    deltas = [event for event in through if event.type == "response.output_text.delta"]
    assert len(deltas) > 1  # the reply streamed in pieces
    assert shape(through) == shape(alone)
    assert output == "the secret is 42"


async def test_a_reply_a_handler_withheld_never_reaches_the_callers_stream() -> None:
    seen, output = await raw_events(OpenAIAgentsMiddleware(withhold))
    assert output == "[withheld]"
    assert not [event for event in seen if "secret" in repr(event) or "is 42" in repr(event)]
    assert [event.type for event in seen] == ["response.completed"]


async def test_what_redact_masked_never_reaches_the_callers_stream() -> None:
    """Redact rewrites the text chunks and passes the block's stop on: the model's own events
    of the rewritten chunks, and the ones repeating the whole item (``output_item.done``), stay
    back; the caller reads the masked reply."""
    middleware = OpenAIAgentsMiddleware(Redact(patterns={"answer": r"\b42\b"}))
    seen, output = await raw_events(middleware)
    assert output == "the secret is [REDACTED:answer]"
    assert not [event for event in seen if "42" in repr(event)], seen


def watcher(log: list[Any]) -> Any:
    """A Wrap handler that only watches its call: as its watch, it logs what the call ended
    with; as a generator layer, it says so (the watch path spares that layer)."""

    async def watched(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        log.append("generator")
        async for event in next_fn(context):
            yield event

    async def enter(_context: Any) -> Any:
        log.append("enter")

        async def leave(outcome: Outcome) -> None:
            text = outcome.result.message["content"][0]["text"]
            log.append(("leave", outcome.ended, outcome.error, text))

        return leave

    return InvokeModelStage.wrap(watching(watched, enter))


async def test_a_watching_handler_runs_as_its_watch_and_every_model_event_goes_through() -> None:
    alone, _ = await raw_events(None)
    log: list[Any] = []
    through, output = await raw_events(OpenAIAgentsMiddleware(watcher(log), passthrough))
    assert shape(through) == shape(alone)
    assert output == "the secret is 42"
    assert log == ["enter", ("leave", True, None, "the secret is 42")]


async def test_a_watch_learns_the_result_a_handler_inside_it_made() -> None:
    log: list[Any] = []
    seen, output = await raw_events(OpenAIAgentsMiddleware(watcher(log), withhold))
    assert output == "[withheld]"
    assert [event.type for event in seen] == ["response.completed"]
    assert log == ["enter", ("leave", True, None, "[withheld]")]


class EventsModel(ScriptedOpenAIModel):
    """Streams what ``reshape`` makes of the scripted turn's Responses events."""

    def __init__(self, reply: str, reshape: Any) -> None:
        super().__init__([text_turn(reply)])
        self.reshape = reshape

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        events = [event async for event in super().stream_response(*args, **kwargs)]
        for event in self.reshape(events):
            yield event


def handler_log(seen: list[TypedEvent]) -> Any:
    @InvokeModelStage.wrap
    async def log(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            seen.append(event)
            yield event

    return log


async def run_streamed(model: Any, seen: list[TypedEvent]) -> Any:
    agent = OpenAIAgentsMiddleware(handler_log(seen)).wrap(Agent("a", model=model))
    result = Runner.run_streamed(agent, "Tell me", run_config=CONFIG)
    async for _event in result.stream_events():
        pass
    return result


async def test_handlers_see_each_delta_as_the_library_s_own_event_classes_make_it() -> None:
    seen: list[TypedEvent] = []
    result = await run_streamed(EventsModel("the answer is 42", list), seen)
    chunks = [event for event in seen if isinstance(event, ModelStreamEvent)]
    texts = [event for event in seen if isinstance(event, TextDeltaEvent)]
    # Equal, class and keys, to what the classes themselves make of the same payload.
    assert [(type(e), e) for e in chunks] == [
        (ModelStreamEvent, ModelStreamEvent(e.chunk)) for e in chunks
    ]
    assert [(type(e), e) for e in texts] == [
        (TextDeltaEvent, TextDeltaEvent(e.text)) for e in texts
    ]
    assert len(texts) > 1
    assert "".join(event.text for event in texts) == "the answer is 42"
    (stop,) = [event for event in seen if isinstance(event, ModelStopReason)]
    assert stop.message == {"role": "assistant", "content": [{"text": "the answer is 42"}]}
    assert result.final_output == "the answer is 42"


def _empty_completion(events: list[Any]) -> list[Any]:
    last = events[-1]
    emptied = last.response.model_copy(update={"output": []})
    return [*events[:-1], last.model_copy(update={"response": emptied})]


async def test_a_completion_without_output_takes_the_items_the_model_finished() -> None:
    """Some backends send each item in its ``output_item.done`` and leave the completed
    response's output empty: the reply handlers see is those items, as the SDK takes them."""
    seen: list[TypedEvent] = []
    result = await run_streamed(EventsModel("from the done items", _empty_completion), seen)
    (stop,) = [event for event in seen if isinstance(event, ModelStopReason)]
    assert stop.message["content"] == [{"text": "from the done items"}]
    assert result.final_output == "from the done items"


async def test_a_stream_without_a_completion_fails_saying_what_the_model_must_send() -> None:
    model = EventsModel("cut short", lambda events: events[:-1])
    with pytest.raises(ModelStreamError, match=r"response\.completed"):
        await run_streamed(model, [])
