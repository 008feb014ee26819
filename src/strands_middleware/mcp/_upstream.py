"""The one MCP server a proxy forwards to, kept connected and restarted when it exits.

The ``mcp`` SDK's client contexts must be entered and left by one task, so a supervisor task
owns them: it connects, initializes, hands the session out, and on the upstream's end of stream
(a stdio child that exited) leaves both contexts and connects again. Calls in flight when the
upstream died fail with the SDK's "Connection closed"; the next call gets the new session.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, cast

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectSendStream
from mcp import ClientSession, StdioServerParameters
from mcp.client.session import ElicitationFnT, MessageHandlerFnT
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage

from ._sdk import ONE_X, http_transport

__all__ = ["Upstream", "UpstreamUnavailableError"]

_logger = logging.getLogger("strands_middleware")

_ONE_X_FAN_OUT = 0.5  # seconds; measured ~0.1 s (module notes of _sdk)


class UpstreamUnavailableError(RuntimeError):
    """The upstream MCP server could not be reached (it did not start, or it is restarting)."""


class Upstream:
    """A stdio command or a streamable HTTP URL, connected by a supervisor task."""

    def __init__(
        self,
        *,
        command: Sequence[str] | None = None,
        url: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        message_handler: MessageHandlerFnT | None = None,
        elicitation_callback: ElicitationFnT | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ValueError("an upstream is a command or a URL: give exactly one of them")
        if command is not None and not command:
            raise ValueError("the upstream command is empty: name the MCP server to start")
        self._command = list(command) if command is not None else None
        self._url = url
        # The SDK gives a child only a few variables by default; a proxy passes its own on.
        self._env = dict(os.environ) if env is None else env
        self._cwd = cwd
        self._message_handler = message_handler
        self._elicitation_callback = elicitation_callback
        self._session: ClientSession | None = None
        self._ready = anyio.Event()
        self._lost = anyio.Event()
        self._failure = ""
        self.restarts = 0
        self.initialize_result: Any = None

    def __str__(self) -> str:
        if self._command is not None:
            return f"upstream `{shlex.join(self._command)}`"
        return f"upstream {self._url}"

    async def session(self, wait: float) -> ClientSession:
        """The connected session, waiting up to ``wait`` seconds for a (re)start."""
        with anyio.move_on_after(wait):
            await self._ready.wait()
        session = self._session
        if session is None:
            detail = f": {self._failure}" if self._failure else ""
            raise UpstreamUnavailableError(f"{self} is not connected{detail}")
        return session

    def lost(self, session: ClientSession) -> None:
        """Report ``session`` dead (a call saw its connection close): the supervisor reconnects."""
        if session is self._session:
            self._lost.set()

    async def run(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        """Connect, reconnect after every loss, until cancelled; started once first connected.

        Raises:
            UpstreamUnavailableError: the first connection failed.
        """
        started = False
        delay = 0.1
        while True:
            try:
                async with self._connected() as session:
                    self._session = session
                    self._ready.set()
                    delay = 0.1
                    if not started:
                        started = True
                        task_status.started()
                    await self._lost.wait()
                    if ONE_X:
                        # A 1.x session left while a call awaits it never wakes that call; the
                        # "Connection closed" it sends pending calls at the end of the stream
                        # runs shortly after it: let it run first.
                        await anyio.sleep(_ONE_X_FAN_OUT)
                _logger.warning("%s ended; restarting it", self)
            except Exception as error:
                self._failure = _describe(error)
                if "Connection closed" in self._failure:
                    self._failure = (
                        "it closed the connection before answering (the process exited, or it "
                        "is not an MCP server); its stderr says more"
                    )
                if not started:
                    raise UpstreamUnavailableError(
                        f"{self} could not be started: {self._failure}"
                    ) from error
                _logger.warning("%s failed (%s); retrying in %.1f s", self, self._failure, delay)
            finally:
                self._session = None
                self._ready = anyio.Event()
                self._lost = anyio.Event()
            self.restarts += 1
            await anyio.sleep(delay)
            delay = min(delay * 2, 5.0)

    @asynccontextmanager
    async def _connected(self) -> AsyncGenerator[ClientSession, None]:
        async with self._transport() as (read, write), anyio.create_task_group() as relay_group:
            # The SDK does not expose the child process: its death shows only as the end of
            # the read stream, which this relay watches even when no call is in flight.
            send, relayed = anyio.create_memory_object_stream[SessionMessage | Exception](16)
            relay_group.start_soon(self._relay, read, send)
            try:
                async with ClientSession(
                    relayed,
                    write,
                    message_handler=self._message_handler,
                    elicitation_callback=self._elicitation_callback,
                ) as session:
                    self.initialize_result = await session.initialize()
                    yield session
            finally:
                relay_group.cancel_scope.cancel()

    def _transport(self) -> AbstractAsyncContextManager[Any]:
        if self._command is not None:
            params = StdioServerParameters(
                command=self._command[0], args=self._command[1:], env=self._env, cwd=self._cwd
            )
            return stdio_client(params)
        assert self._url is not None
        return http_transport(self._url)

    async def _relay(
        self,
        read: Any,
        send: MemoryObjectSendStream[SessionMessage | Exception],
    ) -> None:
        async with send:
            async for message in read:
                await send.send(message)
        self._failure = "its connection closed (the process exited)"
        self._lost.set()


def _describe(error: BaseException) -> str:
    """The innermost message of an exception group the SDK's task groups raise."""
    inner: BaseException = error
    # BaseExceptionGroup is a builtin from Python 3.11 only: read its members by name.
    members: object = getattr(inner, "exceptions", None)
    while isinstance(members, tuple) and len(cast("tuple[object, ...]", members)) == 1:
        first = cast("tuple[object, ...]", members)[0]
        if not isinstance(first, BaseException):
            break
        inner = first
        members = getattr(inner, "exceptions", None)
    return f"{type(inner).__name__}: {inner}"
