"""An upstream that speaks just enough MCP to be connected, then answers wrongly.

``broken`` gets a result that is not a CallToolResult; ``noise`` gets a line that is not JSON
and never an answer. Written by hand (no SDK), since an SDK server cannot misbehave like this.
"""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "broken", "inputSchema": {"type": "object"}},
    {"name": "noise", "inputSchema": {"type": "object"}},
]


def answer(request_id: object, result: object) -> None:
    print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue  # a notification, or an answer
    method = message["method"]
    if method == "initialize":
        answer(
            message["id"],
            {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "garbage", "version": "0"},
            },
        )
    elif method == "tools/list":
        answer(message["id"], {"tools": TOOLS})
    elif method == "tools/call" and message["params"]["name"] == "broken":
        answer(message["id"], {"content": "this should have been a list"})
    elif method == "tools/call":
        print("this is not JSON", flush=True)
    else:
        error = {"code": -32601, "message": f"no {method} here"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
