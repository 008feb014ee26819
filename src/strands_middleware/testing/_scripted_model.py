"""A model that plays a script, for testing middleware and agents without a network.

`ScriptedModel` answers each model call with the next turn of a script. A scripted message is
played back as a real Converse chunk stream (text in several deltas, tool input as JSON split
across deltas, a stop reason and a metadata chunk), so the code under test parses exactly what a
provider would send, through `strands_middleware.host.process_model_stream`. Every call
is recorded as a `ModelRequest`, so a test can assert what middleware actually sent the model.

Example::

    model = ScriptedModel([tool_turn("add", {"a": 1, "b": 2}), text_turn("3")])
    ...  # run an agent or a stage with it
    assert model.requests[1].messages[-1]["content"][0]["toolResult"]["status"] == "success"
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from ..content import (
    ContentBlock,
    Message,
    Messages,
    Metrics,
    ReasoningContentBlock,
    StopReason,
    StreamEvent,
    SystemContentBlock,
    ToolChoice,
    ToolSpec,
    ToolUse,
    Usage,
)

__all__ = [
    "ModelRequest",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedTurn",
    "scripted",
    "text_turn",
    "tool_turn",
]

_SHOWN_LENGTH = 500
"""How much of a message an exhaustion error quotes: enough to recognise it, not a whole log."""


@dataclass
class ModelRequest:
    """One call a `ScriptedModel` received: what the model was asked.

    ``messages`` and the other Converse values are deep copies taken when the call started, so
    a test sees what the model was sent even after the agent loop went on to append to or edit
    its conversation.

    Attributes:
        messages: The conversation the model was given.
        system_prompt: The plain-text system prompt, or ``None``.
        system_prompt_content: The system prompt as blocks, or ``None``.
        tool_specs: The tools offered, or ``None``.
        tool_choice: The tool choice, or ``None``.
        kwargs: Any other keyword arguments the host passed (copied shallowly: hosts pass live
            objects such as ``invocation_state`` here).
    """

    messages: Messages
    system_prompt: str | None = None
    system_prompt_content: list[SystemContentBlock] | None = None
    tool_specs: list[ToolSpec] | None = None
    tool_choice: ToolChoice | None = None
    kwargs: dict[str, Any] = field(default_factory=lambda: {})


ScriptedTurn = Message | BaseException | Callable[[ModelRequest], Message | BaseException]
"""One turn of a script: a reply, an error to raise, or a function choosing either per request.

An exception class works like an instance: it is raised when its turn comes.
"""


class ScriptExhaustedError(AssertionError):
    """The code under test called the model more often than the script has turns.

    An `AssertionError`, because it is a failed expectation of the test (the agent looped once
    more than the test author expected), not a model failure that retry middleware should
    handle.
    """


class ScriptedModel:
    """A `strands_middleware.models.Model` that answers each call with the next scripted turn.

    Args:
        turns: The script, played in order, one item per model call. A `Message` is streamed
            back as Converse chunks with stop reason ``"tool_use"`` when it holds a tool use and
            ``"end_turn"`` otherwise. An exception instance (or class) is raised when its turn is
            requested, as a provider raises a throttling or validation error. A callable gets
            the `ModelRequest` and returns the message to stream or the exception to raise, for
            replies that depend on what the model was sent.
        usage: The token usage reported in every turn's metadata chunk.
        metrics: The metrics reported in every turn's metadata chunk.

    Raises:
        TypeError: A scripted message has a block the Converse stream cannot carry (only
            ``text``, ``toolUse`` and ``reasoningContent`` blocks stream).
        ValueError: A scripted block could not survive the round trip (an empty text, a tool
            input that is not a JSON object).
    """

    def __init__(
        self,
        turns: Iterable[ScriptedTurn],
        *,
        usage: Usage | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._turns = [_as_reply_function(turn, position) for position, turn in enumerate(turns, 1)]
        self._usage: Usage = (
            usage if usage is not None else {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        )
        self._metrics: Metrics = metrics if metrics is not None else {"latencyMs": 0}
        self._played = 0
        self.requests: list[ModelRequest] = []
        """Every call received so far, in order (including one that exhausted the script)."""

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been requested yet; ``0`` once the script is done."""
        return len(self._turns) - self._played

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Record the request and stream the next turn's reply (or raise its exception).

        The request is recorded and the turn consumed when iteration starts, which is when a
        real provider sends its request.

        Raises:
            ScriptExhaustedError: Every scripted turn has been played already.
        """
        request = ModelRequest(
            messages=copy.deepcopy(messages),
            system_prompt=system_prompt,
            system_prompt_content=copy.deepcopy(system_prompt_content),
            tool_specs=copy.deepcopy(tool_specs),
            tool_choice=copy.deepcopy(tool_choice),
            kwargs=dict(kwargs),
        )
        self.requests.append(request)
        message = self._next_reply(request)
        for chunk in _chunks(message, self._usage, self._metrics):
            yield chunk

    def _next_reply(self, request: ModelRequest) -> Message:
        if self._played >= len(self._turns):
            raise ScriptExhaustedError(self._exhausted_message(request))
        reply_for = self._turns[self._played]
        self._played += 1
        reply: object = reply_for(request)
        if isinstance(reply, BaseException):
            raise reply
        return _checked_message(
            reply, f"the reply of the callable for scripted turn {self._played}"
        )

    def _exhausted_message(self, request: ModelRequest) -> str:
        scripted_count = len(self._turns)
        last = _shorten(repr(request.messages[-1])) if request.messages else "(no messages)"
        return (
            f"ScriptedModel was asked for turn {len(self.requests)}, but only {scripted_count} "
            f"turn{'' if scripted_count == 1 else 's'} {'was' if scripted_count == 1 else 'were'} "
            f"scripted; the request's last message was: {last}"
        )


def scripted(*turns: ScriptedTurn) -> ScriptedModel:
    """A `ScriptedModel` playing ``turns``: ``scripted(text_turn("hi"))``."""
    return ScriptedModel(turns)


def text_turn(text: str) -> Message:
    """An assistant message holding one text block."""
    return {"role": "assistant", "content": [{"text": text}]}


def tool_turn(
    name: str,
    input: dict[str, Any],
    tool_use_id: str | None = None,
    text: str | None = None,
) -> Message:
    """An assistant message calling one tool, optionally after a text block (the model's preamble).

    Args:
        name: The tool to call.
        input: Its arguments.
        tool_use_id: The call's id; a fresh ``tooluse_...`` id when omitted, unique as a
            provider's would be. Pass one when the test asserts on it.
        text: Text to put before the call, as models often explain what they are about to do.
    """
    tool_use: ToolUse = {
        "toolUseId": tool_use_id if tool_use_id is not None else f"tooluse_{uuid.uuid4().hex}",
        "name": name,
        "input": input,
    }
    content: list[ContentBlock] = []
    if text is not None:
        content.append({"text": text})
    content.append({"toolUse": tool_use})
    return {"role": "assistant", "content": content}


# --------------------------------------------------------------------------------------------
# Private helpers: playing a message back as chunks
# --------------------------------------------------------------------------------------------

_ReplyFunction = Callable[[ModelRequest], "Message | BaseException"]


def _as_reply_function(turn: ScriptedTurn, position: int) -> _ReplyFunction:
    """Every kind of turn as the callable form, so playing a turn is one call whatever it is."""
    if isinstance(turn, BaseException):
        error = turn
        return lambda _request: error
    as_object: object = turn
    if isinstance(as_object, type) and issubclass(as_object, BaseException):
        error_class = as_object
        # A fresh instance per play, as ``raise SomeError`` would create.
        return lambda _request: error_class()
    if callable(turn):
        return turn
    # The script is frozen here: a test that edits its message object afterwards (or asserts on
    # it) must not change what the model plays.
    message = _checked_message(copy.deepcopy(turn), f"scripted turn {position}")
    return lambda _request: copy.deepcopy(message)


_STREAMABLE = ("text", "toolUse", "reasoningContent")


def _checked_message(value: object, what: str) -> Message:
    """``value`` as a `Message`, if its blocks come back unchanged from the chunk stream.

    A test asserting on the aggregated message would otherwise fail far from the cause.
    """
    message = _as_dict(value)
    if message is None:
        raise TypeError(
            f"{what} is a {type(value).__name__}; it must be an assistant Message, an exception "
            "or a callable"
        )
    content = message.get("content")
    if not isinstance(content, list):
        raise TypeError(f"{what} needs a 'content' list, got {_shorten(repr(message))}")
    for index, item in enumerate(cast("list[object]", content)):
        block = _as_dict(item)
        if block is None or len(block) != 1:
            raise TypeError(
                f"{what}: block {index} must be a dict with exactly one key, got "
                f"{_shorten(repr(item))}"
            )
        ((kind, payload),) = block.items()
        if kind not in _STREAMABLE:
            raise TypeError(
                f"{what}: block {index} is a {kind!r} block, which a model stream cannot "
                f"carry; a ScriptedModel plays {', '.join(_STREAMABLE)} blocks"
            )
        if kind == "text" and not payload:
            raise ValueError(
                f"{what}: block {index} is an empty text block; a model stream drops empty "
                "text, so the played message would not equal the scripted one"
            )
        if kind == "reasoningContent":
            _check_reasoning(payload, f"{what}: block {index}")
        if kind == "toolUse":
            _check_tool_use(payload, f"{what}: block {index}")
    return cast(Message, message)


def _check_tool_use(value: object, where: str) -> None:
    tool_use = _as_dict(value) or {}
    for key in ("toolUseId", "name"):
        if not isinstance(tool_use.get(key), str) or not tool_use.get(key):
            raise ValueError(
                f"{where} is a toolUse without a {key!r}; a model stream must name each call"
            )
    tool_input = tool_use.get("input")
    if not isinstance(tool_input, dict):
        raise ValueError(
            f"{where} has tool input {_shorten(repr(tool_input))}; tool input is streamed as "
            "JSON and must be a JSON object (a dict)"
        )
    try:
        json.dumps(tool_input)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{where} has tool input that is not JSON-serialisable ({error})"
        ) from error


def _check_reasoning(value: object, where: str) -> None:
    # The stream carries readable and redacted reasoning as separate blocks, and a readable
    # block always comes back with its text; anything else would not round-trip.
    reasoning = _as_dict(value) or {}
    if len(reasoning) != 1 or not set(reasoning) <= {"reasoningText", "redactedContent"}:
        raise ValueError(
            f"{where} must hold exactly one of 'reasoningText' and 'redactedContent', got "
            f"{_shorten(repr(value))}"
        )
    if "reasoningText" in reasoning:
        text_block = _as_dict(reasoning["reasoningText"])
        if text_block is None or "text" not in text_block:
            raise ValueError(f"{where} has reasoningText without 'text': {_shorten(repr(value))}")


def _as_dict(value: object) -> dict[str, object] | None:
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def _chunks(message: Message, usage: Usage, metrics: Metrics) -> list[StreamEvent]:
    """The Converse chunk stream a provider would send for ``message``."""
    chunks: list[StreamEvent] = [{"messageStart": {"role": message["role"]}}]
    has_tool_use = False
    for index, block in enumerate(message["content"]):
        if "text" in block:
            chunks.append({"contentBlockStart": {"contentBlockIndex": index, "start": {}}})
            chunks.extend(
                {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": part}}}
                for part in _split(block["text"])
            )
        elif "toolUse" in block:
            has_tool_use = True
            tool_use = block["toolUse"]
            start: StreamEvent = {
                "contentBlockStart": {
                    "contentBlockIndex": index,
                    "start": {
                        "toolUse": {"toolUseId": tool_use["toolUseId"], "name": tool_use["name"]}
                    },
                }
            }
            if "reasoningSignature" in tool_use:
                start["contentBlockStart"]["start"]["toolUse"]["reasoningSignature"] = tool_use[
                    "reasoningSignature"
                ]
            chunks.append(start)
            chunks.extend(
                {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"toolUse": {"input": part}},
                    }
                }
                for part in _split(json.dumps(tool_use["input"]))
            )
        elif "reasoningContent" in block:
            chunks.append({"contentBlockStart": {"contentBlockIndex": index, "start": {}}})
            chunks.extend(_reasoning_deltas(block["reasoningContent"], index))
        chunks.append({"contentBlockStop": {"contentBlockIndex": index}})
    stop_reason: StopReason = "tool_use" if has_tool_use else "end_turn"
    chunks.append({"messageStop": {"stopReason": stop_reason}})
    chunks.append({"metadata": {"usage": copy.deepcopy(usage), "metrics": copy.deepcopy(metrics)}})
    return chunks


def _reasoning_deltas(reasoning: ReasoningContentBlock, index: int) -> list[StreamEvent]:
    deltas: list[StreamEvent] = []
    if "reasoningText" in reasoning:
        reasoning_text = reasoning["reasoningText"]
        deltas.extend(
            {
                "contentBlockDelta": {
                    "contentBlockIndex": index,
                    "delta": {"reasoningContent": {"text": part}},
                }
            }
            for part in _split(reasoning_text.get("text", ""))
        )
        if "signature" in reasoning_text:
            deltas.append(
                {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"reasoningContent": {"signature": reasoning_text["signature"]}},
                    }
                }
            )
    if "redactedContent" in reasoning:
        deltas.append(
            {
                "contentBlockDelta": {
                    "contentBlockIndex": index,
                    "delta": {
                        "reasoningContent": {"redactedContent": reasoning["redactedContent"]}
                    },
                }
            }
        )
    return deltas


def _split(text: str) -> list[str]:
    """``text`` in two fragments (one if it is a single character).

    Two is the fewest that proves the consumer joins fragments instead of taking the first.
    """
    if len(text) < 2:
        return [text]
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def _shorten(text: str) -> str:
    if len(text) <= _SHOWN_LENGTH:
        return text
    return f"{text[:_SHOWN_LENGTH]}... ({len(text)} characters)"
