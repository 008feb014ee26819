"""`Circuit`: one circuit breaker's state, for the in-process store.

A circuit is closed while calls succeed. It counts consecutive failures; at ``threshold`` it
opens for ``cooldown`` seconds, during which every call is refused at once. When the cooldown has
passed it is half-open: one call, the probe, is let through (for at most another cooldown, so a
probe whose caller vanished does not hold the circuit forever). A success closes the circuit and
forgets the failures; a failure of the probe, or of any call while open, opens it again for a
whole cooldown. ``RedisStore`` runs the same rules in one Lua script per decision.
"""

from __future__ import annotations

__all__ = ["Circuit"]


class Circuit:
    """The failures, open period and probe lease of one circuit (times from one clock).

    Invariant: ``reopens == 0`` exactly while the circuit is closed; ``probe_until`` is 0 or
    the end of the lease of the probe in flight.
    """

    __slots__ = ("failures", "probe_until", "reopens")

    def __init__(self) -> None:
        self.failures = 0
        self.reopens = 0.0
        self.probe_until = 0.0

    def admit(self, now: float, cooldown: float) -> float:
        """Seconds until a call may go through: 0 lets this one through now."""
        if self.reopens == 0:
            return 0.0
        if now < self.reopens:
            return self.reopens - now
        if now < self.probe_until:
            return self.probe_until - now
        self.probe_until = now + cooldown
        return 0.0

    def record(self, now: float, *, failed: bool, threshold: int, cooldown: float) -> None:
        """Count a call's outcome: a success closes the circuit, a failure may open it."""
        if not failed:
            self.failures = 0
            self.reopens = 0.0
            self.probe_until = 0.0
            return
        self.failures += 1
        if self.reopens != 0 or self.failures >= threshold:
            self.reopens = now + cooldown
            self.probe_until = 0.0

    def state(self, now: float) -> str:
        """``"closed"``, ``"open"`` or ``"half-open"`` at ``now``."""
        if self.reopens == 0:
            return "closed"
        return "open" if now < self.reopens else "half-open"
