"""What the whole suite collects, by what this interpreter has installed.

The documentation site is built on Python 3.11 and newer (MkDocs Material needs it, so the dev
extra installs the docs tools there only): on 3.10 the tests of its build hook are not collected.
Every other test runs on every supported Python.
"""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("mkdocs") is not None else ["test_docs_site.py"]
