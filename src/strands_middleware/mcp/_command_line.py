"""The command line: ``python -m strands_middleware.mcp proxy --middleware MODULE:ATTR -- COMMAND``.

Mistakes in what the command names (a malformed ``MODULE:ATTR``, a module that fails to import,
an attribute that is not middleware) end the process with status 2 and one line on stderr
saying what to fix, before any upstream is started.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

import anyio

from ..engine._stage import Middleware
from ..exceptions import UnsupportedStageError

__all__ = ["main"]

_REFERENCE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_PROGRAM = "python -m strands_middleware.mcp"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        _fail(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=_PROGRAM,
        description="MCP gateway: ExecuteToolStage middleware in front of an MCP server.",
    )
    commands = parser.add_subparsers(dest="command_name", required=True, parser_class=_Parser)
    proxy = commands.add_parser(
        "proxy",
        help="serve MCP, forwarding to one upstream MCP server through the middleware",
        usage=f"{_PROGRAM} proxy --middleware MODULE:ATTR [--middleware MODULE:ATTR ...] "
        "[--http HOST:PORT] (--upstream-url URL | -- COMMAND [ARG ...])",
    )
    proxy.add_argument(
        "--middleware",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a Middleware, a catalog item, a list of them, or a function with no arguments "
        "returning one of those; repeat it to register several, in order",
    )
    proxy.add_argument(
        "--upstream-url", metavar="URL", help="a streamable HTTP upstream instead of a command"
    )
    proxy.add_argument(
        "--http",
        metavar="HOST:PORT",
        help="serve streamable HTTP on HOST:PORT (path /mcp) instead of stdio",
    )
    proxy.add_argument(
        "--timeout",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="the longest an upstream call may take (default 300)",
    )
    proxy.add_argument(
        "upstream_command",
        nargs="*",
        metavar="COMMAND",
        help="the upstream MCP server's command line, after --",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a mistake in the arguments)."""
    options = _parser().parse_args(argv)
    if bool(options.upstream_command) == bool(options.upstream_url):
        _fail("name the upstream once: either -- COMMAND [ARG ...] or --upstream-url URL")
    address = _address(options.http) if options.http else None
    # stdout will carry MCP: whatever a middleware module prints while it loads goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        middleware = [item for reference in options.middleware for item in _load(reference)]
    # Imported here, after the arguments are checked: a mistake in them is reported without
    # waiting for the MCP server stack to load.
    from ._proxy import McpProxy
    from ._upstream import UpstreamUnavailableError

    try:
        proxy = McpProxy(
            *middleware,
            command=options.upstream_command or None,
            url=options.upstream_url,
            timeout=options.timeout,
        )
    except (TypeError, ValueError, UnsupportedStageError) as error:
        _fail(str(error))
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        if address is None:
            anyio.run(proxy.serve_stdio)
        else:
            anyio.run(proxy.serve_http, *address)
    except UpstreamUnavailableError as error:
        print(f"{_PROGRAM} proxy: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _address(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        _fail(f"--http {value!r}: give HOST:PORT, e.g. 127.0.0.1:8000")
    return host.strip("[]"), int(port)


def _load(reference: str) -> list[Any]:
    """The middleware ``MODULE:ATTR`` names, as a list ready for ``use()``."""
    where = f"--middleware {reference!r}"
    if not _REFERENCE.match(reference):
        _fail(f"{where}: give MODULE:ATTR, e.g. my_package.gates:approval")
    module_name, _, attribute = reference.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as error:
        _fail(f"{where}: importing {module_name!r} raised {type(error).__name__}: {error}")
    for part in attribute.split("."):
        if not hasattr(value, part):
            _fail(f"{where}: module {module_name!r} has no attribute {attribute!r}")
        value = getattr(value, part)
    if not _is_middleware(value) and callable(value):
        try:
            value = value()
        except Exception as error:
            _fail(f"{where}: calling {attribute}() raised {type(error).__name__}: {error}")
    if isinstance(value, Middleware):
        return [value]
    if _is_middleware(value):
        items = list(value)
        if all(isinstance(item, Middleware) for item in items):
            return items
    _fail(
        f"{where} is {type(value).__name__}, not middleware: name a Middleware, a catalog item, "
        "a list of them, or a function with no arguments returning one of those"
    )


def _is_middleware(value: object) -> bool:
    return isinstance(value, Middleware) or (
        isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict))
    )


def _fail(message: str) -> NoReturn:
    print(f"{_PROGRAM} proxy: error: {message}", file=sys.stderr)
    raise SystemExit(2)
