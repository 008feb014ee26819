"""`Cache`: answer a repeated model call or tool call from a store instead of running it again.

A cache is only as good as its key and only as safe as what it agrees to keep. The rules:

* **The key is the whole request, in canonical form.** For a model call it is the JSON of every
  field of `InvokeModelContext` but ``agent``, ``invocation_state`` and the derived
  ``projected_input_tokens`` (so ``messages``, ``system_prompt``, ``tool_specs``, ``tool_choice``,
  and the model's identity for ``model``; a field a later release adds to the context joins the key
  by itself); for a tool call, the tool's name and its ``input``. The JSON has sorted keys and no
  whitespace, and ``bytes`` (images, documents, redacted reasoning) are encoded as ``{"__bytes__":
  <base64>}``; the store key is ``"<stage name>:"`` plus the SHA-256 of that JSON in hex. The
  model's identity is its class (``module.qualname``) plus ``model.get_config()`` when the model
  has one that returns a mapping (every ``strands-agents`` provider does: model id, temperature,
  ...), so two equally configured model objects share entries. A model without ``get_config()`` is
  identified by the object itself, so only calls to that very object share entries (and, in a store
  shared between processes, never match). Not in the key: ``agent`` and ``invocation_state``
  (agents sharing one `Cache` share its answers), the tool's ``toolUseId`` (it differs on every
  call) and, for a tool, anything but its name and input. Order is kept where it carries meaning:
  ``messages`` and ``tool_specs`` are lists, so the same tools offered in another order are another
  request. A value JSON cannot encode is a `TypeError` naming the call, not a silent miss; ``key=``
  builds keys yourself (returning ``None`` skips the cache for that call).
* **Only what succeeded is kept.** A call is stored once its stream ends normally, with the last
  result event it produced. A call that raised, that a consumer stopped reading, that paused for
  a human (an `InterruptException`, or an interrupt event in its stream), or whose tool result is
  an error (``status == "error"`` or an ``exception``) is never stored, so a transient failure
  is not replayed for the rest of the TTL.
* **A hit replays the result and nothing else.** It yields one event: a copy of the stored
  result (for a tool call, answering the current ``toolUseId``). It invents no streaming events
  it never saw, so a UI streaming text sees none on a hit; the finished message is in the result.
  Copies go in and out, so a consumer editing the message it got cannot change the cache.
* **Results are kept as data, in a store.** The store is a
  `strands_middleware.stores.CacheStore`: an `InMemoryStore` of ``max_entries`` (least recently
  used first, each entry with its TTL) in this process when none is given, or a ``RedisStore``
  shared by every process using it, so an answer one worker got is a hit in the others. Either
  way a result is encoded as JSON (``bytes`` in base64), never pickled, so an entry read back can
  only ever be data and a hit answers the same on every store; a result JSON cannot encode is
  not stored (a `StoreWarning` says so). An entry that is not a result this version wrote is a
  miss (with a `StoreWarning`) and is overwritten. When the store fails, a lookup raises
  `StoreError` by default, or with ``on_store_error="allow"`` is a miss with a `StoreWarning`; a
  failed write only warns.

`Cache.hits` and `Cache.misses` count lookups; a call whose ``key=`` returned ``None`` counts as
neither. Two identical calls running at the same time both miss (there is no request
coalescing). Register `Cache` before the items a hit should skip: a hit never reaches the middleware
registered after it (inner), so a hit costs no `RateLimit` token and no `UsageBudget`, and a
`Retry` registered after it only retries misses. A hook that retries a successful tool call
(``AfterToolCallEvent.retry``) is answered from the cache.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import math
import time
import uuid
import warnings
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any, cast

from ..engine import halts_stage
from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import StoreWarning
from ..stages._execute_tool import ExecuteToolContext
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ..stores._codec import json_default
from ..stores._memory import InMemoryStore
from ..stores._protocols import CacheStore
from ._base import (
    CallStage,
    CatalogMiddleware,
    OnStoreError,
    check_call_stage,
    check_function,
    check_on_store_error,
    check_store,
    check_whole_number,
)
from ._result_codec import UnreadableResult, decode_result, encode_result
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["Cache"]

_DEFAULT_MAX_ENTRIES = 256


class Cache(CatalogMiddleware):
    """Serves a repeated model call or tool call from a store (see the module notes).

    Example:
        ```python
        cache = Cache(ttl=600)                                  # model calls, in memory
        agent.use(cache, Cache(ExecuteToolStage, ttl=None))    # and tool calls, no expiry
        agent("What is the capital of France?")
        print(cache.hits, cache.misses)
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        store: Where results are kept: a `strands_middleware.stores.CacheStore` (a
            ``RedisStore`` shared between processes, or an `InMemoryStore`); a new
            `InMemoryStore` of ``max_entries`` when omitted.
        max_entries: The size of the default `InMemoryStore` (not used with ``store``).
        ttl: Seconds an entry lives, or ``None`` for no expiry; passed to the store's ``set``.
        key: Builds the key from the context instead of the canonical form; return ``None`` to
            skip the cache for that call. The store key is ``"<stage name>:" + key``.
        clock: The default `InMemoryStore`'s clock, for TTLs (not used with ``store``).
        on_store_error: With a shared store, ``"raise"`` (the default) or ``"allow"``: see the
            module notes.

    Attributes:
        hits: Lookups answered from the store.
        misses: Lookups that found nothing, so the call ran.
        store: The store in use.
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        store: CacheStore | None = None,
        max_entries: int = _DEFAULT_MAX_ENTRIES,
        ttl: float | None = 300,
        key: Callable[[Any], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        on_store_error: OnStoreError = "raise",
    ) -> None:
        check_call_stage("Cache", stage)
        check_on_store_error("Cache", on_store_error)
        check_whole_number("Cache", "max_entries", max_entries, minimum=1)
        check_function("Cache", "clock", clock, takes="a function returning seconds")
        given_ttl = cast(object, ttl)
        if given_ttl is not None and (
            isinstance(given_ttl, bool)
            or not isinstance(given_ttl, (int, float))
            or not math.isfinite(given_ttl)
            or given_ttl <= 0
        ):
            raise ValueError(
                f"Cache(ttl=...) must be a number of seconds > 0, or None for no expiry, "
                f"got {ttl!r}"
            )
        if key is not None:
            check_function("Cache", "key", key, takes="a function of the context")
        if store is not None:
            check_store("Cache", store, CacheStore, "async cache_get and cache_set")
            if max_entries != _DEFAULT_MAX_ENTRIES or clock is not time.monotonic:
                raise ValueError(
                    "Cache(max_entries=...) and Cache(clock=...) configure the built-in "
                    "InMemoryStore; with store=... configure the store itself"
                )
        self.stage = stage
        self.store: CacheStore = (
            store if store is not None else InMemoryStore(max_entries=max_entries, clock=clock)
        )
        self._store_calls = StoreCalls("Cache", self.store, on_store_error)
        self.ttl = None if ttl is None else float(ttl)
        self.hits = 0
        self.misses = 0
        self._key = key
        self._instances = _InstanceTokens()

    def key_for(self, context: Any) -> str | None:
        """The store key of a call, or ``None`` when ``key=`` skips it.

        Raises:
            TypeError: the canonical form holds a value JSON cannot encode, or ``key=``
                returned something other than a str or ``None``.
        """
        if self._key is not None:
            chosen = cast(object, self._key(context))
            if chosen is None:
                return None
            if not isinstance(chosen, str):
                raise TypeError(
                    "Cache(key=...) must return a str (or None to skip the cache), got "
                    f"{type(chosen).__name__}"
                )
            return f"{self.stage.name}:{chosen}"
        request = (
            self._model_request(context)
            if self.stage is InvokeModelStage
            else _tool_request(context)
        )
        try:
            text = json.dumps(request, sort_keys=True, separators=(",", ":"), default=json_default)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"Cache cannot key this {self.stage.name} call: {error}. Pass Cache(key=...) to "
                "build the key yourself"
            ) from error
        return f"{self.stage.name}:{hashlib.sha256(text.encode()).hexdigest()}"

    def _model_request(self, context: InvokeModelContext) -> dict[str, Any]:
        request = {name: getattr(context, name) for name in _model_key_fields()}
        request["model"] = self._model_identity(context.model)
        return request

    def _model_identity(self, model: object) -> dict[str, Any]:
        kind = f"{type(model).__module__}.{type(model).__qualname__}"
        get_config = getattr(model, "get_config", None)
        if callable(get_config):
            config = get_config()
            if isinstance(config, Mapping):
                return {"class": kind, "config": dict(cast("Mapping[str, Any]", config))}
        return {"class": kind, "instance": self._instances.token(model)}

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        result_type: type[TypedEvent] = self.stage.result_event

        async def cache(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            key = self.key_for(context)
            if key is None:
                async for event in next_fn(context):
                    yield event
                return
            stored = await self._lookup(key, result_type)
            if stored is not None:
                self.hits += 1
                yield _replay(stored, context)
                return
            self.misses += 1
            result: TypedEvent | None = None
            halted = False
            async for event in next_fn(context):
                if isinstance(event, result_type):
                    result = event
                elif halts_stage(event):
                    halted = True
                yield event
            if result is not None and not halted and _succeeded(result):
                await self._keep(key, result)

        cache.__qualname__ = f"Cache[{self.stage.name}]"
        return [self.stage.wrap(cache)]

    async def _lookup(self, key: str, result_type: type[TypedEvent]) -> TypedEvent | None:
        store = self.store
        data = await self._store_calls.take(store.cache_get(key))
        if data is None or data is FAILED_OPEN:
            return None
        try:
            return decode_result(data, result_type)
        except UnreadableResult as error:
            warnings.warn(
                f"Cache: the entry {key!r} in {store!r} is not a result this version can read "
                f"({error}); it counts as a miss and is overwritten",
                StoreWarning,
                stacklevel=2,
            )
            return None

    async def _keep(self, key: str, result: TypedEvent) -> None:
        store = self.store
        try:
            data = encode_result(result)
        except TypeError as error:
            warnings.warn(
                f"Cache: the result of {key!r} was not stored, because it is not JSON data "
                f"({error})",
                StoreWarning,
                stacklevel=2,
            )
            return
        await self._store_calls.settle(store.cache_set(key, data, self.ttl), "store a result")


_NOT_IN_MODEL_KEY = frozenset({"agent", "invocation_state", "projected_input_tokens"})
"""Fields of `InvokeModelContext` that do not change the answer: who asks, their per-call state,
and an estimate derived from the other fields (which hosts may or may not fill)."""


@functools.cache
def _model_key_fields() -> tuple[str, ...]:
    """The names of the `InvokeModelContext` fields a model call's key is made of."""
    return tuple(
        field.name
        for field in dataclasses.fields(InvokeModelContext)
        if field.init and not field.name.startswith("_") and field.name not in _NOT_IN_MODEL_KEY
    )


def _tool_request(context: ExecuteToolContext) -> dict[str, Any]:
    return {"tool": context.tool_use["name"], "input": context.tool_use["input"]}


def _succeeded(result: TypedEvent) -> bool:
    if isinstance(result, ToolResultEvent):
        return result.exception is None and result.tool_result.get("status") != "error"
    return True


def _replay(stored: TypedEvent, context: Any) -> TypedEvent:
    replayed = copy.deepcopy(stored)
    if isinstance(replayed, ToolResultEvent):
        tool_use_id: str = cast(ExecuteToolContext, context).tool_use["toolUseId"]
        replayed["tool_result"] = {**replayed.tool_result, "toolUseId": tool_use_id}
    return replayed


class _InstanceTokens:
    """A random token per live object: the same object always gets the same one.

    Objects are held weakly where they allow it, so a token dies with its object and a new object
    that happens to reuse the old one's ``id()`` gets a token of its own.
    """

    __slots__ = ("_tokens",)

    def __init__(self) -> None:
        self._tokens: dict[int, tuple[Callable[[], object], str]] = {}

    def token(self, obj: object) -> str:
        key = id(obj)
        entry = self._tokens.get(key)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        token = uuid.uuid4().hex
        ref: Callable[[], object]
        try:
            ref = weakref.ref(obj, lambda _dead: self._forget(key, token))
        except TypeError:  # not weakly referenceable: hold it for the cache's lifetime
            ref = _strong(obj)
        self._tokens[key] = (ref, token)
        return token

    def _forget(self, key: int, token: str) -> None:
        entry = self._tokens.get(key)
        if entry is not None and entry[1] == token:
            del self._tokens[key]

    def __len__(self) -> int:
        return len(self._tokens)


def _strong(obj: object) -> Callable[[], object]:
    return lambda: obj
