"""`Tracing`: one OpenTelemetry span per model call and per tool call.

Two Wrap handlers open a span when the call starts and end it however the call ends:

* ``strands_middleware.invoke_model`` (kind CLIENT) records the stage, the model
  (``strands_middleware.model``, and ``gen_ai.request.model`` when the model's ``get_config()``
  names a ``model_id``), the stop reason (``gen_ai.response.finish_reasons``) and the token
  usage (``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.total_tokens``).
* ``strands_middleware.execute_tool`` (kind INTERNAL) records the stage, the tool
  (``gen_ai.tool.name``, ``gen_ai.tool.call.id``) and the result's status
  (``strands_middleware.tool.status``).

Every span ends on every exit path and says which one in ``strands_middleware.outcome``:

* ``"ok"``: the call produced its result;
* ``"error"``: an exception, or a tool's error result. The span's status is ERROR with the error
  as its description, ``error.type`` names the exception class (``"tool_error"`` for an error
  result without one), and the exception is recorded as a span event;
* ``"interrupted"``: a pause for a human (a middleware ``interrupt()`` raising
  `InterruptException`, or a tool's `ToolInterruptEvent`). A pause is not an error: the status
  stays unset, ``strands_middleware.interrupted`` is true and
  ``strands_middleware.interrupt.names`` / ``.ids`` say what is being asked;
* ``"cancelled"``: the task was cancelled; ``"closed"``: the consumer stopped reading early.
  Neither is an error: the caller chose to stop. Every exception is re-raised unchanged.

The span is the current span *while the inner chain runs* (the model provider, the tool, and
any middleware registered after this one), so spans they open are its children. It is attached
around each step of the inner stream and detached before each event is handed on, so it never
leaks into the consumer's code between events, and a span started elsewhere stays its parent.

Where to register it: a span covers what is registered after it. Register `Tracing` first to
time the whole call including every other middleware (a cache hit is then a short span), or
after `ModelFallback` / `Retry` to get one span per attempt with the model actually used.

OpenTelemetry is optional (the ``otel`` extra: ``pip install 'strands-middleware[otel]'``) and
imported only when a `Tracing` is created. Without it, ``Tracing()`` is a no-op: ``enabled`` is
False and it registers nothing, so an application can always register it and gets spans
wherever the API is installed. With the API but no SDK configured, the global tracer is
OpenTelemetry's own no-op.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import ModelStopReason, ToolInterruptEvent, ToolResultEvent, TypedEvent
from ..exceptions import InterruptException
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer

__all__ = ["EXECUTE_TOOL_SPAN", "INVOKE_MODEL_SPAN", "Tracing"]

INVOKE_MODEL_SPAN = "strands_middleware.invoke_model"
"""The name of a model call's span."""

EXECUTE_TOOL_SPAN = "strands_middleware.execute_tool"
"""The name of a tool call's span."""

_DESCRIPTION_LENGTH = 200


class Tracing(CatalogMiddleware):
    """Opens an OpenTelemetry span around every model call and every tool call.

    When ``opentelemetry`` is not installed this is a no-op: ``enabled`` is False and
    ``middleware()`` returns an empty list, so registering it costs nothing.

    Example:
        ```python
        agent.use(Tracing())                                   # the global tracer provider
        agent.use(Tracing(tracer=provider.get_tracer("my-app")))
        ```

    Args:
        tracer: The tracer to start spans with; by default
            ``opentelemetry.trace.get_tracer(tracer_name)``, which follows the global provider
            (even one set after this is created).
        tracer_name: The instrumentation name of the default tracer.

    Attributes:
        enabled: Whether OpenTelemetry is available, i.e. whether spans are recorded.
        tracer: The tracer in use, or None when disabled.
    """

    def __init__(
        self,
        *,
        tracer: Tracer | None = None,
        tracer_name: str = "strands_middleware",
    ) -> None:
        given_name = cast(object, tracer_name)  # checked at run time: callers need not be typed
        if not isinstance(given_name, str) or not given_name:
            raise TypeError(
                f"Tracing(tracer_name=...) must be a non-empty string, got {tracer_name!r}"
            )
        try:
            from opentelemetry import trace
        except ImportError:
            if tracer is not None:
                raise ImportError(
                    "Tracing(tracer=...) was given a tracer, but opentelemetry cannot be "
                    "imported; install it with pip install 'strands-middleware[otel]'"
                ) from None
            self.enabled = False
            self.tracer: Tracer | None = None
            return
        if tracer is None:
            tracer = trace.get_tracer(tracer_name)
        elif not isinstance(cast(object, tracer), trace.Tracer):
            raise TypeError(
                f"Tracing(tracer=...) takes an opentelemetry.trace.Tracer, got {tracer!r}"
            )
        self.enabled = True
        self.tracer = tracer

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        tracer = self.tracer
        if tracer is None:
            return []
        from opentelemetry.trace import SpanKind

        def model_span(context: InvokeModelContext) -> Span:
            model = context.model
            attributes: dict[str, str] = {
                "strands_middleware.engine._stage": InvokeModelStage.name,
                "gen_ai.operation.name": "chat",
                "strands_middleware.model": type(model).__name__,
            }
            model_id = _model_id(model)
            if model_id is not None:
                attributes["gen_ai.request.model"] = model_id
            return tracer.start_span(INVOKE_MODEL_SPAN, kind=SpanKind.CLIENT, attributes=attributes)

        def tool_span(context: ExecuteToolContext) -> Span:
            tool_use = context.tool_use
            return tracer.start_span(
                EXECUTE_TOOL_SPAN,
                kind=SpanKind.INTERNAL,
                attributes={
                    "strands_middleware.engine._stage": ExecuteToolStage.name,
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool_use["name"],
                    "gen_ai.tool.call.id": tool_use["toolUseId"],
                },
            )

        return [
            InvokeModelStage.wrap(
                _spanning(tracer, model_span, f"Tracing[{InvokeModelStage.name}]")
            ),
            ExecuteToolStage.wrap(
                _spanning(tracer, tool_span, f"Tracing[{ExecuteToolStage.name}]")
            ),
        ]


def _spanning(
    tracer: Tracer, start: Callable[[Any], Span], qualname: str
) -> Callable[[Any, MiddlewareNext[Any, TypedEvent]], AsyncIterator[TypedEvent]]:
    """A Wrap handler that runs the call inside the span ``start`` opens, and ends it.

    The handler is a plain function that decides per call whether to be a layer at all. While
    ``tracer`` is OpenTelemetry's no-op (the API with no SDK, or the global tracer before a
    provider is set) its spans are placeholders and nothing would be recorded, so it returns
    ``next_fn(context)`` itself and the chain hands the inner stream straight on: no span, no
    hop per event (see `strands_middleware.MiddlewareHandler`). Otherwise the
    call runs in `spanned`. Its loop is written out rather than delegated to a helper generator:
    a helper would be one more hop per event, and one the chain does not know to close when the
    consumer stops early.
    """
    from opentelemetry.context import attach, detach
    from opentelemetry.trace import set_span_in_context

    records_nothing = _no_op_check(tracer)

    def traced(context: Any, next_fn: MiddlewareNext[Any, TypedEvent]) -> AsyncIterator[TypedEvent]:
        if records_nothing():
            return next_fn(context)
        return spanned(context, next_fn)

    async def spanned(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        record = _CallRecord(start(context))
        try:
            span = record.span
            if not span.is_recording() and not span.get_span_context().is_valid:
                # No SDK (or a provider that records nothing): the span is a placeholder that
                # records nothing and has no identity a child could inherit, so observing events
                # or making it current on each would cost work per event for nothing. A
                # sampled-out span still has a valid identity and takes the path below, so
                # what runs inside the call samples alike.
                async for event in next_fn(context):
                    yield event
                return
            span_context = set_span_in_context(span)
            token = attach(span_context)
            try:
                stream = next_fn(context)
            finally:
                detach(token)
            while True:
                # Current while the inner chain computes the next event, never while the
                # consumer handles it.
                token = attach(span_context)
                try:
                    event = await stream.__anext__()
                except StopAsyncIteration:
                    break
                finally:
                    detach(token)
                record.observe(event)
                yield event
            record.finish()
        except InterruptException as pause:
            record.interrupted([pause.interrupt.name], [pause.interrupt.id])
            raise
        except asyncio.CancelledError:
            record.outcome = "cancelled"
            raise
        except GeneratorExit:
            record.outcome = "closed"
            raise
        except BaseException as error:
            record.failed(error, f"{type(error).__name__}: {error}")
            raise
        finally:
            record.span.set_attribute("strands_middleware.outcome", record.outcome)
            record.span.end()

    traced.__qualname__ = qualname
    spanned.__qualname__ = qualname
    return traced


def _no_op_check(tracer: Tracer) -> Callable[[], bool]:
    """A check, cheap enough for every call, of whether ``tracer`` gives only placeholders.

    OpenTelemetry's `NoOpTracer` always does. The global tracer (a `ProxyTracer`) does until an
    application sets a tracer provider, which it may do after this `Tracing` was created, so
    that is asked on each call. Any other tracer may record: its calls take the spanning path,
    which still passes events straight through when a span turns out to be a placeholder.
    """
    from opentelemetry import trace

    if isinstance(tracer, trace.NoOpTracer):
        return lambda: True
    if isinstance(tracer, trace.ProxyTracer):
        unset = trace.ProxyTracerProvider
        get_provider = trace.get_tracer_provider
        return lambda: isinstance(get_provider(), unset)
    return lambda: False


class _CallRecord:
    """What one span has seen of its call: the outcome so far and the tool result, if any."""

    __slots__ = ("outcome", "result", "span")

    def __init__(self, span: Span) -> None:
        self.span = span
        self.outcome = "ok"
        self.result: ToolResultEvent | None = None

    def observe(self, event: TypedEvent) -> None:
        if isinstance(event, ModelStopReason):
            _record_stop(self.span, event)
        elif isinstance(event, ToolResultEvent):
            self.result = event
            self.span.set_attribute("strands_middleware.tool.status", event.tool_result["status"])
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
        self.span.set_attribute("error.type", "tool_error")
        _set_error_status(self.span, description)

    def failed(self, error: BaseException, description: str) -> None:
        self.outcome = "error"
        self.span.set_attribute("error.type", type(error).__qualname__)
        self.span.record_exception(error)
        _set_error_status(self.span, description)

    def interrupted(self, names: list[str], ids: list[str]) -> None:
        self.outcome = "interrupted"
        self.span.set_attribute("strands_middleware.interrupted", True)
        self.span.set_attribute("strands_middleware.interrupt.names", names)
        self.span.set_attribute("strands_middleware.interrupt.ids", ids)


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


def _model_id(model: object) -> str | None:
    """The ``model_id`` a Strands-style model's ``get_config()`` reports, if it reports one."""
    get_config = getattr(model, "get_config", None)
    if not callable(get_config):
        return None
    try:
        config: object = get_config()
    except InterruptException:
        raise
    except Exception:  # a span attribute is not worth failing the model call for
        return None
    if isinstance(config, Mapping):
        model_id = cast("Mapping[str, object]", config).get("model_id")
        if isinstance(model_id, str):
            return model_id
    return None
