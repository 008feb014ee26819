"""The tool stage in front of any MCP server: a proxy process, or a gate in your own server.

Every ``tools/call`` runs through ExecuteToolStage, so the middleware and catalog items written
for agents (approval gates, redaction, rate and call limits, caches, mocks, tracing) guard MCP
tools unchanged, whatever client calls them. Interrupts are asked of the client's user through
MCP elicitation. Needs the ``mcp`` extra (``pip install "strands-middleware[mcp]"``).

* `McpProxy`: a proxy server forwarding to one upstream (a stdio command or a URL); also
  ``python -m strands_middleware.mcp proxy --middleware MODULE:ATTR -- COMMAND [ARG ...]``.
* `ToolGate`: the same on a server you run yourself, as one of its server middleware.
"""

from ._gate import APPROVAL_SCHEMA, ToolGate
from ._proxy import McpProxy
from ._upstream import UpstreamUnavailableError

__all__ = ["APPROVAL_SCHEMA", "McpProxy", "ToolGate", "UpstreamUnavailableError"]
