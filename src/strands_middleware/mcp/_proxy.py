"""`McpProxy`: an MCP server that forwards to one upstream server, tools guarded by a `ToolGate`.

Lists, reads and prompts are the upstream's own results, returned as they came; ``tools/call``
goes through the gate, whose tool is the forwarder here. What goes wrong upstream (it exited,
it did not answer in time, it answered something that is not MCP) becomes an error result or
an MCP error naming the upstream, and the proxy keeps serving.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Generator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar, cast

import anyio
import pydantic
from mcp import ClientSession, types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

from ..engine._registry import MiddlewareSource
from ._gate import ToolGate
from ._sdk import (
    TIMEOUT_CODE,
    SdkError,
    build_server,
    can_send_request,
    http_app,
    notification,
    read_timeout,
    report_progress,
    sdk_error,
    send_elicitation,
)
from ._upstream import Upstream, UpstreamUnavailableError

__all__ = ["McpProxy"]

_logger = logging.getLogger("strands_middleware")

Ctx = Any  # a request's context: 2.x ServerRequestContext, or its 1.x stand-in (_sdk)
T = TypeVar("T")


class McpProxy:
    """A proxy MCP server in front of one upstream MCP server.

    Every ``tools/call`` runs through ExecuteToolStage with the middleware given (the `gate`);
    ``tools/list``, resources, prompts and the upstream's list-changed notifications pass
    through. Give the upstream as ``command`` (started as a stdio subprocess, restarted when it
    exits) or as ``url`` (a streamable HTTP server).

    Example:
        ```python
        from strands_middleware.catalog import ToolApproval
        from strands_middleware.mcp import McpProxy

        proxy = McpProxy(ToolApproval(tools=["delete_file"]), command=["my-mcp-server"])
        # anyio.run(proxy.serve_stdio)  or  anyio.run(proxy.serve_http, "127.0.0.1", 8000)
        ```

    Args:
        *middleware: ExecuteToolStage middleware, catalog items or lists of them, registered
            in the order given.
        command: The upstream's command line (program and arguments).
        url: The upstream's streamable HTTP endpoint, instead of a command.
        env: The upstream process's environment (default: the proxy's own).
        cwd: The upstream process's working directory.
        name: The server name the proxy gives its clients (default: the upstream's).
        timeout: Seconds an upstream call may take before it ends with an error result.
    """

    def __init__(
        self,
        *middleware: MiddlewareSource,
        command: Sequence[str] | None = None,
        url: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        name: str | None = None,
        timeout: float = 300.0,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"McpProxy(timeout=...) must be above 0 seconds, got {timeout!r}")
        self.gate = ToolGate(*middleware)
        """The gate every tools/call goes through; ``proxy.gate.use(...)`` adds middleware."""
        self._upstream = Upstream(
            command=command,
            url=url,
            env=env,
            cwd=cwd,
            message_handler=self._from_upstream,
            elicitation_callback=self._ask_client,
        )
        self._name = name
        self._timeout = timeout
        self._client: Any = None  # the client's session, for notifications from the upstream
        self._calls: list[Any] = []  # the sessions of the tools/calls in flight, oldest first

    async def serve_stdio(self) -> None:
        """Serve MCP on this process's stdin and stdout until the client leaves.

        Raises:
            UpstreamUnavailableError: the upstream could not be started (or reached).
        """
        with _unwrapped():
            async with anyio.create_task_group() as group:
                server = await self._start(group)
                options = server.create_initialization_options(
                    _notifications(self._upstream.initialize_result)
                )
                async with stdio_server() as (read, write):
                    await server.run(read, write, options)
                group.cancel_scope.cancel()

    async def serve_http(self, host: str, port: int) -> None:
        """Serve streamable HTTP on ``http://host:port/mcp`` until cancelled.

        Raises:
            UpstreamUnavailableError: the upstream could not be started (or reached).
        """
        import uvicorn

        with _unwrapped():
            async with anyio.create_task_group() as group:
                server = await self._start(group)
                app = http_app(server, host)
                config = uvicorn.Config(
                    app, host=host, port=port, lifespan="on", log_level="warning"
                )
                await uvicorn.Server(config).serve()
                group.cancel_scope.cancel()

    async def _start(self, group: anyio.abc.TaskGroup) -> Server[Any]:
        """Connect the upstream, then build a server offering what it offers."""
        await group.start(self._upstream.run)
        return self.server()

    def server(self) -> Server[Any]:
        """The low-level server that forwards to the (connected) upstream, the gate in front."""
        init = self._upstream.initialize_result
        offered = init.capabilities if init is not None else types.ServerCapabilities()
        info = _field(init, "server_info", "serverInfo") if init is not None else None
        handlers: dict[str, Any] = {}
        if offered.tools is not None:
            handlers.update({"tools/list": self._list_tools, "tools/call": self._call_tool})
        if offered.resources is not None:
            handlers.update(
                {
                    "resources/list": self._list_resources,
                    "resources/templates/list": self._list_resource_templates,
                    "resources/read": self._read_resource,
                }
            )
        if offered.prompts is not None:
            handlers.update({"prompts/list": self._list_prompts, "prompts/get": self._get_prompt})
        return build_server(
            self._name or (info.name if info is not None else "strands-middleware-mcp-proxy"),
            version=info.version if info is not None else None,
            instructions=init.instructions if init is not None else None,
            handlers=handlers,
            gate=self.gate,
        )

    # ---- forwarding ----------------------------------------------------------------------------

    async def _session(self, ctx: Ctx) -> ClientSession:
        self._client = ctx.session
        try:
            return await self._upstream.session(self._timeout)
        except UpstreamUnavailableError as error:
            raise sdk_error(types.INTERNAL_ERROR, str(error)) from error

    async def _call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        self._client = ctx.session
        self._calls.append(ctx.session)
        try:
            return await self._forward_call(ctx, params)
        finally:
            self._calls.remove(ctx.session)

    async def _forward_call(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        try:
            session = await self._upstream.session(self._timeout)
        except UpstreamUnavailableError as error:
            return _error(f"tool {name!r} was not called: {error}")

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await report_progress(ctx, progress, total, message)

        try:
            return await session.call_tool(
                name,
                params.arguments,
                read_timeout_seconds=read_timeout(self._timeout),
                progress_callback=progress,
            )
        except SdkError as error:
            if error.error.code == types.CONNECTION_CLOSED:
                self._upstream.lost(session)
                return _error(
                    f"{self._upstream} exited during the call to tool {name!r} (it is being "
                    f"restarted; the call may or may not have taken effect): {error.error.message}"
                )
            if error.error.code == TIMEOUT_CODE:
                return _error(
                    f"{self._upstream} did not answer the call to tool {name!r} within "
                    f"{self._timeout:g} s"
                )
            return _error(
                f"{self._upstream} refused the call to tool {name!r}: {error.error.message}"
            )
        except pydantic.ValidationError as error:
            return _error(
                f"{self._upstream} answered the call to tool {name!r} with garbage: {error}"
            )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._upstream.lost(session)
            return _error(
                f"{self._upstream} is gone (it is being restarted): tool {name!r} was not called"
            )
        except RuntimeError as error:
            return _error(f"{self._upstream} answered the call to tool {name!r} wrongly: {error}")

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = await self._session(ctx)
        return await self._forward(session, session.list_tools(params=_page(params)), "tools/list")

    async def _list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        session = await self._session(ctx)
        return await self._forward(
            session, session.list_resources(params=_page(params)), "resources/list"
        )

    async def _list_resource_templates(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        session = await self._session(ctx)
        listed = session.list_resource_templates(params=_page(params))
        return await self._forward(session, listed, "resources/templates/list")

    async def _read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        session = await self._session(ctx)
        return await self._forward(session, session.read_resource(params.uri), "resources/read")

    async def _list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        session = await self._session(ctx)
        return await self._forward(
            session, session.list_prompts(params=_page(params)), "prompts/list"
        )

    async def _get_prompt(
        self, ctx: Ctx, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        session = await self._session(ctx)
        fetched = session.get_prompt(params.name, params.arguments)
        return await self._forward(session, fetched, "prompts/get")

    async def _forward(self, session: ClientSession, request: Awaitable[T], method: str) -> T:
        """Await an upstream request; its MCP errors pass on, other failures name the upstream."""
        try:
            with anyio.fail_after(self._timeout):
                return await request
        except SdkError as error:
            if error.error.code == types.CONNECTION_CLOSED:
                self._upstream.lost(session)
                raise sdk_error(
                    types.INTERNAL_ERROR,
                    f"{self._upstream} exited during {method}; it is being restarted",
                ) from error
            raise
        except TimeoutError as error:
            raise sdk_error(
                types.INTERNAL_ERROR,
                f"{self._upstream} did not answer {method} within {self._timeout:g} s",
            ) from error
        except pydantic.ValidationError as error:
            raise sdk_error(
                types.INTERNAL_ERROR, f"{self._upstream} answered {method} with garbage"
            ) from error
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as error:
            self._upstream.lost(session)
            raise sdk_error(
                types.INTERNAL_ERROR, f"{self._upstream} is gone; it is being restarted"
            ) from error

    async def _ask_client(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """Pass the upstream's own elicitation on to the client's user.

        The SDK does not say which call an upstream's request belongs to, so it goes out on the
        newest tools/call in flight (a request may be sent to the client only while one of its
        own requests is open).
        """
        open_calls = [session for session in self._calls if can_send_request(session)]
        client = open_calls[-1] if open_calls else None
        if client is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message="the proxy's client cannot be asked on this connection",
            )
        try:
            return await send_elicitation(client, params)
        except SdkError as error:
            return error.error

    async def _from_upstream(self, message: Any) -> None:
        """Pass the upstream's list-changed notifications on to the client."""
        message = notification(message)
        if isinstance(message, Exception):
            _logger.warning("%s sent something that is not MCP: %s", self._upstream, message)
            return
        client = self._client
        if isinstance(message, types.ToolListChangedNotification):
            self.gate.forget_tools()
            if client is not None:
                await client.send_tool_list_changed()
        elif isinstance(message, types.ResourceListChangedNotification) and client is not None:
            await client.send_resource_list_changed()
        elif isinstance(message, types.PromptListChangedNotification) and client is not None:
            await client.send_prompt_list_changed()
        elif isinstance(message, types.ResourceUpdatedNotification) and client is not None:
            await client.send_resource_updated(message.params.uri)


@contextmanager
def _unwrapped() -> Generator[None, None, None]:
    """Raise an upstream failure itself, not the exception group the task group wraps it in."""
    try:
        yield
    except Exception as error:
        inner: BaseException = error
        while True:
            members = getattr(inner, "exceptions", None)
            if not isinstance(members, tuple) or len(cast("tuple[object, ...]", members)) != 1:
                break
            inner = cast("tuple[BaseException, ...]", members)[0]
        if isinstance(inner, UpstreamUnavailableError) and inner is not error:
            raise inner from None
        raise


def _notifications(init: Any) -> NotificationOptions:
    """Advertise the list-changed notifications the upstream advertises."""
    caps = init.capabilities if init is not None else types.ServerCapabilities()
    return NotificationOptions(
        tools_changed=bool(caps.tools and _field(caps.tools, "list_changed", "listChanged")),
        resources_changed=bool(
            caps.resources and _field(caps.resources, "list_changed", "listChanged")
        ),
        prompts_changed=bool(caps.prompts and _field(caps.prompts, "list_changed", "listChanged")),
    )


def _field(model: Any, name: str, one_x_name: str) -> Any:
    """A model's field by its 2.x name, or its 1.x (camelCase) one."""
    return getattr(model, name, None) if hasattr(model, name) else getattr(model, one_x_name)


def _page(params: types.PaginatedRequestParams | None) -> types.PaginatedRequestParams | None:
    """The page a list asks for, without the client's ``_meta``.

    The upstream connection has its own protocol version; a 2026-07-28 client's envelope in
    ``_meta`` would make a handshake-era upstream refuse the request.
    """
    if params is None or params.cursor is None:
        return None
    return types.PaginatedRequestParams(cursor=params.cursor)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult.model_validate(
        {"content": [{"type": "text", "text": text}], "isError": True}
    )
