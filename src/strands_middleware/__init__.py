"""Typed, composable middleware for AI agent loops."""

__version__ = "0.1.0"

__all__ = ["__version__"]
