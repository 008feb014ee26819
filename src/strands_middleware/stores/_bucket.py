"""A token bucket whose callers reserve tokens ahead: the in-process `RateStore` bucket."""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """Up to ``burst`` tokens, refilled at ``rate`` a second; callers reserve ahead.

    A caller that finds the bucket empty takes a token anyway, leaving the level negative, and
    waits until that token has accrued: so waiting callers are served in arrival order and each
    sleeps exactly once. The lock makes it safe across threads (each ``agent(...)`` call runs its
    own event loop); it is held for arithmetic only, never across a wait.
    """

    __slots__ = ("_burst", "_clock", "_lock", "_rate", "_tokens", "_updated")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._updated = clock()

    def _refill(self, rate: float, burst: int) -> None:
        now = self._clock()
        elapsed = max(now - self._updated, 0.0)
        self._tokens = min(float(self._burst), self._tokens + elapsed * self._rate)
        self._updated = now
        # A caller with another configuration takes over from here on: what accrued so far
        # accrued at the old rate.
        self._rate = rate
        if burst != self._burst:
            self._burst = burst
            self._tokens = min(float(burst), self._tokens)

    def level(self) -> float:
        """Tokens in the bucket now; negative while callers wait for reserved tokens."""
        with self._lock:
            self._refill(self._rate, self._burst)
            return self._tokens

    def take(self, rate: float, burst: int) -> float:
        """Reserve one token; return how many seconds to wait until it has accrued."""
        with self._lock:
            self._refill(rate, burst)
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self._rate

    def give_back(self, rate: float, burst: int) -> None:
        """Return a token that was reserved or spent on a call that did not happen."""
        with self._lock:
            self._refill(rate, burst)
            self._tokens = min(float(self._burst), self._tokens + 1)
