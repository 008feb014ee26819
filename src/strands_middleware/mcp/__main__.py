"""``python -m strands_middleware.mcp proxy ...``: see `strands_middleware.mcp`."""

import sys

from ._command_line import main

sys.exit(main())
