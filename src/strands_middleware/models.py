"""The shape of a model provider, as the agent loop calls it.

A host needs exactly one thing from a model: a stream of Converse chunks for a conversation.
`Model` is that one method as a `typing.Protocol`, so anything with a matching ``stream`` is a
model without inheriting from this library: a ``strands.models.Model`` subclass (Bedrock,
Anthropic, OpenAI, ...), `strands_middleware.testing.ScriptedModel`, or a class of your own whose
``stream`` is an ``async def`` generator. The host hands the stream to
`strands_middleware.host.process_model_stream`, which checks every chunk at run time.

Why ``messages``, ``tool_specs`` and the chunks are typed ``Any`` here: ``strands-agents`` spells
the same Converse data with its own TypedDicts (typed media blocks, extra optional keys such as
``Message.metadata``). Those are the same dicts at run time, but static checkers compare
TypedDicts key by key and ``list`` invariantly, so neither family is assignable to the other. A
protocol parameter is checked contravariantly, so the only annotation that every provider's
``stream`` accepts is ``Any``; likewise for the chunks it returns. The other parameters
(``system_prompt``, ``tool_choice``, ``system_prompt_content``) are equivalent in both families
and keep their precise types. Your own implementation should still annotate ``messages:
Messages`` and return ``AsyncIterable[StreamEvent]`` (or an ``AsyncGenerator`` of them): it then
satisfies `Model` and is checked against the real shapes.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import Any, Protocol

from .content import SystemContentBlock, ToolChoice

__all__ = ["Model"]


class Model(Protocol):
    """A model provider: streams the assistant's reply to a conversation as Converse chunks.

    Only `stream` is required. Configuration, structured output and the like are the provider's
    own business: middleware and hosts never call them, so requiring them would only keep simple
    models (a mock, a router) out.
    """

    def stream(
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[Any]:
        """Stream the reply to ``messages`` as Converse `StreamEvent` chunks.

        A well-formed reply is ``messageStart``, per content block a ``contentBlockStart``
        (optional for text), ``contentBlockDelta`` chunks and a ``contentBlockStop``, then
        ``messageStop`` with the stop reason and usually a ``metadata`` chunk.

        Args:
            messages: The conversation so far, oldest first (a `Messages` list).
            tool_specs: The tools the model may call (a ``list[ToolSpec]``), or ``None``.
            system_prompt: The system prompt as plain text, or ``None``.
            tool_choice: How the model may choose among the tools; ``None`` lets it decide.
            system_prompt_content: The system prompt as blocks (for cache points); a host passes
                both forms so a provider can use whichever it supports.
            **kwargs: Host-specific extras (``strands-agents`` passes ``invocation_state`` and
                others); a provider must accept and may ignore them, so a host can add one
                without breaking every model.

        Returns:
            The chunks, in order. Errors (throttling, bad requests) are raised while iterating.
        """
        ...
