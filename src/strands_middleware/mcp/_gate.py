"""`ToolGate`: every ``tools/call`` a low-level MCP server receives, run through ExecuteToolStage.

The gate is a server middleware of the ``mcp`` SDK (``(ctx, call_next) -> result``): it sits in
front of a server's own ``tools/call`` handler, whatever that handler is (the proxy's forwarder
or a tool of the user's own server), and the handler is the stage's tool. It runs the stage the
way the reference agent does (`strands_middleware.host._tool_call`), so every ExecuteToolStage
item of the catalog behaves here as on an agent.

A handler's interrupt is asked of the client's user. On a connection where the server may send
requests to the client, that is an ``elicitation/create`` request; where it may not (the
2026-07-28 protocol), the call answers with an ``InputRequiredResult`` and continues when the
client sends the call again with the answers and the ``requestState`` it was given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import secrets
import threading
from collections import OrderedDict
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

from mcp import types

from ..content import ToolResult, ToolSpec, ToolUse
from ..engine._registry import MiddlewareSource
from ..engine._stage import MiddlewareStage
from ..events import ToolInterruptEvent, ToolResultEvent
from ..exceptions import InterruptException
from ..experimental import AgentStreamStage
from ..host._mixin import MiddlewareHostMixin
from ..host._tool_call import make_tool_terminal, run_tool_stage, tool_call_context
from ..interrupts import Interrupt
from ..stages._execute_tool import ExecuteToolStage
from ..stages._invoke_model import InvokeModelStage
from ._results import call_tool_result, copied, tool_result, tool_spec, wire_of
from ._sdk import SdkError, can_send_request, install_gate, sdk_error

if TYPE_CHECKING:
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

__all__ = ["APPROVAL_SCHEMA", "ToolGate"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {
            "type": "string",
            "title": "Decision",
            "enum": ["approve", "deny"],
            "description": "Run the tool call (approve) or refuse it (deny).",
        },
        "message": {
            "type": "string",
            "title": "Message",
            "description": "Why, when denying (optional).",
        },
    },
    "required": ["decision"],
}
"""The form an interrupt is asked with: a decision and an optional message."""

_STATE_PREFIX = "strands-middleware-interrupt:"
_MAX_PAUSED = 1024
_MAX_ROUNDS = 16
_NO_MODEL = (
    "an MCP server sees tool calls only, so middleware on {stage} would never run: {names}. "
    "Register ExecuteToolStage middleware on the gateway, and model middleware on the agent."
)


@dataclass
class _Paused:
    """A call waiting for the client to send it again with its answers (2026-07-28 protocol)."""

    tool_use: ToolUse
    answers: dict[str, Interrupt]
    asked: list[Interrupt]


@dataclass
class _Call:
    """One ``tools/call`` as the gate handles it."""

    ctx: ServerRequestContext[Any, Any]
    call_next: CallNext
    params: dict[str, Any]
    tool_use: ToolUse
    answers: dict[str, Interrupt] = field(default_factory=lambda: {})


class ToolGate(MiddlewareHostMixin):
    """Runs every ``tools/call`` of a low-level MCP server through ExecuteToolStage.

    Register it as a server middleware: ``server.middleware.append(gate)`` on a low-level
    ``mcp.server.lowlevel.Server``, or ``MCPServer(..., middleware=[gate])`` (mcp 2.x); or with
    ``gate.install(server)``, which works on both SDK lines (on 1.x, call it once the server's
    ``tools/call`` handler is registered: 1.x servers have no middleware). The server's own
    ``tools/call`` handler is the tool; the handlers see ``tool_use = {"toolUseId", "name",
    "input"}`` (the call's arguments) and the tool's spec from the server's ``tools/list``.

    Handlers answering without ``next_fn`` keep the call from the server's tool; a handler's
    exception becomes an error result naming the tool; an interrupt is asked of the client's
    user (see the module notes). A stage other than ExecuteToolStage is refused at
    registration: no model call passes through an MCP server.

    Example:
        ```python
        from mcp.server.lowlevel import Server

        from strands_middleware.catalog import ToolApproval
        from strands_middleware.mcp import ToolGate

        server = Server("files")
        server.middleware.append(ToolGate(ToolApproval(tools=["delete_file"])))
        ```
    """

    refused_stages: ClassVar[Mapping[MiddlewareStage[Any, Any, Any], str]] = {
        InvokeModelStage: _NO_MODEL.replace("{stage}", "InvokeModelStage"),
        AgentStreamStage: _NO_MODEL.replace("{stage}", "AgentStreamStage"),
    }

    def __init__(self, *middleware: MiddlewareSource) -> None:
        """Build a gate and register ``middleware`` on it, in the order given.

        Raises:
            UnsupportedStageError: a middleware has a handler on a stage other than
                ExecuteToolStage; nothing is registered.
        """
        self._specs: dict[str, ToolSpec] = {}
        self._output_schemas: dict[str, dict[str, Any]] = {}
        # One dict for every call through this gate: what the catalog's invocation-scoped items
        # (CallLimit, UsageBudget) count per invocation, they count per gate here.
        self.invocation_state: dict[str, Any] = {}
        self._paused: OrderedDict[str, _Paused] = OrderedDict()
        # Call ids unique to this gate without a system call per call.
        self._id_prefix = secrets.token_hex(4)
        self._numbers = itertools.count(1)
        if middleware:
            self.use(*middleware)

    def install(self, server: Any) -> None:
        """Put the gate in front of ``server``'s ``tools/call`` handler.

        ``server`` is a low-level ``mcp.server.lowlevel.Server``, a 2.x ``MCPServer`` or a 1.x
        ``FastMCP``. On mcp 2.x the gate becomes one of the server's middleware; on 1.x the
        server's ``tools/call`` handler is wrapped, so register your tools first. Installing
        the gate twice on one server installs it once.
        """
        lowlevel = getattr(server, "_lowlevel_server", None) or getattr(server, "_mcp_server", None)
        target = lowlevel if lowlevel is not None else server
        if self in getattr(target, "middleware", ()):
            return
        install_gate(target, self)

    def forget_tools(self) -> None:
        """Drop the cached tool specs: call it when the server's tool list changes."""
        self._specs.clear()
        self._output_schemas.clear()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """The server middleware: ``tools/call`` runs through the stage, the rest passes."""
        if ctx.method != "tools/call" or not self.middleware_registry.has_handlers(
            ExecuteToolStage
        ):
            return await call_next(ctx)
        params = dict(ctx.params or {})
        name = params.get("name")
        if not isinstance(name, str):
            return await call_next(ctx)  # the server refuses malformed params itself
        state = params.get("requestState")
        paused: _Paused | None = None
        responses: object = None
        if isinstance(state, str) and state.startswith(_STATE_PREFIX):
            paused = self._paused.pop(state, None)
            if paused is None or paused.tool_use["name"] != name:
                raise sdk_error(
                    types.INVALID_PARAMS,
                    f"requestState {state!r} names no paused call to tool {name!r} on this "
                    "server (it was answered already, or the server restarted): call the tool "
                    "again without it",
                )
            params.pop("requestState", None)
            responses = params.pop("inputResponses", None)
        arguments = params.get("arguments")
        tool_use: ToolUse = {
            "toolUseId": f"mcp-{self._id_prefix}-{next(self._numbers)}",
            "name": name,
            "input": dict(cast("dict[str, Any]", arguments)) if isinstance(arguments, dict) else {},
        }
        call = _Call(ctx, call_next, params, tool_use)
        if paused is not None:
            call.tool_use = paused.tool_use
            call.answers = paused.answers
            refusal = _answer(call, paused.asked, responses)
            if refusal is not None:
                return refusal
        return await self._run(call)

    async def _run(self, call: _Call) -> HandlerResult:
        for _ in range(_MAX_ROUNDS):
            outcome = await self._stage(call)
            if isinstance(outcome, tuple):
                return outcome[0]
            asked = outcome
            session = call.ctx.session
            if not can_send_request(session):
                return self._input_required(call, asked)
            for interrupt in asked:
                refusal = await _elicit(call, interrupt)
                if refusal is not None:
                    return refusal
        return _refused(call, "its middleware kept asking for approval", None)

    async def _stage(self, call: _Call) -> tuple[HandlerResult] | list[Interrupt]:
        """One pass of the stage: its result (mapped for the wire) or the interrupts it raised."""
        spec = await self._spec(call)
        tool = _ServerTool(spec, call) if spec is not None else None
        signal = threading.Event()
        context = tool_call_context(
            self,
            tool=tool,
            tool_use=call.tool_use,
            invocation_state=self.invocation_state,
            cancel_signal=signal,
            interrupts=call.answers,
        )
        result: ToolResultEvent | None = None
        stream = run_tool_stage(self.middleware_registry, context, make_tool_terminal(signal))
        try:
            async for event in stream:
                if isinstance(event, ToolInterruptEvent):
                    return list(event.interrupts)
                if isinstance(event, ToolResultEvent):
                    result = event
        except InterruptException as paused:
            return [paused.interrupt]
        except asyncio.CancelledError:
            # The client cancelled the call (or the server is shutting down): a handler's work
            # still running in a thread learns of it from the signal.
            signal.set()
            raise
        finally:
            await stream.aclose()
        assert result is not None  # run_tool_stage ends with a result or raises
        if tool is not None and tool.answer is not None:
            wire, seen = tool.answer
            if result.tool_result == seen:
                return (wire,)  # unchanged: the server's own answer, every field kept
        answer: ToolResult = result.tool_result
        if result.exception is not None and answer["status"] == "error":
            # A failure the stage caught (a handler's, or the tool's): say which tool it was.
            content = list(answer["content"])
            first = next((i for i, block in enumerate(content) if "text" in block), None)
            if first is None:
                content.insert(0, {"text": f"tool {call.tool_use['name']!r} failed."})
            else:
                text = content[first].get("text", "")
                content[first] = {"text": f"tool {call.tool_use['name']!r} failed. {text}"}
            answer = {"toolUseId": answer["toolUseId"], "status": "error", "content": content}
        mapped = call_tool_result(answer)
        schema = self._output_schemas.get(call.tool_use["name"])
        if schema is not None and not mapped.get("isError") and "structuredContent" not in mapped:
            structured = _structured(mapped, schema)
            if structured is not None:
                mapped["structuredContent"] = structured
        return (types.CallToolResult.model_validate(mapped),)

    async def _spec(self, call: _Call) -> ToolSpec | None:
        name = call.tool_use["name"]
        spec = self._specs.get(name)
        if spec is None:
            await self._list_tools(call)
            spec = self._specs.get(name)
        return spec

    async def _list_tools(self, call: _Call) -> None:
        """Read the server's tool list through its own ``tools/list`` handler."""
        specs: dict[str, ToolSpec] = {}
        schemas: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        while True:
            # The request's _meta goes along: on the 2026-07-28 protocol it carries the envelope
            # (protocol version, client capabilities) every request must have.
            params: dict[str, Any] = {k: v for k, v in call.params.items() if k == "_meta"}
            if cursor is not None:
                params["cursor"] = cursor
            listed = await call.call_next(
                dataclasses.replace(call.ctx, method="tools/list", params=params)
            )
            page = wire_of(listed)
            tools = cast("list[dict[str, Any]]", page.get("tools") or [])
            specs.update((tool["name"], tool_spec(tool)) for tool in tools)
            schemas.update(
                (tool["name"], tool["outputSchema"]) for tool in tools if tool.get("outputSchema")
            )
            cursor = page.get("nextCursor")
            if not cursor:
                break
        self._specs = specs
        self._output_schemas = schemas

    def _input_required(self, call: _Call, asked: list[Interrupt]) -> HandlerResult:
        state = f"{_STATE_PREFIX}{secrets.token_urlsafe(24)}"
        self._paused[state] = _Paused(call.tool_use, call.answers, asked)
        while len(self._paused) > _MAX_PAUSED:
            self._paused.popitem(last=False)  # the oldest unanswered call is forgotten
        requests: dict[str, types.InputRequest] = {
            interrupt.id: types.ElicitRequest(
                params=types.ElicitRequestFormParams(
                    message=_question(call, interrupt), requested_schema=APPROVAL_SCHEMA
                )
            )
            for interrupt in asked
        }
        return types.InputRequiredResult(input_requests=requests, request_state=state)


class _ServerTool:
    """The server's own ``tools/call`` handler as the stage's tool."""

    def __init__(self, spec: ToolSpec, call: _Call) -> None:
        self._spec = spec
        self._call = call
        self.answer: tuple[HandlerResult, Any] | None = None

    @property
    def tool_name(self) -> str:
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        return self._spec

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        # What a handler changed (the arguments, even the name) is what the server is asked.
        params = {**self._call.params, "name": tool_use["name"], "arguments": tool_use["input"]}
        ctx = self._call.ctx
        if params != ctx.params:
            ctx = dataclasses.replace(ctx, params=params)
        wire = await self._call.call_next(ctx)
        raw = wire_of(wire)
        if raw.get("resultType") == "input_required":
            yield ToolResultEvent.error(
                tool_use["toolUseId"],
                f"tool {tool_use['name']!r} asked for more input (InputRequiredResult), which a "
                "call through ExecuteToolStage middleware cannot carry",
            )
            return
        # Handlers may edit the result they see in place: "unchanged" is checked against a copy.
        seen = tool_result(tool_use["toolUseId"], raw)
        self.answer = (wire, seen)
        yield ToolResultEvent(copied(seen))


def _structured(result: dict[str, Any], schema: dict[str, Any]) -> Any:
    """Structured content for a rewritten answer to a tool with an output schema, or None.

    Clients refuse a successful result without it. A handler's answer that is one text block
    gives it: JSON text holding an object is that object; other text fills the schema's one
    string property (the shape SDK servers give a tool returning a string).
    """
    blocks = cast("list[dict[str, Any]]", result.get("content") or [])
    texts = [str(block["text"]) for block in blocks if block.get("type") == "text"]
    if len(texts) != 1:
        return None
    try:
        value: object = json.loads(texts[0])
    except ValueError:
        value = None
    if isinstance(value, dict):
        return cast("dict[str, Any]", value)
    properties = cast("dict[str, Any]", schema.get("properties") or {})
    if len(properties) == 1:
        ((key, spec),) = properties.items()
        if isinstance(spec, dict) and cast("dict[str, Any]", spec).get("type") == "string":
            return {key: texts[0]}
    return None


def _question(call: _Call, interrupt: Interrupt) -> str:
    reason = interrupt.reason
    shown = reason if isinstance(reason, str) else json.dumps(reason, default=repr)
    return f"Tool {call.tool_use['name']!r} needs your approval ({interrupt.name}): {shown}"


async def _elicit(call: _Call, interrupt: Interrupt) -> HandlerResult | None:
    """Ask one interrupt through elicitation: None once answered, else the refusal to return."""
    session = call.ctx.session
    wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    if not session.check_client_capability(wanted):
        return _refused(
            call, "this MCP client cannot ask its user (no elicitation support)", interrupt
        )
    try:
        answer = await session.elicit_form(
            _question(call, interrupt), APPROVAL_SCHEMA, related_request_id=call.ctx.request_id
        )
    except SdkError as error:
        return _refused(call, f"asking the client's user failed ({error.error.message})", interrupt)
    return _answer(call, [interrupt], {interrupt.id: answer})


def _answer(call: _Call, asked: list[Interrupt], responses: object) -> HandlerResult | None:
    """Record the user's answers to ``asked``: None when all were given, else the refusal."""
    found: Mapping[str, Any] = (
        cast("Mapping[str, Any]", responses) if isinstance(responses, Mapping) else {}
    )
    for interrupt in asked:
        raw = found.get(interrupt.id)
        if raw is None:
            return _refused(call, "the client sent no answer for it", interrupt)
        try:
            answer = (
                raw
                if isinstance(raw, types.ElicitResult)
                else types.ElicitResult.model_validate(raw)
            )
        except ValueError:
            return _refused(call, "the client's answer was not an elicitation result", interrupt)
        if answer.action != "accept":
            return _refused(call, f"the user chose {answer.action!r}", interrupt)
        content = {k: v for k, v in (answer.content or {}).items() if v not in (None, "")}
        if content.get("decision") == "approve":
            content.pop("message", None)  # an approval carries no message
        call.answers[interrupt.id] = dataclasses.replace(interrupt, response=content)
    return None


def _refused(call: _Call, why: str, interrupt: Interrupt | None) -> HandlerResult:
    what = f" ({interrupt.name})" if interrupt is not None else ""
    text = (
        f"tool {call.tool_use['name']!r} was not called: it needs approval{what} and {why}. "
        "Approval was required; the tool did not run."
    )
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": text}], "isError": True}
    )
