"""`Tracing`: OpenTelemetry spans and metrics for model and tool calls, on the GenAI conventions.

Spans follow the OpenTelemetry semantic conventions for generative AI, which tracing backends
(Langfuse, Phoenix, Datadog, Grafana and others) read as they are:

* a model call is a CLIENT span named ``chat {model}`` (``chat`` when the model names no id) with
  ``gen_ai.operation.name = "chat"``, ``gen_ai.provider.name``, ``gen_ai.request.model``, and,
  when the call ends, ``gen_ai.response.finish_reasons``, ``gen_ai.usage.input_tokens`` and
  ``gen_ai.usage.output_tokens``;
* a tool call is an INTERNAL span named ``execute_tool {tool name}`` with
  ``gen_ai.operation.name = "execute_tool"``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and
  ``gen_ai.tool.type = "function"``;
* with ``agent_span=True``, a pass of the agent loop is an INTERNAL span named
  ``invoke_agent {agent name}`` (``gen_ai.operation.name = "invoke_agent"``,
  ``gen_ai.agent.name``) around the calls it makes. It is a handler on the provisional
  ``AgentStreamStage``, so only a host with that stage carries it (the others refuse it when it
  is registered).

Every span ends on every exit path, and says which in ``strands_middleware.outcome``:

* ``"ok"``: the call produced its result;
* ``"error"``: an exception, or a tool's error result. The span's status is ERROR with the error
  as its description, ``error.type`` names the exception class (``"tool_error"`` for an error
  result without one), and the exception is recorded as a span event;
* ``"interrupted"``: a pause for a human (`InterruptException`, or a `ToolInterruptEvent`). A
  pause is not an error: the status stays unset, ``strands_middleware.interrupted`` is true and
  ``strands_middleware.interrupt.names`` / ``.ids`` say what is being asked;
* ``"cancelled"``: the task was cancelled; ``"closed"``: the consumer stopped reading early.
  Neither is an error. Every exception is re-raised unchanged.

Metrics, through an OpenTelemetry meter: ``gen_ai.client.operation.duration`` (seconds, per model
and tool call, with ``error.type`` when it failed) and ``gen_ai.client.token.usage`` (tokens per
model call, ``gen_ai.token.type`` ``"input"`` or ``"output"``).

Message content (the messages, system prompt and answer of a model call; a tool's arguments and
result) is recorded only when asked, with ``record_content=True``, as the JSON attributes
``gen_ai.input.messages``, ``gen_ai.system_instructions``, ``gen_ai.output.messages``,
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``. Give ``redact=Redact(...)`` as
well and every recorded value is masked by it first, whatever order the items are registered
in; nothing the call itself sends or returns is changed.

The span is the current span *while the inner chain runs* (the model provider, the tool, and any
middleware registered after this one), so spans they open are its children. It is attached
around each step of the inner stream and detached before each event is handed on, so it never
leaks into the consumer's code between events. A span covers what is registered after it:
register `Tracing` first to time the whole call including every other middleware, or after
`ModelFallback` / `Retry` to get one span per attempt with the model actually used.

The span names before the GenAI conventions (``strands_middleware.invoke_model`` and
``strands_middleware.execute_tool``) stay available for one release with ``span_names="legacy"``;
the attributes are the same either way.

OpenTelemetry is optional (the ``otel`` extra). Without it, ``Tracing()`` is a no-op: ``enabled``
is False and it registers nothing. With the API but no SDK configured, the global tracer and
meter are OpenTelemetry's own no-ops, and a call then takes no extra hop at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

from ...engine._handlers import MiddlewareNext
from ...engine._stage import Middleware
from ...events import TypedEvent
from ...exceptions import InterruptException
from ...stages._agent_stream import AgentStreamContext, AgentStreamStage
from ...stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from .._base import CatalogMiddleware
from .._models_known import model_id as _model_id
from .._redact import Redact
from ._call import TracedCall as _Call
from ._call import TracedContent as _Content

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer

__all__ = ["EXECUTE_TOOL_SPAN", "INVOKE_MODEL_SPAN", "Tracing"]

INVOKE_MODEL_SPAN = "strands_middleware.invoke_model"
"""A model call's span name with ``span_names="legacy"`` (the name before the GenAI conventions)."""

EXECUTE_TOOL_SPAN = "strands_middleware.execute_tool"
"""A tool call's span name with ``span_names="legacy"`` (the name before the GenAI conventions)."""

_PROVIDERS: tuple[tuple[str, str], ...] = (
    ("bedrock", "aws.bedrock"),
    ("anthropic", "anthropic"),
    ("openai", "openai"),
    ("azure", "azure.ai.inference"),
    ("gemini", "gcp.gemini"),
    ("vertex", "gcp.vertex_ai"),
    ("google", "gcp.gen_ai"),
    ("mistral", "mistral_ai"),
    ("groq", "groq"),
    ("cohere", "cohere"),
    ("deepseek", "deepseek"),
    ("xai", "x_ai"),
    ("ollama", "ollama"),
    ("llama", "meta"),
)
"""Words in a model class's module or name, and the ``gen_ai.provider.name`` they stand for."""


class Tracing(CatalogMiddleware):
    """Spans and metrics on the OpenTelemetry GenAI conventions (see the module notes).

    When ``opentelemetry`` is not installed this is a no-op: ``enabled`` is False and
    ``middleware()`` returns an empty list, so registering it costs nothing.

    Example:
        ```python
        agent.use(Tracing())                                      # the global providers
        agent.use(Tracing(tracer=provider.get_tracer("my-app"), record_content=True,
                          redact=Redact()))                      # content, masked first
        ```

    Args:
        tracer: The tracer to start spans with; by default
            ``opentelemetry.trace.get_tracer(tracer_name)``, which follows the global provider
            (even one set after this is created).
        meter: The meter to record metrics with; by default
            ``opentelemetry.metrics.get_meter(tracer_name)``, which follows the global provider.
        tracer_name: The instrumentation name of the default tracer and meter.
        provider: The ``gen_ai.provider.name`` of model calls: a string, or a function of the
            model returning one (or None to leave it out). By default it is read from the model
            class's module and name (``aws.bedrock`` for strands' ``BedrockModel``, ``openai``,
            ``anthropic``, ...), and left out when nothing there names a provider.
        record_content: Record message content on the spans (off by default: content may hold
            personal data).
        redact: A `Redact` whose rules mask every recorded value first (only with
            ``record_content``).
        agent_span: Also open an ``invoke_agent`` span around each pass of the agent loop
            (needs a host with the agent-stream stage).
        span_names: ``"genai"`` (the default) or ``"legacy"`` for the names before the GenAI
            conventions, kept for one release.

    Attributes:
        enabled: Whether OpenTelemetry is available, i.e. whether anything is recorded.
        tracer: The tracer in use, or None when disabled.
        meter: The meter in use, or None when disabled.

    Raises:
        TypeError: an argument of the wrong kind.
        ValueError: ``redact`` without ``record_content``, or an unknown ``span_names``.
    """

    def __init__(
        self,
        *,
        tracer: Tracer | None = None,
        meter: Meter | None = None,
        tracer_name: str = "strands_middleware",
        provider: str | Callable[[Any], str | None] | None = None,
        record_content: bool = False,
        redact: Redact | None = None,
        agent_span: bool = False,
        span_names: Literal["genai", "legacy"] = "genai",
    ) -> None:
        given_name = cast(object, tracer_name)  # checked at run time: callers need not be typed
        if not isinstance(given_name, str) or not given_name:
            raise TypeError(
                f"Tracing(tracer_name=...) must be a non-empty string, got {tracer_name!r}"
            )
        given_provider = cast(object, provider)
        if given_provider is not None and not (
            (isinstance(given_provider, str) and given_provider) or callable(given_provider)
        ):
            raise TypeError(
                "Tracing(provider=...) takes a provider name such as 'aws.bedrock', or a "
                f"function of the model returning one, got {provider!r}"
            )
        for keyword, flag in (("record_content", record_content), ("agent_span", agent_span)):
            if not isinstance(cast(object, flag), bool):
                raise TypeError(f"Tracing({keyword}=...) must be True or False, got {flag!r}")
        if redact is not None and not isinstance(cast(object, redact), Redact):
            raise TypeError(f"Tracing(redact=...) takes a Redact, got {redact!r}")
        if redact is not None and not record_content:
            raise ValueError(
                "Tracing(redact=...) masks recorded message content, which is recorded only "
                "with record_content=True: pass both, or neither"
            )
        if span_names not in ("genai", "legacy"):
            raise ValueError(f'Tracing(span_names=...) is "genai" or "legacy", got {span_names!r}')
        self.provider = provider
        self.record_content = record_content
        self.redact = redact
        self.agent_span = agent_span
        self.span_names = span_names
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            if tracer is not None or meter is not None:
                given = "tracer" if tracer is not None else "meter"
                raise ImportError(
                    f"Tracing({given}=...) was given a {given}, but opentelemetry cannot be "
                    "imported; install it with pip install 'strands-middleware[otel]'"
                ) from None
            self.enabled = False
            self.tracer: Tracer | None = None
            self.meter: Meter | None = None
            return
        if tracer is None:
            tracer = trace.get_tracer(tracer_name)
        elif not isinstance(cast(object, tracer), trace.Tracer):
            raise TypeError(
                f"Tracing(tracer=...) takes an opentelemetry.trace.Tracer, got {tracer!r}"
            )
        self._global_meter = meter is None
        if meter is None:
            meter = metrics.get_meter(tracer_name)
        elif not isinstance(cast(object, meter), metrics.Meter):
            raise TypeError(
                f"Tracing(meter=...) takes an opentelemetry.metrics.Meter, got {meter!r}"
            )
        self.enabled = True
        self.tracer = tracer
        self.meter = meter

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        tracer, meter = self.tracer, self.meter
        if tracer is None or meter is None:
            return []
        from opentelemetry.trace import SpanKind

        duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of GenAI operations (model and tool calls)",
        )
        tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model call",
        )
        legacy = self.span_names == "legacy"
        content = _Content(self.redact) if self.record_content else None

        def model_call(context: InvokeModelContext) -> _Call:
            model = context.model
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "chat",
                "strands_middleware.stage": InvokeModelStage.name,
                "strands_middleware.model": type(model).__name__,
            }
            provider = self._provider_of(model)
            if provider is not None:
                attributes["gen_ai.provider.name"] = provider
            model_id = _model_id(model)
            if model_id is not None:
                attributes["gen_ai.request.model"] = model_id
            if content is not None:
                attributes["gen_ai.input.messages"] = content.json(context.messages)
                if context.system_prompt is not None:
                    attributes["gen_ai.system_instructions"] = content.json(context.system_prompt)
            name = INVOKE_MODEL_SPAN if legacy else _named("chat", model_id)
            span = tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
            return _Call(span, _metric_attributes(attributes), duration, tokens, content)

        def tool_call(context: ExecuteToolContext) -> _Call:
            tool_use = context.tool_use
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool_use["name"],
                "gen_ai.tool.call.id": tool_use["toolUseId"],
                "gen_ai.tool.type": "function",
                "strands_middleware.stage": ExecuteToolStage.name,
            }
            if content is not None:
                attributes["gen_ai.tool.call.arguments"] = content.json(tool_use["input"])
            name = EXECUTE_TOOL_SPAN if legacy else _named("execute_tool", tool_use["name"])
            span = tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
            return _Call(span, _metric_attributes(attributes), duration, None, content)

        def agent_pass(context: AgentStreamContext) -> _Call:
            agent_name = getattr(context.agent, "name", None)
            attributes: dict[str, Any] = {
                "gen_ai.operation.name": "invoke_agent",
                "strands_middleware.stage": AgentStreamStage.name,
            }
            if isinstance(agent_name, str) and agent_name:
                attributes["gen_ai.agent.name"] = agent_name
            else:
                agent_name = None
            span = tracer.start_span(
                _named("invoke_agent", agent_name), kind=SpanKind.INTERNAL, attributes=attributes
            )
            return _Call(span, None, None, None, None)

        global_meter = self._global_meter

        def traced(stage: Any, start: Callable[[Any], _Call]) -> Middleware[Any, Any, Any]:
            handler = _spanning(tracer, meter, global_meter, start, f"Tracing[{stage.name}]")
            return cast("Middleware[Any, Any, Any]", stage.wrap(handler))

        handlers = [traced(InvokeModelStage, model_call), traced(ExecuteToolStage, tool_call)]
        if self.agent_span:
            handlers.append(traced(AgentStreamStage, agent_pass))
        return handlers

    def _provider_of(self, model: object) -> str | None:
        provider = self.provider
        if isinstance(provider, str):
            return provider
        if provider is not None:
            named = cast(object, provider(model))
            return named if isinstance(named, str) and named else None
        where = f"{type(model).__module__}.{type(model).__qualname__}".lower()
        for word, name in _PROVIDERS:
            if word in where:
                return name
        return None


def _named(operation: str, subject: str | None) -> str:
    return f"{operation} {subject}" if subject else operation


_METRIC_KEYS = (
    "gen_ai.operation.name",
    "gen_ai.provider.name",
    "gen_ai.request.model",
    "gen_ai.tool.name",
)


def _metric_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The span attributes a metric point carries (low-cardinality ones only: no call ids)."""
    return {key: attributes[key] for key in _METRIC_KEYS if key in attributes}


def _spanning(  # noqa: PLR0915 (each path's loop is written out: a helper is a hop per event)
    tracer: Tracer,
    meter: Meter,
    global_meter: bool,
    start: Callable[[Any], _Call],
    qualname: str,
) -> Callable[[Any, MiddlewareNext[Any, TypedEvent]], AsyncIterator[TypedEvent]]:
    """A Wrap handler that runs the call inside the span ``start`` opens, and ends it.

    The handler is a plain function that decides per call whether to be a layer at all. While
    both ``tracer`` and ``meter`` are OpenTelemetry's no-ops (the API with no SDK, or the global
    ones before a provider is set), nothing would be recorded, so it returns ``next_fn(context)``
    itself and the chain hands the inner stream straight on: no span, no hop per event.
    Otherwise the call runs in ``spanned``. Its loop is written out rather than delegated to a
    helper generator: a helper would be one more hop per event, and one the chain does not know
    to close when the consumer stops early.
    """
    from opentelemetry.context import attach, detach
    from opentelemetry.trace import set_span_in_context

    tracer_is_no_op = _tracer_no_op_check(tracer)
    meter_is_no_op = _meter_no_op_check(meter, global_meter)

    def traced(context: Any, next_fn: MiddlewareNext[Any, TypedEvent]) -> AsyncIterator[TypedEvent]:
        if tracer_is_no_op() and meter_is_no_op():
            return next_fn(context)
        return spanned(context, next_fn)

    async def spanned(
        context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        record = start(context)
        try:
            span = record.span
            if not span.is_recording() and not span.get_span_context().is_valid:
                # A placeholder span (a provider that records nothing) has no identity a child
                # could inherit: making it current on each event would cost work for nothing.
                # A sampled-out span still has a valid identity and takes the path below, so
                # what runs inside the call samples alike. The metrics are recorded either way.
                async for event in next_fn(context):
                    record.observe(event)
                    yield event
                record.finish()
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
            record.end()

    traced.__qualname__ = qualname
    spanned.__qualname__ = qualname
    return traced


def _tracer_no_op_check(tracer: Tracer) -> Callable[[], bool]:
    """A check, cheap enough for every call, of whether ``tracer`` gives only placeholders.

    OpenTelemetry's `NoOpTracer` always does. The global tracer (a `ProxyTracer`) does until an
    application sets a tracer provider, which it may do after this `Tracing` was created, so
    that is asked on each call. Any other tracer may record.
    """
    from opentelemetry import trace

    if isinstance(tracer, trace.NoOpTracer):
        return lambda: True
    if isinstance(tracer, trace.ProxyTracer):
        unset = trace.ProxyTracerProvider
        get_provider = trace.get_tracer_provider
        return lambda: isinstance(get_provider(), unset)
    return lambda: False


def _meter_no_op_check(meter: Meter, global_meter: bool) -> Callable[[], bool]:
    """The same check for ``meter``: a `NoOpMeter`, or the global meter while none is set.

    The global meter provider's stand-in, before an application sets one, is not a public class
    of ``opentelemetry.metrics``; `_unset_meter_provider_class` is the one place that names it (a
    test fails the day OpenTelemetry renames it). Should it be gone, the global meter counts as
    one that may record.
    """
    from opentelemetry import metrics

    if isinstance(meter, metrics.NoOpMeter):
        return lambda: True
    unset = _unset_meter_provider_class()
    if global_meter and unset is not None:
        get_provider = metrics.get_meter_provider
        return lambda: isinstance(get_provider(), unset)
    return lambda: False


def _unset_meter_provider_class() -> type | None:
    """The class of OpenTelemetry's global meter provider before an application sets one."""
    from opentelemetry import metrics

    internal = cast(object, getattr(metrics, "_internal", None))
    found = cast(object, getattr(internal, "_ProxyMeterProvider", None))
    return found if isinstance(found, type) else None
