"""The tool stage in front of any MCP server: a proxy process, or a gate in your own server.

Every ``tools/call`` runs through ExecuteToolStage, so the middleware and catalog items written
for agents (approval gates, redaction, rate and call limits, caches, mocks, tracing) guard MCP
tools unchanged, whatever client calls them. Interrupts are asked of the client's user through
MCP elicitation. Needs the ``mcp`` extra (``pip install "strands-middleware[mcp]"``).

* `McpProxy`: a proxy server forwarding to one upstream (a stdio command or a URL); also
  ``python -m strands_middleware.mcp proxy --middleware MODULE:ATTR -- COMMAND [ARG ...]``.
* `ToolGate`: the same on a server you run yourself, as one of its server middleware.
"""

import re as _re
from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

try:
    _MCP = _version("mcp")
except _PackageNotFoundError as _missing:
    raise ImportError(
        'strands_middleware.mcp needs the mcp SDK: pip install "strands-middleware[mcp]"'
    ) from _missing
if tuple(int(part) for part in _re.findall(r"\d+", _MCP)[:2]) < (1, 23):
    # Older 1.x releases lack client and server APIs the gateway calls; without this, the
    # failure would be an AttributeError deep inside a call.
    raise ImportError(
        f"strands_middleware.mcp needs the mcp SDK 1.23 or newer, and mcp {_MCP} is installed: "
        'pip install "strands-middleware[mcp]" (mcp>=1.23.0,<2.2)'
    )

from ._gate import APPROVAL_SCHEMA, ToolGate
from ._proxy import McpProxy
from ._upstream import UpstreamUnavailableError

__all__ = ["APPROVAL_SCHEMA", "McpProxy", "ToolGate", "UpstreamUnavailableError"]
