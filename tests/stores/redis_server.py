"""A real redis-server for the tests: started on a unix socket in a folder of its own.

Persistence is off (``--save ''``, ``--appendonly no``) and nothing listens on TCP
(``--port 0``), so a test server touches nothing outside its folder. It is stopped by its PID.
The tests never stand in a fake for it: `make test` installs Debian's ``redis-server`` when it is
missing, and a machine without one fails these tests with the command that fixes it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

_START_TIMEOUT = 10.0
INSTALL_HINT = (
    "redis-server is not installed; `make test` installs it "
    "(Debian: apt-get update && apt-get install -y redis-server)"
)


@dataclass
class RedisServer:
    """A running redis-server: where it listens and how to stop it."""

    folder: Path
    socket: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"unix://{self.socket}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def client(self) -> redis.Redis:
        """A synchronous client, for checking what the store wrote."""
        return redis.Redis(unix_socket_path=str(self.socket))

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): it keeps its socket but answers nothing."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a frozen server go on (SIGCONT)."""
        os.kill(self.pid, signal.SIGCONT)

    def stop(self) -> None:
        """Stop the server by its PID and wait for it to exit."""
        if self.process.poll() is not None:
            return
        self.resume()  # a frozen process cannot act on SIGTERM
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_redis_server(folder: Path) -> RedisServer:
    """Start redis-server in ``folder`` and wait until it answers PING.

    Raises:
        RuntimeError: redis-server is missing, or did not come up (its log is quoted).
    """
    executable = shutil.which("redis-server")
    if executable is None:
        raise RuntimeError(INSTALL_HINT)
    socket = folder / "redis.sock"
    log = folder / "redis.log"
    options = {
        "port": "0",  # no TCP: the unix socket only
        "unixsocket": str(socket),
        "unixsocketperm": "700",
        "save": "",  # no snapshots
        "appendonly": "no",  # no append-only file
        "dir": str(folder),
        "logfile": str(log),
        "maxmemory-policy": "noeviction",  # what limits and sessions need
    }
    arguments = [executable]
    for name, value in options.items():
        arguments += [f"--{name}", value]
    process = subprocess.Popen(
        arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    server = RedisServer(folder, socket, process)
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if socket.exists():
            try:
                with server.client() as client:
                    client.ping()
                return server
            except redis.ConnectionError:
                pass
        time.sleep(0.02)
    server.stop()
    text = log.read_text() if log.exists() else "(no log)"
    raise RuntimeError(f"redis-server did not start in {folder}:\n{text}")
