"""What a `Guardrail` check is handed and what it decides: `GuardrailSubject` and `Verdict`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

__all__ = ["Flow", "GuardrailCheck", "GuardrailSubject", "OnViolation", "Verdict"]

Flow: TypeAlias = Literal["model_input", "model_output", "tool_input", "tool_output"]
"""What a `Guardrail` checks: what the model is sent or replies, what a tool gets or returns."""

Action: TypeAlias = Literal["allow", "mask", "block"]


@dataclass(frozen=True)
class Verdict:
    """What a guardrail check decided: allow, mask or block (with a message for a block).

    Build one with `Verdict.allow`, `Verdict.mask` or `Verdict.block`.

    Attributes:
        action: ``"allow"``, ``"mask"`` or ``"block"``.
        message: For a block, what the user (model flows) or the model (tool flows) reads.
    """

    action: Action
    message: str = ""

    def __post_init__(self) -> None:
        # Checked here, not only by the annotations: a check written without a type checker may
        # hand over a number or None, which would otherwise reach the user as a reply.
        if self.action not in ("allow", "mask", "block"):
            raise ValueError(
                f"Verdict(action=...) is 'allow', 'mask' or 'block', got {self.action!r}; build "
                "one with Verdict.allow(), Verdict.mask() or Verdict.block('why')"
            )
        if not isinstance(cast(object, self.message), str):
            raise TypeError(
                f"Verdict message must be a str (what the user or the model reads), got "
                f"{self.message!r}; write Verdict.block('why')"
            )
        if self.message and self.action != "block":
            raise ValueError(f"only a block carries a message, got {self.action!r} with one")

    @classmethod
    def allow(cls) -> Verdict:
        """Let the content pass unchanged."""
        return cls("allow")

    @classmethod
    def mask(cls) -> Verdict:
        """Let the content pass with secrets and personal data masked, as `Redact` does."""
        return cls("mask")

    @classmethod
    def block(cls, message: str = "") -> Verdict:
        """Stop the content; ``message`` says why (a default sentence is used when empty)."""
        return cls("block", message)


@dataclass(frozen=True)
class GuardrailSubject:
    """What a guardrail check is handed.

    Attributes:
        flow: Which flow is checked.
        text: The text under check (see the flows in the module docstring).
        value: The value itself: the messages of the model call (``model_input``), the model's
            reply `Message` (``model_output``), the `ToolUse` (``tool_input``) or the
            `ToolResult` (``tool_output``).
        agent: The agent making the call.
    """

    flow: Flow
    text: str
    value: Any
    agent: Any


GuardrailCheck: TypeAlias = Callable[[GuardrailSubject], "Verdict | Awaitable[Verdict]"]
"""A check: a function (sync or async) of a `GuardrailSubject` returning a `Verdict`."""

OnViolation: TypeAlias = Callable[[GuardrailSubject, "Verdict"], object]
"""A `Guardrail(on_violation=...)` reporter: called with the subject and a verdict not allowing."""
