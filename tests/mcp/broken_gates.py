"""A middleware module that fails at import, for the proxy's start-up check."""

raise ImportError("this module is broken on purpose")
