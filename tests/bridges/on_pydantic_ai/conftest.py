"""The pydantic-ai bridge's tests run where pydantic-ai is installed (Python 3.11 and newer).

On Python 3.10 the ``pydantic-ai`` extra installs nothing (pydantic-ai does not support it), so
these modules are not collected there rather than skipped.
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("pydantic_ai") is not None else ["test_*.py"]
