"""One traced call: its span, the metrics it records when it ends, and the content it keeps.

`Tracing` opens a `TracedCall` per model, tool or agent call; the call's events are shown to it as
they pass, and `TracedCall.end` closes the span and records the GenAI metrics however the call
ended. `TracedContent` turns recorded message content into the JSON a span attribute holds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ...events import ModelStopReason, ToolInterruptEvent, ToolResultEvent, TypedEvent
from ...stores._codec import json_default
from .._redact import Redact

if TYPE_CHECKING:
    from opentelemetry.metrics import Histogram
    from opentelemetry.trace import Span

__all__ = ["TracedCall", "TracedContent"]

_DESCRIPTION_LENGTH = 200


class TracedContent:
    """Message content as the JSON a span attribute holds, masked by ``redact`` first."""

    __slots__ = ("_redact",)

    def __init__(self, redact: Redact | None) -> None:
        self._redact = redact

    def json(self, value: object) -> str:
        if self._redact is not None:
            value = self._redact.redact(value)
        try:
            return json.dumps(value, default=json_default, ensure_ascii=False)
        except (TypeError, ValueError):
            return json.dumps(repr(value), ensure_ascii=False)


class TracedCall:
    """What one span has seen of its call, and the metrics it records when the call ends."""

    __slots__ = (
        "content",
        "duration",
        "error_type",
        "metric_attributes",
        "outcome",
        "result",
        "span",
        "started",
        "stop",
        "tokens",
    )

    def __init__(
        self,
        span: Span,
        metric_attributes: dict[str, Any] | None,
        duration: Histogram | None,
        tokens: Histogram | None,
        content: TracedContent | None,
    ) -> None:
        self.span = span
        self.metric_attributes = metric_attributes
        self.duration = duration
        self.tokens = tokens
        self.content = content
        self.outcome = "ok"
        self.error_type = "_OTHER"
        self.result: ToolResultEvent | None = None
        self.stop: ModelStopReason | None = None
        self.started = time.perf_counter()

    def observe(self, event: TypedEvent) -> None:
        if isinstance(event, ModelStopReason):
            self.stop = event
            _record_stop(self.span, event)
            if self.content is not None:
                self.span.set_attribute(
                    "gen_ai.output.messages", self.content.json([event.message])
                )
        elif isinstance(event, ToolResultEvent):
            self.result = event
            self.span.set_attribute("strands_middleware.tool.status", event.tool_result["status"])
            if self.content is not None:
                self.span.set_attribute(
                    "gen_ai.tool.call.result", self.content.json(event.tool_result["content"])
                )
        elif isinstance(event, ToolInterruptEvent):
            interrupts = event.interrupts
            self.interrupted([i.name for i in interrupts], [i.id for i in interrupts])

    def finish(self) -> None:
        """The stream ended: a tool's error result makes the call a failure."""
        result = self.result
        if self.outcome != "ok" or result is None or result.tool_result["status"] != "error":
            return
        texts = [item["text"] for item in result.tool_result["content"] if "text" in item]
        description = " ".join(texts) or "the tool returned an error result"
        if result.exception is not None:
            self.failed(result.exception, description)
            return
        self.outcome = "error"
        self.error_type = "tool_error"
        self.span.set_attribute("error.type", "tool_error")
        _set_error_status(self.span, description)

    def failed(self, error: BaseException, description: str) -> None:
        self.outcome = "error"
        self.error_type = type(error).__qualname__
        self.span.set_attribute("error.type", self.error_type)
        self.span.record_exception(error)
        _set_error_status(self.span, description)

    def interrupted(self, names: list[str], ids: list[str]) -> None:
        self.outcome = "interrupted"
        self.span.set_attribute("strands_middleware.interrupted", True)
        self.span.set_attribute("strands_middleware.interrupt.names", names)
        self.span.set_attribute("strands_middleware.interrupt.ids", ids)

    def end(self) -> None:
        """End the span and record the call's metrics, whatever way the call ended."""
        self.span.set_attribute("strands_middleware.outcome", self.outcome)
        self.span.end()
        attributes = self.metric_attributes
        if attributes is None or self.duration is None:
            return
        if self.outcome == "error":
            attributes = {**attributes, "error.type": self.error_type}
        self.duration.record(time.perf_counter() - self.started, attributes)
        stop = self.stop
        if self.tokens is not None and stop is not None:
            usage = cast("Mapping[str, object]", stop.usage)
            for key, kind in (("inputTokens", "input"), ("outputTokens", "output")):
                value = usage.get(key)
                if isinstance(value, int):
                    self.tokens.record(value, {**attributes, "gen_ai.token.type": kind})


def _record_stop(span: Span, stop: ModelStopReason) -> None:
    span.set_attribute("gen_ai.response.finish_reasons", (str(stop.stop_reason),))
    usage = cast("Mapping[str, object]", stop.usage)
    for key, attribute in (
        ("inputTokens", "gen_ai.usage.input_tokens"),
        ("outputTokens", "gen_ai.usage.output_tokens"),
        ("totalTokens", "gen_ai.usage.total_tokens"),
    ):
        value = usage.get(key)
        if isinstance(value, int):
            span.set_attribute(attribute, value)


def _set_error_status(span: Span, description: str) -> None:
    from opentelemetry.trace import Status, StatusCode

    if len(description) > _DESCRIPTION_LENGTH:
        description = f"{description[:_DESCRIPTION_LENGTH]}..."
    span.set_status(Status(StatusCode.ERROR, description))
