"""The LangChain bridge's tests run where its extra is installed (the dev extra has it).

Without LangChain its modules are not collected rather than skipped; the parity and catalog
tests run on the hosts that are installed.
"""

from __future__ import annotations

import importlib.util

collect_ignore = (
    []
    if importlib.util.find_spec("langchain") is not None
    else ["test_langchain_bridge.py", "test_langchain_paused_thread.py"]
)
