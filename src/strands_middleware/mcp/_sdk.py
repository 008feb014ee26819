"""What differs between the ``mcp`` SDK's 1.x and 2.x lines: the one place the gateway branches.

The gateway supports mcp 1.23-1.30 and 2.0-2.1 (the releases the bridged hosts install). Both
speak the same wire format; their Python APIs differ, and every difference the gateway meets is
answered here, through each SDK's public API:

* Server handlers. 2.x takes ``Server(on_call_tool=...)`` handlers ``(ctx, params)`` and server
  middleware ``(ctx, call_next)``. 1.x keeps ``server.request_handlers[RequestClass]``, each
  ``(request) -> ServerResult``, with the request's context in ``server.request_context`` and
  no server middleware. On 1.x, `build_server` and `install_gate` wrap those handlers so the
  gateway's handlers and its gate see a context of the 2.x shape (`Request1`).
* Models. 1.x fields are camelCase only (``isError``); 2.x fields are snake_case with camelCase
  aliases. Results are built here with `model_validate` of their wire form, which both accept.
* Errors and timeouts: 1.x ``McpError(ErrorData)``, a timeout is code 408 and
  ``read_timeout_seconds`` a ``timedelta``; 2.x ``MCPError(code, message)``, -32001, a float.
* Progress: 1.x sends it to ``ctx.meta.progressToken`` by hand; 2.x ``report_progress``.
* Requests to the client: 1.x wraps them in ``ServerRequest``. Notifications from the upstream:
  1.x wraps them in ``ServerNotification`` (``.root``).
* Protocol eras: only 2.x has the 2026-07-28 era, where a server may not send requests to the
  client and answers with an ``InputRequiredResult`` instead. Every 1.x connection may send
  requests, so the input-required path never runs there (`can_send_request`).
* Streamable HTTP: 2.x ``Server.streamable_http_app()``; 1.x builds the session manager and a
  Starlette app by hand. The HTTP client is ``streamable_http_client`` (1.24 and 2.x, yielding
  three streams in 1.x) or ``streamablehttp_client`` (1.23).
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, cast

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared import exceptions as _exceptions

if TYPE_CHECKING:
    from mcp.shared.exceptions import MCPError as SdkError
else:
    SdkError = getattr(_exceptions, "MCPError", None) or _exceptions.McpError

__all__ = [
    "IS_ERROR",
    "MCP_VERSION",
    "ONE_X",
    "STRUCTURED_CONTENT",
    "TIMEOUT_CODE",
    "Handler",
    "Request1",
    "SdkError",
    "build_server",
    "can_send_request",
    "http_app",
    "http_transport",
    "install_gate",
    "notification",
    "read_timeout",
    "report_progress",
    "sdk_error",
    "send_elicitation",
]

MCP_VERSION = version("mcp")
"""The installed ``mcp`` release."""

ONE_X = int(MCP_VERSION.split(".")[0]) < 2
"""Whether the installed SDK is of the 1.x line."""

TIMEOUT_CODE: int = 408 if ONE_X else int(getattr(types, "REQUEST_TIMEOUT", -32001))
"""The error code of an upstream call that timed out."""

IS_ERROR = "isError" if ONE_X else "is_error"
"""The attribute of a ``CallToolResult`` holding its error flag."""

STRUCTURED_CONTENT = "structuredContent" if ONE_X else "structured_content"
"""The attribute of a ``CallToolResult`` holding its structured content."""

Handler = Callable[[Any, Any], Awaitable[Any]]
"""A request handler of the 2.x shape: ``(ctx, params) -> result``."""

_ONE_X_REQUESTS: dict[str, tuple[str, str, str]] = {
    # method: (request class, params class, result class), by name: each line has its own.
    "tools/list": ("ListToolsRequest", "PaginatedRequestParams", "ListToolsResult"),
    "tools/call": ("CallToolRequest", "CallToolRequestParams", "CallToolResult"),
    "resources/list": ("ListResourcesRequest", "PaginatedRequestParams", "ListResourcesResult"),
    "resources/templates/list": (
        "ListResourceTemplatesRequest",
        "PaginatedRequestParams",
        "ListResourceTemplatesResult",
    ),
    "resources/read": ("ReadResourceRequest", "ReadResourceRequestParams", "ReadResourceResult"),
    "prompts/list": ("ListPromptsRequest", "PaginatedRequestParams", "ListPromptsResult"),
    "prompts/get": ("GetPromptRequest", "GetPromptRequestParams", "GetPromptResult"),
}

_TWO_X_HANDLERS: dict[str, str] = {
    "tools/list": "on_list_tools",
    "tools/call": "on_call_tool",
    "resources/list": "on_list_resources",
    "resources/templates/list": "on_list_resource_templates",
    "resources/read": "on_read_resource",
    "prompts/list": "on_list_prompts",
    "prompts/get": "on_get_prompt",
}


@dataclasses.dataclass
class Request1:
    """On 1.x, a request's context in the shape of 2.x's ``ServerRequestContext``."""

    method: str
    params: dict[str, Any] | None
    session: Any
    request_id: Any
    meta: Any = None


def _model(name: str) -> Any:
    return getattr(types, name)


def _dumped(params: Any) -> dict[str, Any] | None:
    if params is None:
        return None
    return cast("dict[str, Any]", params.model_dump(by_alias=True, mode="json", exclude_none=True))


def _request1(server: Any, method: str, request: Any) -> Request1:
    context = server.request_context
    return Request1(
        method=method,
        params=_dumped(request.params),
        session=context.session,
        request_id=context.request_id,
        meta=context.meta,
    )


def build_server(
    name: str,
    *,
    version: str | None,
    instructions: str | None,
    handlers: Mapping[str, Handler],
    gate: Any,
) -> Server[Any]:
    """A low-level server answering ``handlers`` (by method), ``gate`` in front of them."""
    server_class: Any = Server  # the two lines' constructors differ (module notes)
    if not ONE_X:
        named = {_TWO_X_HANDLERS[method]: handler for method, handler in handlers.items()}
        server: Server[Any] = server_class(
            name, version=version or "", instructions=instructions, **named
        )
        server.middleware.append(gate)
        return server
    legacy: Any = server_class(name, version=version, instructions=instructions)
    for method, handler in handlers.items():
        request_class, _, result_class = _ONE_X_REQUESTS[method]
        legacy.request_handlers[_model(request_class)] = _one_x_handler(
            legacy, method, handler, result_class
        )
    install_gate(legacy, gate)
    return cast("Server[Any]", legacy)


def _one_x_handler(
    server: Any, method: str, handler: Handler, result_class: str
) -> Callable[[Any], Awaitable[Any]]:
    async def handle(request: Any) -> Any:
        result = await handler(_request1(server, method, request), request.params)
        return _model("ServerResult")(_model(result_class).model_validate(result))

    return handle


def install_gate(server: Any, gate: Any) -> None:
    """Put ``gate`` in front of a low-level server's ``tools/call`` handler.

    2.x: one of the server's middleware. 1.x: the ``tools/call`` handler is wrapped; the gate's
    ``call_next`` sends a request (rebuilt from the context it is given, so a changed name or
    changed arguments reach the handler) to the server's own handler for its method.
    """
    if not ONE_X:
        server.middleware.append(gate)
        return
    handlers: dict[Any, Any] = server.request_handlers
    call_tool = _model("CallToolRequest")
    original = handlers.get(call_tool)
    if original is None:
        return  # a server without tools has no call to gate
    if getattr(original, "gate", None) is gate:
        return  # installed already

    async def call_next(ctx: Request1) -> Any:
        cls = _model(_ONE_X_REQUESTS[ctx.method][0])
        handler = original if cls is call_tool else handlers[cls]
        request = cls.model_validate({"method": ctx.method, "params": ctx.params})
        answer = await handler(request)
        return answer.root

    async def gated(request: Any) -> Any:
        result = await gate(_request1(server, "tools/call", request), call_next)
        return _model("ServerResult")(_model("CallToolResult").model_validate(result))

    gated.__dict__["gate"] = gate
    handlers[call_tool] = gated


def can_send_request(session: Any) -> bool:
    """Whether the server may send ``session``'s client a request now (always, on 1.x)."""
    return bool(getattr(session, "can_send_request", True))


def read_timeout(seconds: float) -> Any:
    """``read_timeout_seconds=`` for a client call: a ``timedelta`` on 1.x, a float on 2.x."""
    return timedelta(seconds=seconds) if ONE_X else seconds


def sdk_error(code: int, message: str) -> SdkError:
    """The SDK's own error, which its server answers as a JSON-RPC error."""
    if ONE_X:
        one_x_error: Any = SdkError  # 1.x: McpError(ErrorData)
        return cast(SdkError, one_x_error(types.ErrorData(code=code, message=message)))
    return SdkError(code, message)


async def report_progress(
    ctx: Any, progress: float, total: float | None, message: str | None
) -> None:
    """Send the client a progress notification for the request of ``ctx``, if it asked."""
    if not ONE_X:
        await ctx.session.report_progress(progress, total, message)
        return
    token = getattr(ctx.meta, "progressToken", None) if ctx.meta is not None else None
    if token is not None:
        await ctx.session.send_progress_notification(
            token, progress, total, message, related_request_id=ctx.request_id
        )


async def send_elicitation(session: Any, params: Any) -> types.ElicitResult:
    """Send the client an ``elicitation/create`` request with ``params``."""
    request: Any = types.ElicitRequest(params=params)
    if ONE_X:
        request = _model("ServerRequest")(request)
    answer: types.ElicitResult = await session.send_request(request, types.ElicitResult)
    return answer


def notification(message: Any) -> Any:
    """A notification from the upstream, unwrapped from 1.x's ``ServerNotification``."""
    return getattr(message, "root", message) if ONE_X else message


@asynccontextmanager
async def http_transport(url: str) -> AsyncGenerator[tuple[Any, Any], None]:
    """The read and write streams of a streamable HTTP connection to ``url``."""
    from mcp.client import streamable_http

    connect: Callable[[str], AbstractAsyncContextManager[Any]] = (
        getattr(streamable_http, "streamable_http_client", None)
        or streamable_http.__dict__["streamablehttp_client"]
    )
    async with connect(url) as streams:
        yield streams[0], streams[1]


def http_app(server: Server[Any], host: str) -> Any:
    """A Starlette app serving ``server`` over streamable HTTP on ``/mcp``."""
    if not ONE_X:
        return server.streamable_http_app(host=host)
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=server)

    class _Endpoint:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncGenerator[None, None]:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=_Endpoint())], lifespan=lifespan)
