"""The Redis store: every store protocol on a Redis server, through redis-py's asyncio client.

Install it with ``pip install "strands-middleware[redis]"``. This package is the only part of
the library that imports ``redis``.
"""

try:
    # Fail here, with the fix, rather than deep inside.
    import redis.asyncio  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        'strands_middleware.stores.redis needs redis-py: pip install "strands-middleware[redis]"'
    ) from error

from ._store import RedisStore

__all__ = ["RedisStore"]
