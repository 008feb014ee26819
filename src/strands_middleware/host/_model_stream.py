"""Turn the chunks a model streams into the events an agent loop streams and the finished message.

A model (real or scripted) yields Converse `StreamEvent` chunks. `process_model_stream` is the
single place that reads them: it forwards every chunk, adds the delta event a UI wants, builds
the assistant `Message` and ends with the `ModelStopReason` that is ``InvokeModelStage``'s
result. It is pure (no I/O, no engine), so a host's model terminal is just
``process_model_stream(model.stream(...))``.

A stream that cannot be turned into a message raises `ModelStreamError` at the chunk that broke
it, saying what arrived and what the model should have sent: a model that silently produces a
wrong message (a dropped tool call, a half-parsed input) is much harder to debug than one that
fails loudly at the first bad chunk.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any, Literal, cast

from ..content import (
    ContentBlock,
    ContentBlockStartToolUse,
    Message,
    Metrics,
    ReasoningTextBlock,
    Role,
    StreamEvent,
    ToolUse,
    Usage,
)
from ..events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from ..exceptions import ModelStreamError

__all__ = ["MessageBuilder", "process_model_stream"]

_BlockKind = Literal["text", "toolUse", "reasoning"]

_TOOL_START_EXAMPLE = (
    "{'contentBlockStart': {'start': {'toolUse': {'toolUseId': 'tooluse_1', 'name': 'my_tool'}}}}"
)
_MESSAGE_STOP_EXAMPLE = "{'messageStop': {'stopReason': 'end_turn'}}"
_SNIPPET_LENGTH = 200


def _snippet(value: object) -> str:
    # Chunks and tool inputs can be arbitrarily long; an error message only needs enough of
    # them to be recognised.
    shown = repr(value)
    if len(shown) <= _SNIPPET_LENGTH:
        return shown
    size = len(value) if isinstance(value, str) else len(shown)
    return f"{shown[:_SNIPPET_LENGTH]}... ({size} characters)"


def _type_name(value: object) -> str:
    return type(value).__name__


class MessageBuilder:
    """Accumulates one streamed assistant message, checking the stream as it goes.

    `process_model_stream` feeds it; a host whose own loop turns its model's stream into
    chunks may feed it there instead (`feed` each chunk, then `ending`), which saves the
    generator hop between that loop and `process_model_stream` on every chunk.

    The open content block is kept as a handful of flat fields rather than an object per block,
    and its text as a list of fragments joined once at ``contentBlockStop``: this runs for every
    streamed chunk, so it avoids allocations and quadratic string concatenation.
    """

    __slots__ = (
        "_block_index",
        "_block_open",
        "_kind",
        "_next_index",
        "_parts",
        "_position",
        "_redacted_parts",
        "_signature_parts",
        "_stop_reason",
        "_tool",
        "content",
        "metrics",
        "role",
        "usage",
    )

    def __init__(self) -> None:
        self.role: Role = "assistant"
        self.content: list[ContentBlock] = []
        self.usage: Usage | None = None
        self.metrics: Metrics | None = None
        self._stop_reason: str | None = None
        self._position = 0
        self._next_index = 0
        # The open block: whether one is open, its index, what it holds (None until its first
        # delta says, for blocks opened without a toolUse start) and its fragments so far.
        self._block_open = False
        self._block_index = 0
        self._kind: _BlockKind | None = None
        self._tool: ContentBlockStartToolUse | None = None
        self._parts: list[str] = []
        self._signature_parts: list[str] = []
        self._redacted_parts: list[bytes] = []

    def _error(self, what: str) -> ModelStreamError:
        return ModelStreamError(f"malformed model stream at chunk {self._position}: {what}")

    def feed(self, chunk: StreamEvent) -> TypedEvent | None:
        """Take one chunk into the message; return the delta event it gives rise to, if any."""
        self._position += 1
        sent: Any = chunk  # what the model really sent, whatever its annotation says
        if not isinstance(sent, dict):
            raise self._error(
                f"the model yielded a {_type_name(chunk)} ({_snippet(chunk)}), not a dict; "
                "a model must yield Converse StreamEvent dicts such as "
                "{'contentBlockDelta': {'delta': {'text': 'Hello'}}}"
            )
        # Deltas are nearly every chunk of a stream, so they take the short path. Converse
        # sends one key per chunk; the checks below still handle a chunk carrying several, in
        # stream order, rather than silently dropping all but one.
        if "contentBlockDelta" in chunk and len(chunk) == 1:
            raw = chunk["contentBlockDelta"]
            # The commonest chunk of all: one more text fragment for the open text block, with
            # no index or the open block's own. Every check of the full path would pass for it,
            # so it skips them. What it reads is typed ``Any`` and checked by class
            # (``__class__``, which type checkers do not narrow to a dict of unknowns): ``cast``
            # calls would cost a call each here, on every delta.
            value: Any = raw
            if self._kind == "text" and self._stop_reason is None and value.__class__ is dict:
                size = len(value)
                delta: Any = (
                    value.get("delta")
                    if size == 1
                    or (size == 2 and value.get("contentBlockIndex") == self._block_index)
                    else None
                )
                if delta.__class__ is dict and len(delta) == 1:
                    text: Any = delta.get("text")
                    if type(text) is str:
                        self._parts.append(text)
                        return TextDeltaEvent(text)
            return self._block_delta(raw)
        event: TypedEvent | None = None
        if "messageStart" in chunk:
            self._message_start(chunk["messageStart"])
        if "contentBlockStart" in chunk:
            self._block_start(chunk["contentBlockStart"])
        if "contentBlockDelta" in chunk:
            event = self._block_delta(chunk["contentBlockDelta"])
        if "contentBlockStop" in chunk:
            self._block_stop(chunk["contentBlockStop"])
        if "messageStop" in chunk:
            self._message_stop(chunk["messageStop"])
        if "metadata" in chunk:
            self._metadata(chunk["metadata"])
        return event

    def finish(self) -> tuple[str, Message]:
        """Return the stop reason and the finished message, or fail if the stream was cut short."""
        if self._stop_reason is None:
            if self._position == 0:
                raise ModelStreamError(
                    "malformed model stream: the model yielded no chunks at all; a model must "
                    f"stream at least a reply ending in {_MESSAGE_STOP_EXAMPLE}"
                )
            still_open = f" (block {self._block_index} was still open)" if self._block_open else ""
            raise ModelStreamError(
                f"malformed model stream: it ended after {self._position} chunks without a "
                f"messageStop{still_open}; a model must end its reply with "
                f"{_MESSAGE_STOP_EXAMPLE} or another stop reason"
            )
        stop_reason = self._stop_reason
        # Some providers say "end_turn" while asking for tools; the agent loop runs tools only
        # on "tool_use", so trusting the provider would drop the calls without a trace.
        if stop_reason == "end_turn" and any("toolUse" in block for block in self.content):
            stop_reason = "tool_use"
        return stop_reason, {"role": self.role, "content": self.content}

    def ending(self) -> tuple[ModelMessageEvent, ModelStopReason]:
        """The two events that end the stream: the finished message, then the stop reason.

        Usage and metrics come from the ``metadata`` chunk, or are zero when none came.

        Raises:
            ModelStreamError: the stream was cut short (see `finish`).
        """
        stop_reason, message = self.finish()
        usage: Usage = (
            self.usage
            if self.usage is not None
            else {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        )
        metrics: Metrics = self.metrics if self.metrics is not None else {"latencyMs": 0}
        return ModelMessageEvent(message), ModelStopReason(stop_reason, message, usage, metrics)

    # -- chunk kinds ---------------------------------------------------------------------------

    def _check_dict(self, value: object, key: str, example: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self._error(
                f"{key} holds a {_type_name(value)} ({_snippet(value)}), not a dict; "
                f"a model must send {example}"
            )
        return cast("dict[str, Any]", value)

    def _check_content_allowed(self, key: str) -> None:
        if self._stop_reason is not None:
            raise self._error(
                f"{key} arrived after messageStop; a model must send all of its message before "
                "messageStop (only metadata may follow it)"
            )

    def _message_start(self, value: object) -> None:
        self._check_content_allowed("messageStart")
        start = self._check_dict(value, "messageStart", "{'messageStart': {'role': 'assistant'}}")
        role = start.get("role", "assistant")
        if role not in ("assistant", "user"):
            raise self._error(
                f"messageStart has role {role!r}; a model must send 'assistant' (or 'user')"
            )
        self.role = role

    def _open(self, index: int | None, kind: _BlockKind | None) -> None:
        self._block_open = True
        self._block_index = self._next_index if index is None else index
        self._next_index = self._block_index + 1
        self._kind = kind

    def _block_start(self, value: object) -> None:
        self._check_content_allowed("contentBlockStart")
        event = self._check_dict(
            value, "contentBlockStart", "{'contentBlockStart': {'start': {...}}}"
        )
        index = cast("int | None", event.get("contentBlockIndex"))
        start = self._check_dict(
            event.get("start", {}), "contentBlockStart.start", _TOOL_START_EXAMPLE
        )
        tool = start.get("toolUse")
        if self._block_open and self._kind is not None:
            opening = "a tool block" if tool else "a block"
            raise self._error(
                f"contentBlockStart opens {opening} while block {self._block_index} "
                f"({self._kind}) is still open; a model must close each block with "
                "{'contentBlockStop': {...}} before starting the next"
            )
        if tool is None:
            self._open(index, None)
            return
        tool = self._check_dict(tool, "contentBlockStart.start.toolUse", _TOOL_START_EXAMPLE)
        tool_use_id = tool.get("toolUseId")
        name = tool.get("name")
        if (
            not isinstance(tool_use_id, str)
            or not tool_use_id
            or not isinstance(name, str)
            or not name
        ):
            raise self._error(
                f"contentBlockStart opens a tool block without a toolUseId and a name "
                f"({_snippet(tool)}); a model must send {_TOOL_START_EXAMPLE}"
            )
        self._open(index, "toolUse")
        self._tool = cast(ContentBlockStartToolUse, tool)

    def _block_delta(self, value: object) -> TypedEvent | None:
        self._check_content_allowed("contentBlockDelta")
        event = self._check_dict(
            value, "contentBlockDelta", "{'contentBlockDelta': {'delta': {'text': 'Hello'}}}"
        )
        delta = event.get("delta")
        if not isinstance(delta, dict):
            raise self._error(
                f"contentBlockDelta has no 'delta' dict (it holds {_snippet(event)}); a "
                "model must wrap the new content, as in "
                "{'contentBlockDelta': {'delta': {'text': 'Hello'}}}"
            )
        delta = cast("dict[str, Any]", delta)
        index = cast("int | None", event.get("contentBlockIndex"))
        if self._block_open and index is not None and index != self._block_index:
            raise self._error(
                f"contentBlockDelta for block {index} arrived while block {self._block_index} is "
                "open; a model must stream blocks one at a time, closing each with "
                "contentBlockStop before the next begins"
            )
        if "text" in delta:
            text = delta["text"]
            if not isinstance(text, str):
                raise self._error(
                    f"a text delta holds a {_type_name(text)}, not a str; a model must send "
                    "{'delta': {'text': 'Hello'}}"
                )
            self._enter("text", index)
            self._parts.append(text)
            return TextDeltaEvent(text)
        if "toolUse" in delta:
            return self._tool_delta(delta["toolUse"], index)
        if "reasoningContent" in delta:
            return self._reasoning_delta(delta["reasoningContent"], index)
        # A delta kind this library does not model (citations, a provider's own): the raw chunk
        # has been forwarded as a ModelStreamEvent, which is all a consumer of it needs.
        return None

    def _enter(self, kind: _BlockKind, index: int | None) -> None:
        # Text and reasoning blocks may begin with their first delta: Converse only sends a
        # contentBlockStart for tool blocks.
        if not self._block_open:
            self._open(index, kind)
        elif self._kind is None:
            self._kind = kind
        elif self._kind != kind:
            raise self._error(
                f"a {kind} delta arrived while block {self._block_index} is a {self._kind} "
                "block; a model must close each block with contentBlockStop before streaming a "
                "different kind of content"
            )

    def _tool_delta(self, value: object, index: int | None) -> TypedEvent:
        delta = self._check_dict(
            value, "contentBlockDelta.delta.toolUse", "{'delta': {'toolUse': {'input': '{...}'}}}"
        )
        fragment = delta.get("input", "")
        if not isinstance(fragment, str):
            raise self._error(
                f"a toolUse delta holds input of type {_type_name(fragment)}; tool input is "
                "streamed as fragments of JSON text, so a model must send "
                "{'delta': {'toolUse': {'input': '{\"city\": \"Paris\"}'}}} (json.dumps a parsed "
                "input)"
            )
        tool = self._tool if self._block_open and self._kind == "toolUse" else None
        if tool is None:
            tool = self._open_tool_from_delta(delta, index)
        self._parts.append(fragment)
        return ToolUseDeltaEvent(tool["toolUseId"], tool["name"], fragment)

    def _open_tool_from_delta(
        self, delta: dict[str, Any], index: int | None
    ) -> ContentBlockStartToolUse:
        # Some providers put the id and name on the first delta instead of a contentBlockStart;
        # that still identifies the call, so it opens the tool block. Without them the input
        # belongs to no known call.
        tool_use_id = delta.get("toolUseId")
        name = delta.get("name")
        identified = isinstance(tool_use_id, str) and tool_use_id and isinstance(name, str) and name
        if not identified or (self._block_open and self._kind is not None):
            where = (
                f"block {self._block_index} is a {self._kind} block"
                if self._block_open and self._kind is not None
                else "no tool block is open"
            )
            raise self._error(
                f"a toolUse input delta arrived but {where}; a model must first open the tool "
                f"block with {_TOOL_START_EXAMPLE}"
            )
        if self._block_open:
            self._kind = "toolUse"
        else:
            self._open(index, "toolUse")
        tool: ContentBlockStartToolUse = {
            "toolUseId": cast(str, tool_use_id),
            "name": cast(str, name),
        }
        self._tool = tool
        return tool

    def _reasoning_delta(self, value: object, index: int | None) -> TypedEvent:
        delta = self._check_dict(
            value,
            "contentBlockDelta.delta.reasoningContent",
            "{'reasoningContent': {'text': '...'}}",
        )
        text = delta.get("text")
        signature = delta.get("signature")
        redacted = delta.get("redactedContent")
        if (
            (text is not None and not isinstance(text, str))
            or (signature is not None and not isinstance(signature, str))
            or (redacted is not None and not isinstance(redacted, bytes))
        ):
            raise self._error(
                f"a reasoningContent delta has parts of the wrong type ({_snippet(delta)}); "
                "a model must send text and signature as str and redactedContent as bytes"
            )
        self._enter("reasoning", index)
        if text is not None:
            self._parts.append(text)
        if signature is not None:
            self._signature_parts.append(signature)
        if redacted is not None:
            self._redacted_parts.append(redacted)
        return ReasoningDeltaEvent(text=text, signature=signature, redacted_content=redacted)

    def _block_stop(self, value: object) -> None:
        self._check_content_allowed("contentBlockStop")
        event = self._check_dict(
            value, "contentBlockStop", "{'contentBlockStop': {'contentBlockIndex': 0}}"
        )
        index = event.get("contentBlockIndex")
        if not self._block_open:
            # Closing a block that never opened (or was closed already) loses nothing.
            return
        if index is not None and index != self._block_index:
            raise self._error(
                f"contentBlockStop closes block {index} while block {self._block_index} is open; "
                "a model must close the block it opened last"
            )
        self._close()

    def _close(self) -> None:
        kind = self._kind
        if kind == "text":
            text = "".join(self._parts)
            if text:
                self.content.append({"text": text})
        elif kind == "toolUse":
            self.content.append({"toolUse": self._finish_tool_use()})
        elif kind == "reasoning":
            self._finish_reasoning()
        self._block_open = False
        self._kind = None
        self._tool = None
        self._parts = []

    def _finish_tool_use(self) -> ToolUse:
        tool = cast(ContentBlockStartToolUse, self._tool)
        raw = "".join(self._parts)
        where = f"tool {tool['name']!r} (toolUseId {tool['toolUseId']!r})"
        # A tool without arguments is commonly streamed with no input at all.
        if not raw or raw.isspace():
            parsed: object = {}
        else:
            try:
                parsed = json.loads(raw)
            except ValueError as error:
                detail = error.msg if isinstance(error, json.JSONDecodeError) else str(error)
                raise self._error(
                    f"{where} has input that is not valid JSON ({detail}): {_snippet(raw)}; the "
                    "toolUse input fragments of a block must join into one JSON object, such as "
                    '\'{"city": "Paris"}\''
                ) from error
            if not isinstance(parsed, dict):
                raise self._error(
                    f"{where} has input that is a JSON {_type_name(parsed)}, not an object: "
                    f"{_snippet(raw)}; tool input must be one JSON object, such as "
                    '\'{"city": "Paris"}\''
                )
        tool_use: ToolUse = {"toolUseId": tool["toolUseId"], "name": tool["name"], "input": parsed}
        if "reasoningSignature" in tool:
            tool_use["reasoningSignature"] = tool["reasoningSignature"]
        return tool_use

    def _finish_reasoning(self) -> None:
        if self._parts or self._signature_parts:
            reasoning: ReasoningTextBlock = {"text": "".join(self._parts)}
            if self._signature_parts:
                reasoning["signature"] = "".join(self._signature_parts)
                self._signature_parts = []
            self.content.append({"reasoningContent": {"reasoningText": reasoning}})
        if self._redacted_parts:
            self.content.append(
                {"reasoningContent": {"redactedContent": b"".join(self._redacted_parts)}}
            )
            self._redacted_parts = []

    def _message_stop(self, value: object) -> None:
        self._check_content_allowed("messageStop")
        event = self._check_dict(value, "messageStop", _MESSAGE_STOP_EXAMPLE)
        stop_reason = event.get("stopReason")
        if not isinstance(stop_reason, str) or not stop_reason:
            raise self._error(
                f"messageStop has no stopReason ({_snippet(event)}); a model must send "
                f"{_MESSAGE_STOP_EXAMPLE} or another stop reason"
            )
        # A model may end its message without closing the last block; the block is complete
        # all the same, so it is closed here rather than lost.
        if self._block_open:
            self._close()
        self._stop_reason = stop_reason

    def _metadata(self, value: object) -> None:
        event = self._check_dict(
            value, "metadata", "{'metadata': {'usage': {...}, 'metrics': {...}}}"
        )
        if "usage" in event:
            self.usage = cast(Usage, event["usage"])
        if "metrics" in event:
            self.metrics = cast(Metrics, event["metrics"])


async def process_model_stream(
    chunks: AsyncIterable[StreamEvent],
) -> AsyncGenerator[TypedEvent, None]:
    """Stream the events of one model call and end with its `ModelStopReason`.

    For every chunk it yields a `ModelStreamEvent`, followed by a `TextDeltaEvent`,
    `ToolUseDeltaEvent` or `ReasoningDeltaEvent` when the chunk adds content. After the last
    chunk it yields `ModelMessageEvent` with the assistant message (tool inputs parsed from
    JSON, an empty input meaning ``{}``) and then `ModelStopReason`, whose usage and metrics
    come from the ``metadata`` chunk, or are zero when the model sent none.

    Chunks of kinds it does not model are forwarded as `ModelStreamEvent` and otherwise ignored.
    If the stream ends early (the consumer stops, or a chunk is malformed), the chunk iterator is
    closed so the model can release its connection.

    Raises:
        ModelStreamError: The stream was malformed; the message says where and how.
    """
    builder = MessageBuilder()
    iterator = aiter(chunks)
    try:
        async for chunk in iterator:
            delta = builder.feed(chunk)
            yield ModelStreamEvent(chunk)
            if delta is not None:
                yield delta
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
    message_event, stop = builder.ending()
    yield message_event
    yield stop
