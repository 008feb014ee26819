"""The proxy as users run it: its command line in a subprocess, a real upstream subprocess
behind it, and a real ``mcp.ClientSession`` in front."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, types

from .conftest import StartProxy, calls
from .processes import (
    PROXY,
    UPSTREAM,
    alive,
    environment,
    is_error,
    mcp_process,
    structured_of,
    text_of,
)


def _wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def test_lists_resources_and_prompts_pass_through_unchanged(
    start_proxy: StartProxy, tmp_path: Path
) -> None:
    async with (
        mcp_process(UPSTREAM, tmp_path / "direct.stderr") as direct,
        ClientSession(direct.read, direct.write) as upstream,
    ):
        await upstream.initialize()
        expected = [
            _wire(await upstream.list_tools()),
            _wire(await upstream.read_resource("note://greeting")),
            _wire(await upstream.list_resources()),
            _wire(await upstream.list_prompts()),
            _wire(await upstream.get_prompt("review", {"code": "x = 1"})),
        ]
    notified: list[object] = []
    arrived = anyio.Event()

    async def collect(message: object) -> None:
        notified.append(message)
        arrived.set()

    async with (
        start_proxy("tests.mcp.gates:double_a") as proxy,
        ClientSession(proxy.read, proxy.write, message_handler=collect) as client,
    ):
        init = await client.initialize()
        assert _wire(init)["serverInfo"]["name"] == "upstream"
        assert init.instructions == "the test upstream"
        seen = [
            _wire(await client.list_tools()),
            _wire(await client.read_resource("note://greeting")),
            _wire(await client.list_resources()),
            _wire(await client.list_prompts()),
            _wire(await client.get_prompt("review", {"code": "x = 1"})),
        ]
        await client.call_tool("change_tools", {})  # the upstream says its tools changed
        with anyio.fail_after(10):
            await arrived.wait()
    assert seen == expected
    # 1.x hands a client the notification wrapped in ServerNotification.
    names = [type(getattr(message, "root", message)).__name__ for message in notified]
    assert names == ["ToolListChangedNotification"]


async def test_every_call_runs_through_the_middleware(
    start_proxy: StartProxy, call_log: Path
) -> None:
    async with (
        start_proxy("tests.mcp.gates:double_a", "tests.mcp.gates:shout") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        added = await client.call_tool("add", {"a": 2, "b": 3})  # double_a: 2*2 + 3
        echoed = await client.call_tool("echo", {"text": "quiet"})
        image = await client.call_tool("pixel", {})
        failed = await client.call_tool("fail", {"message": "no luck"})
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        counted = await client.call_tool("count", {"to": 2}, progress_callback=on_progress)
    assert text_of(counted) == "COUNTED"
    assert progress == [(1, 2, "1 of 2"), (2, 2, "2 of 2")]  # the upstream's progress, relayed
    assert structured_of(added) == {"sum": 7} and not is_error(added)
    assert text_of(echoed) == "QUIET"  # shout rewrote the result
    assert not is_error(image) and isinstance(image.content[0], types.ImageContent)
    assert image.content[0].model_dump(by_alias=True)["mimeType"] == "image/png"
    assert is_error(failed) and "ERROR EXECUTING TOOL FAIL" in text_of(failed)  # isError both ways
    assert calls(call_log) == ["add", "echo", "pixel", "fail"]  # count does not log


async def test_an_unchanged_result_is_the_upstreams_own(
    start_proxy: StartProxy, tmp_path: Path
) -> None:
    async with (
        mcp_process(UPSTREAM, tmp_path / "direct.stderr") as direct,
        ClientSession(direct.read, direct.write) as upstream,
    ):
        await upstream.initialize()
        expected = [_wire(await upstream.call_tool(name, args)) for name, args in _CALLS]
    async with (
        start_proxy("tests.mcp.gates:double_a") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        seen = [_wire(await client.call_tool(name, args)) for name, args in _CALLS]
    assert seen == expected


_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "same"}),
    ("pixel", {}),
    ("fail", {"message": "as it was"}),
]


async def test_a_handler_answering_alone_keeps_the_upstream_from_being_called(
    start_proxy: StartProxy, call_log: Path
) -> None:
    # tests.mcp.gates:mocked is a function with no arguments returning a catalog item's list.
    async with (
        start_proxy("tests.mcp.gates:mocked") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        mocked = await client.call_tool("echo", {"text": "hello"})
        real = await client.call_tool("add", {"a": 1, "b": 1})
    assert text_of(mocked) == "mocked echo" and not is_error(mocked)
    assert structured_of(real) == {"sum": 2}
    assert calls(call_log) == ["add"]


async def test_a_handler_exception_is_an_error_result_naming_the_tool(
    start_proxy: StartProxy, call_log: Path
) -> None:
    async with (
        start_proxy("tests.mcp.gates:explode") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        broken = await client.call_tool("echo", {"text": "hello"})
        again = await client.call_tool("add", {"a": 1, "b": 1})
    assert is_error(broken)
    assert "'echo'" in text_of(broken) and "the gate is broken" in text_of(broken)
    assert is_error(again)  # the proxy keeps serving
    assert calls(call_log) == []
    assert "explode" in proxy.stderr()  # logged, naming the handler


async def test_an_upstream_killed_mid_call_is_an_error_then_restarted(
    start_proxy: StartProxy,
) -> None:
    async with (
        start_proxy("tests.mcp.gates:double_a") as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        first = text_of(await client.call_tool("pid", {}))
        died = await client.call_tool("die", {"seconds": 0.2})
        assert is_error(died)
        assert "upstream `" in text_of(died) and "upstream_server.py" in text_of(died)
        assert "exited during the call to tool 'die'" in text_of(died)
        assert not alive(int(first))
        with anyio.fail_after(20):
            while True:  # the restart takes a moment: calls meanwhile are error results
                answer = await client.call_tool("pid", {})
                if not is_error(answer):
                    break
                await anyio.sleep(0.1)
        second = text_of(answer)
        assert second != first and alive(int(second))
        added = await client.call_tool("add", {"a": 1, "b": 2})
    assert structured_of(added) == {"sum": 4}


async def test_an_upstream_too_slow_is_an_error_naming_it(start_proxy: StartProxy) -> None:
    async with (
        start_proxy("tests.mcp.gates:double_a", extra=["--timeout", "0.5"]) as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        slow = await client.call_tool("sleep", {"seconds": 3})
        assert is_error(slow)
        assert "did not answer the call to tool 'sleep' within 0.5 s" in text_of(slow)
        assert "upstream_server.py" in text_of(slow)


async def test_an_upstream_that_cannot_start_ends_the_proxy_with_a_message(
    start_proxy: StartProxy,
) -> None:
    missing = [sys.executable, "-c", "import sys; sys.exit(5)"]
    async with start_proxy("tests.mcp.gates:double_a", upstream=missing) as proxy:
        with anyio.fail_after(20):
            status = await proxy.process.wait()
    assert status == 1
    assert "could not be started" in proxy.stderr()


@pytest.mark.parametrize(
    ("reference", "expected"),
    [
        ("no_colon_here", "give MODULE:ATTR"),
        ("tests.mcp.gates:", "give MODULE:ATTR"),
        (
            "tests.mcp.broken_gates:approval",
            "importing 'tests.mcp.broken_gates' raised ImportError",
        ),
        ("tests.mcp.no_such_module:approval", "ModuleNotFoundError"),
        ("tests.mcp.gates:missing", "has no attribute 'missing'"),
        ("tests.mcp.gates:not_middleware", "is int, not middleware"),
    ],
)
async def test_a_bad_middleware_reference_exits_with_status_2(
    start_proxy: StartProxy, call_log: Path, reference: str, expected: str
) -> None:
    async with start_proxy(reference) as proxy:
        with anyio.fail_after(20):
            status = await proxy.process.wait()
    assert status == 2
    stderr = proxy.stderr()
    assert expected in stderr and "--middleware" in stderr, stderr
    assert calls(call_log) == []


async def test_model_middleware_is_refused_at_start(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "strands_middleware.mcp",
        "proxy",
        "--middleware",
        "strands_middleware.catalog:Retry",
        "--",
        *UPSTREAM,
    ]
    async with mcp_process(argv, tmp_path / "stderr", environment()) as proxy:
        with anyio.fail_after(20):
            status = await proxy.process.wait()
    assert status == 2
    assert "sees tool calls only" in proxy.stderr()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


async def _wait_for_port(port: int, process: Any) -> None:
    with anyio.fail_after(30):
        while True:
            assert process.returncode is None, "the HTTP proxy exited"
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.1)
                continue
            await stream.aclose()
            return


async def test_a_proxy_serving_http_is_another_proxys_upstream_url(
    start_proxy: StartProxy, call_log: Path
) -> None:
    port = _free_port()
    async with start_proxy(
        "tests.mcp.gates:double_a", extra=["--http", f"127.0.0.1:{port}"]
    ) as http_proxy:
        await _wait_for_port(port, http_proxy.process)
        url = f"http://127.0.0.1:{port}/mcp"
        argv = [*PROXY, "--middleware", "tests.mcp.gates:shout", "--upstream-url", url]
        async with (
            start_proxy(argv=argv) as proxy,
            ClientSession(proxy.read, proxy.write) as client,
        ):
            await client.initialize()
            added = await client.call_tool("add", {"a": 2, "b": 3})  # doubled by the HTTP proxy
            echoed = await client.call_tool("echo", {"text": "over http"})  # shouted by this one
    assert structured_of(added) == {"sum": 7}
    assert text_of(echoed) == "OVER HTTP"
    assert calls(call_log) == ["add", "echo"]


async def test_an_upstream_answering_garbage_is_an_error_naming_it(
    start_proxy: StartProxy,
) -> None:
    garbage = [sys.executable, str(Path(__file__).with_name("garbage_server.py"))]
    async with (
        start_proxy(
            "tests.mcp.gates:double_a", extra=["--timeout", "1"], upstream=garbage
        ) as proxy,
        ClientSession(proxy.read, proxy.write) as client,
    ):
        await client.initialize()
        broken = await client.call_tool("broken", {})
        noise = await client.call_tool("noise", {})
        again = await client.call_tool("broken", {})
    assert is_error(broken) and "garbage_server.py" in text_of(broken)
    assert "answered the call to tool 'broken' with garbage" in text_of(broken)
    assert is_error(noise) and "did not answer the call to tool 'noise' within 1 s" in text_of(
        noise
    )
    assert is_error(again) and "with garbage" in text_of(again)  # still serving
