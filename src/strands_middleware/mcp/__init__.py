"""The tool stage in front of any MCP server: a proxy process, or a gate in your own server.

Every ``tools/call`` runs through ExecuteToolStage, so the middleware and catalog items written
for agents (approval gates, redaction, rate and call limits, caches, mocks, tracing) guard MCP
tools unchanged, whatever client calls them. Interrupts are asked of the client's user through
MCP elicitation. Needs the ``mcp`` extra (``pip install "strands-middleware[mcp]"``).

* `McpProxy`: a proxy server forwarding to one upstream (a stdio command or a URL); also
  ``python -m strands_middleware.mcp proxy --middleware MODULE:ATTR -- COMMAND [ARG ...]``.
* `ToolGate`: the same on a server you run yourself, as one of its server middleware.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

try:
    _MCP = _version("mcp")
except _PackageNotFoundError as _missing:
    raise ImportError(
        'strands_middleware.mcp needs the mcp SDK: pip install "strands-middleware[mcp]"'
    ) from _missing
if int(_MCP.split(".")[0]) < 2:
    # The 1.x SDK has neither the server middleware the gate is nor the server API the proxy
    # builds on; without this, the failure would be an ImportError deep inside.
    raise ImportError(
        f"strands_middleware.mcp needs the mcp SDK 2.0 or newer, and mcp {_MCP} is installed: "
        'pip install "strands-middleware[mcp]" (mcp>=2.0.0,<2.2)'
    )

from ._gate import APPROVAL_SCHEMA, ToolGate
from ._proxy import McpProxy
from ._upstream import UpstreamUnavailableError

__all__ = ["APPROVAL_SCHEMA", "McpProxy", "ToolGate", "UpstreamUnavailableError"]
