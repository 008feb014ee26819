"""`RedisStore`: every store protocol on Redis, shared by every process that uses the server.

How it keeps its promises:

* **One script per decision, on the server's clock.** Each decision (a token, a slot, a count,
  a claim) is one Lua script (`strands_middleware.stores.redis._scripts`), so no other process
  can act between its check and its write, and every time it uses is the server's ``TIME``.
* **Keys.** ``<prefix>:<concern>:{<name>}[:<part>]``: the concern is ``cache``, ``rate``,
  ``slots``, ``counter`` or ``snapshot``; the name (the item's ``name``/``key``, the cache key,
  the session id) sits in a hash tag, so all the keys of one limiter live in one Redis Cluster
  slot and its scripts can run there.
* **Leases.** A held slot expires unless renewed (`ConcurrencyLimit` renews it while the call
  runs), so a process that dies frees its slots within one lease; a waiter that stops asking
  leaves the queue within one lease too.
* **One client per event loop**, made on first use in a loop and closed when that loop shuts
  down (see `strands_middleware.stores.redis._clients`): each synchronous ``agent(...)`` call
  runs its own loop, and a redis-py client cannot move between loops.
* **Failures are bounded.** Every call is bounded by ``timeout``; a call that fails or times out
  raises `StoreError` naming the store and the operation, with the redis-py error as its cause.
  redis-py's own retries are off (a script whose reply was lost could otherwise run twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import redis.asyncio as redis_asyncio
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import NoScriptError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ...exceptions import StoreError
from ._clients import LoopClients
from ._scripts import (
    BREAKER_ADMIT,
    BREAKER_RECORD,
    COUNTER_ADD,
    RATE_REFUND,
    RATE_RESERVE,
    SLOT_ACQUIRE,
    SLOT_RELEASE,
    SLOT_RENEW,
    SNAPSHOT_PUT,
    SNAPSHOT_TAKE,
    Script,
)

__all__ = ["RedisStore"]

Client = redis_asyncio.Redis
"""A redis-py asyncio client (a ``RedisCluster`` works too: each script's keys share a slot)."""

_DEFAULT_PREFIX = "strands-middleware"
_MICROS = 1_000_000
_FIRST_POLL = 0.002
_URL_FORMS = (
    "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
    "unix:///path/to/socket[?db=N]"
)
_QUERY_PASSWORD = re.compile(r"(?i)((?:^|&)password=)[^&]*")


class RedisStore:
    """Caches, rate limits, slots, counters and paused sessions on one Redis server.

    Example:
        ```python
        store = RedisStore.from_url("redis://localhost:6379/0", prefix="myapp", timeout=0.5)
        agent.use(RateLimit(rate=10, burst=10, store=store, name="bedrock"))
        agent.use(ConcurrencyLimit(limit=4, store=store, name="bedrock", lease=30))
        agent.use(Cache(store=store))
        ```

    Args:
        connect: Makes a new redis-py asyncio client; called once per event loop that uses the
            store. `from_url` builds one from a URL. Give the client ``socket_timeout=None``
            (redis-py 8 defaults to 5 s): with a socket timeout, redis-py writes under
            ``asyncio.wait_for``, which before Python 3.12 can drop a cancellation. ``timeout``
            bounds each call either way; on Python 3.11+ a dropped cancellation is raised again.
        prefix: Starts every key, so several applications can share a server (no braces: the
            braces in a key are its hash tag).
        timeout: Seconds each call may take before it fails with `StoreError`.
        poll: The longest pause, in seconds, between two attempts of a waiter to get a slot.
    """

    def __init__(
        self,
        connect: Callable[[], Client],
        *,
        prefix: str = _DEFAULT_PREFIX,
        timeout: float = 1.0,
        poll: float = 0.05,
    ) -> None:
        if not callable(connect):
            raise TypeError(
                f"RedisStore(connect=...) takes a function returning a redis.asyncio client, "
                f"got {connect!r}; RedisStore.from_url(url) builds one from a URL"
            )
        given = cast(object, prefix)
        if not isinstance(given, str) or not given or "{" in given or "}" in given:
            raise ValueError(
                f"RedisStore(prefix=...) must be a non-empty str without braces (braces mark a "
                f"key's hash tag), got {prefix!r}"
            )
        for keyword, value in (("timeout", timeout), ("poll", poll)):
            if (
                isinstance(value, bool)
                or not isinstance(cast(object, value), (int, float))
                or not math.isfinite(value)
                or value <= 0
            ):
                raise ValueError(
                    f"RedisStore({keyword}=...) must be a number of seconds > 0, got {value!r}"
                )
        self.prefix = prefix
        self.timeout = float(timeout)
        self.poll = float(poll)
        self._where = "a custom connection"
        self._clients: LoopClients[Client] = LoopClients(connect, _close)

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        prefix: str = _DEFAULT_PREFIX,
        timeout: float = 1.0,
        poll: float = 0.05,
        **client_options: Any,
    ) -> RedisStore:
        """A store on the server at ``url`` (``redis://``, ``rediss://`` or ``unix://``).

        The URL is read here, without connecting: a malformed one (no scheme, another scheme,
        a port or database that is not a number) is refused now rather than at the first
        call, where ``on_store_error="allow"`` would let every call through, uncounted. A
        password, in the userinfo or as a ``password=`` query argument, is shown as ``***``
        in the store's ``repr`` and in every error message.

        Args:
            url: Where the server is, as redis-py's ``Redis.from_url`` reads it.
            prefix: Starts every key.
            timeout: Seconds each call may take; also the connect timeout.
            poll: The longest pause between two attempts of a waiter to get a slot.
            client_options: More keyword arguments for ``redis.asyncio.Redis.from_url`` (a
                ``socket_timeout`` here brings back the cancellation problem described under
                ``connect`` on Python 3.10).

        Raises:
            ValueError: ``url`` is not a Redis URL redis-py can connect with.
        """
        _check_url(url)
        # No socket timeout (redis-py 8 sets 5 s unless told otherwise): with one, redis-py
        # writes each command under ``asyncio.wait_for``, which before Python 3.12 drops a
        # cancellation that arrives as the write completes, and a cancelled slot waiter went on
        # polling. The store's own deadline bounds each call instead.
        options: dict[str, Any] = {
            "socket_timeout": None,
            "socket_connect_timeout": timeout,
            "retry": Retry(NoBackoff(), 0),
            **client_options,
        }

        def connect() -> Client:
            return redis_asyncio.Redis.from_url(url, **options)  # pyright: ignore[reportUnknownMemberType]

        store = cls(connect, prefix=prefix, timeout=timeout, poll=poll)
        store._where = _without_password(url)
        return store

    def __repr__(self) -> str:
        return f"RedisStore({self._where}, prefix={self.prefix!r})"

    def key(self, concern: str, name: str, part: str = "") -> str:
        """The Redis key of ``name`` for ``concern``, with ``name`` as its hash tag."""
        return f"{self.prefix}:{concern}:{{{name}}}" + (f":{part}" if part else "")

    async def aclose(self) -> None:
        """Close the running loop's client now (it also closes when its loop shuts down)."""
        await self._clients.aclose()

    async def ping(self) -> None:
        """Check the server answers.

        Raises:
            StoreError: it does not, within ``timeout``.
        """
        await self._call("ping", lambda client: client.ping())  # pyright: ignore[reportUnknownMemberType]

    # ---- CacheStore ---------------------------------------------------------------------------

    async def cache_get(self, key: str) -> bytes | None:
        reply = await self._call("cache_get", lambda client: client.get(self.key("cache", key)))
        return None if reply is None else bytes(reply)

    async def cache_set(self, key: str, value: bytes, ttl: float | None) -> None:
        expiry = None if ttl is None else max(1, math.ceil(ttl * 1000))
        await self._call(
            "cache_set", lambda client: client.set(self.key("cache", key), value, px=expiry)
        )

    # ---- RateStore ----------------------------------------------------------------------------

    async def rate_reserve(self, name: str, *, rate: float, burst: int) -> float:
        reply = await self._script(
            RATE_RESERVE, [self.key("rate", name)], [_micros(1 / rate), burst]
        )
        return float(reply) / _MICROS

    async def rate_refund(self, name: str, *, rate: float, burst: int) -> None:
        await self._script(RATE_REFUND, [self.key("rate", name)], [_micros(1 / rate)])

    # ---- SlotStore ----------------------------------------------------------------------------

    def _slot_keys(self, name: str) -> list[str]:
        return [self.key("slots", name, part) for part in ("holders", "queue", "seen")]

    async def slot_acquire(self, name: str, *, limit: int, lease: float) -> str:
        token = uuid.uuid4().hex
        keys = self._slot_keys(name)
        # A waiter keeps its place by asking again well within one lease; one that stops asking
        # (its process died) loses its place after a lease, as a holder loses its slot.
        longest = min(self.poll, lease / 4)
        pause = min(_FIRST_POLL, longest)
        args = [token, limit, _micros(lease), _micros(lease)]
        try:
            while not int(await self._script(SLOT_ACQUIRE, keys, args)):
                await asyncio.sleep(pause * random.uniform(0.75, 1.25))
                pause = min(pause * 1.5, longest)
        except StoreError:
            # The server failed: asking it again would only double the wait. Whatever it
            # recorded (a place in the queue, a slot whose reply was lost) expires with the lease.
            raise
        except BaseException:
            # Cancelled: leave the queue (or give back a slot won just now).
            with contextlib.suppress(StoreError):
                await self._script(SLOT_RELEASE, keys, [token])
            raise
        return token

    async def slot_renew(self, name: str, token: str, *, lease: float) -> bool:
        reply = await self._script(SLOT_RENEW, self._slot_keys(name)[:1], [token, _micros(lease)])
        return bool(int(reply))

    async def slot_release(self, name: str, token: str) -> None:
        await self._script(SLOT_RELEASE, self._slot_keys(name), [token])

    # ---- CounterStore -------------------------------------------------------------------------

    async def counter_add(
        self, key: str, amounts: Mapping[str, int], *, limits: Mapping[str, int] | None = None
    ) -> dict[str, int] | None:
        limits = limits or {}
        fields = list(dict.fromkeys((*amounts, *limits)))
        args: list[str | int] = [len(fields)]
        for field in fields:
            limit = limits.get(field)
            args += [field, amounts.get(field, 0), "" if limit is None else limit]
        reply = cast("list[Any]", await self._script(COUNTER_ADD, [self.key("counter", key)], args))
        if not int(reply[0]):
            return None
        return {field: int(value) for field, value in zip(fields, reply[1:], strict=True)}

    async def counter_read(self, key: str, fields: Sequence[str]) -> dict[str, int]:
        if not fields:
            return {}
        reply = cast(
            "list[Any]",
            await self._call(
                "counter_read", lambda client: client.hmget(self.key("counter", key), list(fields))
            ),
        )
        return {field: int(value or 0) for field, value in zip(fields, reply, strict=True)}

    # ---- BreakerStore -------------------------------------------------------------------------

    async def breaker_admit(self, name: str, *, cooldown: float) -> float:
        reply = await self._script(
            BREAKER_ADMIT,
            [self.key("breaker", name)],
            [_micros(cooldown), _breaker_expiry(cooldown)],
        )
        return float(reply) / _MICROS

    async def breaker_record(
        self, name: str, *, failed: bool, threshold: int, cooldown: float
    ) -> None:
        await self._script(
            BREAKER_RECORD,
            [self.key("breaker", name)],
            [int(failed), threshold, _micros(cooldown), _breaker_expiry(cooldown)],
        )

    # ---- SnapshotStore ------------------------------------------------------------------------

    async def snapshot_put(self, key: str, value: bytes, ttl: float) -> int:
        reply = await self._script(
            SNAPSHOT_PUT, [self.key("snapshot", key)], [value, max(1, math.ceil(ttl * 1000))]
        )
        return int(reply)

    async def snapshot_take(self, key: str, version: int | None = None) -> tuple[int, bytes] | None:
        reply = await self._script(
            SNAPSHOT_TAKE, [self.key("snapshot", key)], ["" if version is None else version]
        )
        if reply is None:
            return None
        taken_version, value = cast("list[bytes]", reply)
        return int(taken_version), bytes(value)

    # ---- calls ----------------------------------------------------------------------------------

    async def _script(self, script: Script, keys: list[str], args: Sequence[Any]) -> Any:
        async def run(client: Client) -> Any:
            try:
                return await client.evalsha(script.sha, len(keys), *keys, *args)
            except NoScriptError:  # a fresh (or flushed) server: send the text once
                return await client.eval(script.text, len(keys), *keys, *args)

        return await self._call(script.name, run)

    async def _call(self, operation: str, call: Callable[[Client], Any]) -> Any:
        try:
            client = await self._clients.get()
            return await _within(self.timeout, call(client))
        except (asyncio.TimeoutError, RedisTimeoutError) as error:
            # Our deadline, or redis-py's connect timeout (the same length): the same failure.
            raise StoreError(
                f"{self!r} did not answer {operation} within {self.timeout:g} s"
            ) from error
        except (RedisError, OSError) as error:
            raise StoreError(
                f"{self!r} could not {operation}: {type(error).__name__}: {error}"
            ) from error


async def _within(seconds: float, operation: Awaitable[Any]) -> Any:
    """Await ``operation``, cancelling it after ``seconds`` (`asyncio.TimeoutError`).

    A cancellation from outside always propagates, even one that arrives in the same loop turn
    as the reply: ``asyncio.wait_for`` before Python 3.12 returns the reply then and drops the
    cancellation, which left a cancelled ``slot_acquire`` waiting in the queue. So no
    ``wait_for`` here, and on Python 3.11+ a cancellation that code below swallowed without
    ``uncancel()`` (redis-py given a ``socket_timeout`` writes under ``wait_for``) is raised
    again: the task's ``cancelling()`` count still shows it.
    """
    if sys.version_info >= (3, 11):
        task = asyncio.current_task()
        assert task is not None, "RedisStore is used from a task"
        pending = task.cancelling()
        # A deadline on the running task: no task of its own per call, unlike wait_for.
        async with asyncio.timeout(seconds):
            reply = await operation
        if task.cancelling() > pending:
            raise asyncio.CancelledError
        return reply
    task = asyncio.current_task()
    assert task is not None, "RedisStore is used from a task"
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = asyncio.get_running_loop().call_later(seconds, expire)
    try:
        return await operation
    except asyncio.CancelledError:
        if expired:
            raise asyncio.TimeoutError from None
        raise
    finally:
        timer.cancel()


async def _close(client: Client) -> None:
    await client.aclose()


def _micros(seconds: float) -> str:
    return f"{seconds * _MICROS:.3f}"


def _check_url(url: object) -> None:
    """Refuse what redis-py would refuse (or quietly misread) only when it first connects."""
    if not isinstance(url, str):
        raise TypeError(f"RedisStore.from_url(url) takes a str such as {_URL_FORMS}, got {url!r}")
    shown = _without_password(url)
    try:
        parse_url(url)
        parts = urlsplit(url)
        parts.port  # noqa: B018  (reading it checks it: redis-py reads it only when connecting)
    except ValueError as error:
        raise ValueError(f"RedisStore.from_url({shown!r}): {error}. Write {_URL_FORMS}.") from None
    database = parts.path.lstrip("/")
    if parts.scheme in ("redis", "rediss") and database and not database.isdigit():
        # redis-py ignores a database it cannot read and uses 0: another application's keys.
        raise ValueError(
            f"RedisStore.from_url({shown!r}): the database {database!r} is not a number. Write "
            f"{_URL_FORMS}."
        )


def _without_password(url: str) -> str:
    """``url`` as it may be shown in an error message: any password replaced by ``***``.

    Both forms are masked: the userinfo (``redis://:secret@host``) and a ``password=`` query
    argument (``redis://host/0?password=secret``, the form ``unix://`` URLs use).
    """
    parts = urlsplit(url)
    shown = url
    if parts.query:
        # Replaced in the text rather than rebuilt with urlunsplit, which would turn
        # ``unix:///path`` into ``unix:/path``.
        masked = _QUERY_PASSWORD.sub(r"\1***", parts.query)
        shown = shown.replace(f"?{parts.query}", f"?{masked}", 1)
    try:
        password = parts.password
    except ValueError:  # a malformed netloc: shown as it is, but never its password
        password = None
    if password is not None:
        user = parts.username or ""
        host = parts.netloc.rpartition("@")[2]
        shown = shown.replace(f"//{parts.netloc}", f"//{user}:***@{host}", 1)
    return shown


def _breaker_expiry(cooldown: float) -> int:
    """How long, in milliseconds, an idle circuit's failures are remembered: an hour at least,
    and never less than a few cooldowns, so an open circuit cannot expire while it is open."""
    return int(max(3600.0, 4 * cooldown) * 1000)
