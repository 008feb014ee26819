"""Run this library's middleware on a real ``strands.Agent``.

Install with ``pip install "strands-middleware[strands]"``, then:

```python
from strands_middleware.bridges.strands import StrandsBridge

StrandsBridge.of(agent).use(timing, ToolApproval())
agent("Clean up the temp files")
```

Nothing else in the package imports ``strands``; this module needs ``strands-agents`` 1.62.0 or
newer, the first release with the public ``Agent.add_middleware`` entry point it builds on.
"""

from __future__ import annotations

try:
    # Fail here, with the fix, rather than deep inside: 1.62.0 added strands.middleware.
    import strands.middleware  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "strands_middleware.bridges.strands needs strands-agents 1.62.0 or newer (the first "
        'release with Agent.add_middleware): pip install "strands-middleware[strands]"'
    ) from error

from ._bridge import StrandsBridge
from ._tools import StrandsTool
from ._translate import HostEvent

__all__ = ["HostEvent", "StrandsBridge", "StrandsTool"]
