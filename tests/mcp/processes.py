"""Real MCP processes for the tests: started here, talked to over their stdio, stopped by PID.

`mcp_process` starts a command and turns its stdin and stdout into the streams an
``mcp.ClientSession`` takes (JSON-RPC, one message a line), so a test holds the process itself:
its PID, its exit status, its stderr. Leaving the context closes its stdin (an MCP server's cue
to leave, which also stops a proxy's upstream), waits, then stops it by PID.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp import types
from mcp.shared.message import SessionMessage

from strands_middleware.mcp._sdk import ONE_X

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = [sys.executable, str(Path(__file__).with_name("upstream_server.py"))]
PROXY = [sys.executable, "-m", "strands_middleware.mcp", "proxy"]


@dataclass
class McpProcess:
    """A started process and the client streams over its stdio."""

    process: Process
    stderr_path: Path
    read: MemoryObjectReceiveStream[SessionMessage | Exception]
    write: MemoryObjectSendStream[SessionMessage]
    others: list[int] = field(default_factory=lambda: [])
    """PIDs of processes it started (a proxy's upstreams), stopped with it."""

    @property
    def pid(self) -> int:
        return self.process.pid

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def proxy_command(*middleware: str, upstream: list[str] | None = None) -> list[str]:
    """The proxy's command line: ``--middleware`` for each reference, then ``-- UPSTREAM``."""
    flags = [part for reference in middleware for part in ("--middleware", reference)]
    return [*PROXY, *flags, "--", *(upstream or UPSTREAM)]


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


@asynccontextmanager
async def mcp_process(
    argv: list[str], stderr_path: Path, env: dict[str, str] | None = None
) -> AsyncIterator[McpProcess]:
    with stderr_path.open("wb") as stderr:
        process = await anyio.open_process(
            argv, cwd=ROOT, env=env or environment(), stderr=stderr, start_new_session=True
        )
    read_in, read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write, write_out = anyio.create_memory_object_stream[SessionMessage](16)
    started = McpProcess(process, stderr_path, read, write)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_read_lines, process, read_in)
            group.start_soon(_write_lines, process, write_out)
            try:
                yield started
            finally:
                group.cancel_scope.cancel()
    finally:
        read.close()
        write.close()
        started.others.extend(children(process.pid))
        await _stop(process)
        for pid in started.others:
            stop_pid(pid)


async def _read_lines(
    process: Process, sink: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    assert process.stdout is not None
    buffer = ""
    async with sink:
        async for chunk in TextReceiveStream(process.stdout):
            buffer += chunk
            *lines, buffer = buffer.split("\n")
            for line in lines:
                if line.strip():
                    await sink.send(_parse(line))


def _parse(line: str) -> SessionMessage | Exception:
    try:
        if ONE_X:
            return SessionMessage(types.JSONRPCMessage.model_validate_json(line))  # type: ignore[attr-defined]
        import mcp_types

        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        return error


async def _write_lines(process: Process, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
    assert process.stdin is not None
    async with source:
        async for message in source:
            text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
            await process.stdin.send((text + "\n").encode())


async def _stop(process: Process) -> None:
    """Close stdin (a clean leave), then SIGTERM and SIGKILL the PID if it stays."""
    if process.stdin is not None:
        with suppress(Exception):
            await process.stdin.aclose()
    with anyio.move_on_after(10):
        await process.wait()
    if process.returncode is None:
        stop_pid(process.pid)
        with anyio.move_on_after(5):
            await process.wait()


def stop_pid(pid: int) -> None:
    """SIGTERM ``pid``, then SIGKILL it if it is still there after 3 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not alive(pid):
            return
        with suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and alive(pid):
            time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The PIDs of ``pid``'s child processes (Linux's /proc)."""
    found: list[int] = []
    with suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with suppress(OSError):
                found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            state = stat.read().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def is_error(result: Any) -> bool:
    """A CallToolResult's error flag, by its 2.x or 1.x name."""
    return bool(result.is_error if hasattr(result, "is_error") else result.isError)


def structured_of(result: Any) -> Any:
    """A CallToolResult's structured content, by its 2.x or 1.x name."""
    if hasattr(result, "structured_content"):
        return result.structured_content
    return result.structuredContent


def text_of(result: Any) -> str:
    """The text of a CallToolResult's content, joined."""
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
