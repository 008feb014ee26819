"""The LangChain bridge's tests run where LangChain is installed (Python 3.11 and newer).

On Python 3.10 the ``langchain`` extra installs nothing (LangChain 1.5 does not support it), so
its modules are not collected there rather than skipped; the parity and catalog tests run on the
hosts that are installed.
"""

from __future__ import annotations

import importlib.util

collect_ignore = (
    []
    if importlib.util.find_spec("langchain") is not None
    else ["test_langchain_bridge.py", "langchain_host.py"]
)
