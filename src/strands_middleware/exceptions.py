"""Every error this library raises on purpose, in one place.

Import them from here (``from strands_middleware.exceptions import MissingResultError``); the
package root and `strands_middleware.interrupts` also export the few that handlers meet most
(`InterruptException`, `MissingResultError`, the resume errors). The tree::

    Exception
    ├── InterruptException ............ a run pauses for a human (control flow, not a failure)
    ├── RuntimeError
    │   ├── InterruptMisuseError ...... an interrupt that could not pause safely (swallowed,
    │   │                               raised after the tool ran, or one id for two gates)
    │   ├── MissingResultError ........ a stage's stream ended without its result event
    │   ├── ReplacedMessagesError ..... an AgentStreamStage handler replaced context.messages
    │   └── StoreError ................ a shared store (Redis) failed or did not answer in time
    ├── TypeError
    │   └── UnsupportedStageError ..... a handler on a stage its host cannot run (a bridge
    │                                   refuses it at registration)
    └── ValueError
        ├── InterruptResumeError ...... a resume prompt does not fit the paused run
        │   └── InterruptResponseFormatError (also TypeError): not interruptResponse blocks
        ├── InterruptStateDataError ... serialised interrupt state is malformed
        ├── ModelStreamError .......... a model's chunk stream could not form a message
        └── ToolInputError ............ the model called a @tool with input that does not fit

Other registration mistakes are plain `TypeError`s raised when a handler is registered (they
name the stage, the phase and the handler). The catalog adds its own, each in the item's module:
`strands_middleware.catalog.CallLimitExceeded`, `strands_middleware.catalog.UsageBudgetExceeded` and
`strands_middleware.catalog.CircuitOpen` (all `RuntimeError`), and
`strands_middleware.catalog.CallTimeout` (a `TimeoutError`).
`StoreWarning` (a `RuntimeWarning`) reports a store failure a catalog item let through
(``on_store_error="allow"``) or could not act on (a slot or token it could not give back, which
its lease or expiry frees instead).

`CONTROL_FLOW_EXCEPTIONS` is the tuple a handler that catches errors must let through: catch it
first and re-raise, then handle `Exception`::

    try:
        async for event in next_fn(context):
            yield event
    except CONTROL_FLOW_EXCEPTIONS:
        raise
    except Exception:
        ...
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._interrupt import Interrupt

__all__ = [
    "CONTROL_FLOW_EXCEPTIONS",
    "InterruptException",
    "InterruptMisuseError",
    "InterruptResponseFormatError",
    "InterruptResumeError",
    "InterruptStateDataError",
    "MissingResultError",
    "ModelStreamError",
    "ReplacedMessagesError",
    "StoreError",
    "StoreWarning",
    "ToolInputError",
    "UnsupportedStageError",
]


# Named as in the spec (no "Error" suffix) so code written against the spec reads the same here.
class InterruptException(Exception):
    """Raised to pause a run until a human answers `interrupt`.

    It subclasses `Exception`, so a broad ``except Exception`` in middleware swallows it and turns
    a pause into an error (on a tool call the host notices and does not run the tool).
    Middleware that catches errors around ``next_fn`` or ``interrupt()`` must re-raise it.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(interrupt)
        self.interrupt = interrupt

    def __str__(self) -> str:
        return (
            f"interrupt {self.interrupt.name!r} (id {self.interrupt.id}) is waiting for a response"
        )


CONTROL_FLOW_EXCEPTIONS: tuple[type[BaseException], ...] = (
    InterruptException,
    asyncio.CancelledError,
    GeneratorExit,
    KeyboardInterrupt,
    SystemExit,
)
"""What error-handling middleware must never swallow: re-raise these before ``except Exception``.

`InterruptException` subclasses `Exception`, so a broad handler would turn a pause for a human
into a caught error (on a tool call the host then refuses to run the tool: a gate fails closed,
with an `InterruptMisuseError`); the others are
`BaseException`s listed so that ``except CONTROL_FLOW_EXCEPTIONS: raise`` also reads right in a
handler that catches `BaseException`.
"""


class InterruptMisuseError(RuntimeError):
    """Middleware used ``interrupt()`` in a way that cannot pause the run safely.

    A gate must fail closed, so each of these is an error rather than a silent pass:

    * the `InterruptException` was caught by a handler (a broad ``except Exception``) and never
      reached the executor, so the run would go on as if a human had approved;
    * the interrupt was raised after the tool (or, on AgentStreamStage, the pass) had already run,
      so a resume would run it a second time;
    * two handlers asked under one interrupt id on the same call, so one answer would approve
      both.

    On ExecuteToolStage it ends the tool call with an error result (and an ERROR log), like any
    failing tool middleware; elsewhere it ends the run.

    Attributes:
        interrupts: The interrupts concerned.
    """

    def __init__(self, message: str, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(message)
        self.interrupts: tuple[Interrupt, ...] = tuple(interrupts)


class MissingResultError(RuntimeError):
    """A stage's chain ended without yielding its result event.

    Every path through a Wrap handler must yield the result (pass ``next_fn``'s events through,
    or yield a result event when short-circuiting). The message names the stage and its result
    class.

    Attributes:
        stage_name: The name of the stage whose result is missing.
    """

    def __init__(self, message: str, stage_name: str) -> None:
        super().__init__(message)
        self.stage_name = stage_name


class ReplacedMessagesError(RuntimeError):
    """An AgentStreamStage handler replaced ``context.messages`` on a host that cannot send it.

    The reference agent and ``strands.Agent`` (as strands-agents 1.62) append the list the
    context holds when the chain reaches the stage's terminal. A host whose loop can only take
    the input it was given (its harness does not declare ``Capability.REPLACE_PASS_INPUT``)
    raises this before the pass runs rather than drop the new list silently. See
    `REPLACED_MESSAGES_MESSAGE`.
    """

    def __init__(self, message: str = "") -> None:
        super().__init__(message or REPLACED_MESSAGES_MESSAGE)


REPLACED_MESSAGES_MESSAGE = (
    "an AgentStreamStage handler replaced context.messages, and this host cannot send a new "
    "list to its loop (the reference agent and strands.Agent can; dropping it would change "
    "what the model sees without a trace). Edit the messages in place before calling "
    "next_fn, or rewrite the model's input with an InvokeModelStage Input handler "
    "(context.replace(messages=...))."
)
"""The one wording of `ReplacedMessagesError`, shared by every host."""


class StoreError(RuntimeError):
    """A store behind a catalog item failed, or did not answer within its timeout.

    The store raises it naming itself and the operation (``RedisStore(...) could not
    rate_reserve: ...``); a catalog item re-raises it naming the item too, and says how to let
    calls through while the store is down (``on_store_error="allow"``). The original error is
    the ``__cause__``.
    """


class StoreWarning(RuntimeWarning):
    """A store failure a catalog item did not raise: it failed open, or freed nothing.

    With ``on_store_error="allow"`` an item lets the call through without its token, slot or
    count and warns with this. Giving something back (a token, a slot, a count) never raises,
    because the call's own outcome matters more; when that fails the item warns with this and
    the store frees it on its own (a slot when its lease runs out).
    """


class InterruptResumeError(ValueError):
    """A resume prompt does not fit the interrupt state; the state was left untouched.

    Raised by `InterruptState.resume` when a prompt answers an id the state does not know, leaves
    an owed interrupt unanswered, answers one id twice, or carries answers while nothing is
    waiting for one. Every check runs before anything is written, so after this error the caller
    can fix the prompt and call ``resume`` again.

    Attributes:
        interrupt_ids: The ids the message is about (unknown, unanswered, duplicated or unexpected
            ones), so code can react without parsing the message.
    """

    def __init__(self, message: str, interrupt_ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.interrupt_ids: tuple[str, ...] = tuple(interrupt_ids)


class InterruptResponseFormatError(InterruptResumeError, TypeError):
    """A resume prompt is not a list of well-formed ``interruptResponse`` blocks.

    It is also a `TypeError` because the prompt has the wrong shape rather than a wrong value,
    which is how hosts conventionally report it; catching `InterruptResumeError` covers it too.
    A fresh prompt (text, content blocks, messages) sent while a run is paused is reported this
    way: the state needs answers, and a new question would silently abandon the paused run.
    """


class InterruptStateDataError(ValueError):
    """Serialised interrupt state (`InterruptState.from_dict`) is malformed.

    The message names the path of the offending value (for example
    ``interrupts['v1:...'].name``) so a corrupted session record can be found and repaired.
    """


class ModelStreamError(ValueError):
    """The model's chunk stream was malformed, so no assistant message could be built from it.

    The message names the offending chunk (counted from 1), what was wrong with it and what a
    well-formed stream sends instead. It is a `ValueError` because the content of the stream is
    at fault, not the library or the network, so retry middleware can tell it apart from
    transient provider errors.
    """


class ToolInputError(ValueError):
    """The model called a `FunctionTool` with input that does not fit its parameters.

    It never escapes `FunctionTool.stream`: it becomes the ``exception`` of the error
    `ToolResultEvent`, so middleware can tell a bad call by the model (worth re-prompting) from a
    failure inside the tool.

    Args:
        message: What was wrong and what the tool takes.
        missing: The required parameters the input lacked.
        unexpected: The input keys the tool has no parameter for.
    """

    def __init__(
        self, message: str, missing: tuple[str, ...] = (), unexpected: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.missing = missing
        self.unexpected = unexpected


class UnsupportedStageError(TypeError):
    """A handler was registered on a stage its host has no place to run.

    A bridge raises it at registration, before anything is registered, rather than letting the
    handler sit in the chain and never run: LangChain and pydantic-ai have no hook around a whole
    agent pass, so ``AgentStreamStage`` handlers are refused there. The message names the stage,
    the handlers and the stages to use instead.
    """
