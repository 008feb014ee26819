"""Ready-made, typed middleware: one small module per item, each runs on every host.

Every item is configured with keyword arguments and is an iterable of `Middleware`, so
``agent.use(item)`` registers all the handlers it needs.
"""

from ._stages import CallStage, CatalogMiddleware
from .retry import Retry

__all__ = ["CallStage", "CatalogMiddleware", "Retry"]
