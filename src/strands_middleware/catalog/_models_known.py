"""What the catalog knows of common models: how to name one, its context window, its price.

Items that size a request against the model's context window (``("fraction", 0.8)`` budgets) or
count spending in money read `facts_for`. The table is a snapshot of the providers' published
figures for widely used models, matched by a fragment of the model id, so the same entry serves
a provider's own id (``claude-sonnet-4-20250514``) and a cloud's (Bedrock's
``us.anthropic.claude-sonnet-4-20250514-v1:0``). Figures change: every item that reads the table
takes an override, and a model the table does not know is an error naming that override, never
a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from ..exceptions import InterruptException

__all__ = ["KNOWN_MODELS", "ModelFacts", "facts_for", "model_id"]


@dataclass(frozen=True)
class ModelFacts:
    """One model's context window (tokens) and list price (US dollars per million tokens).

    Attributes:
        context_window: The most tokens a request and its answer may hold together.
        input_price: Dollars per million input tokens.
        output_price: Dollars per million output tokens.
    """

    context_window: int
    input_price: float
    output_price: float


KNOWN_MODELS: dict[str, ModelFacts] = {
    # Anthropic (also through Amazon Bedrock and Google Vertex AI).
    "claude-opus-4": ModelFacts(200_000, 15.0, 75.0),
    "claude-sonnet-4": ModelFacts(200_000, 3.0, 15.0),
    "claude-haiku-4": ModelFacts(200_000, 1.0, 5.0),
    "claude-3-7-sonnet": ModelFacts(200_000, 3.0, 15.0),
    "claude-3-5-sonnet": ModelFacts(200_000, 3.0, 15.0),
    "claude-3-5-haiku": ModelFacts(200_000, 0.8, 4.0),
    "claude-3-opus": ModelFacts(200_000, 15.0, 75.0),
    "claude-3-haiku": ModelFacts(200_000, 0.25, 1.25),
    # OpenAI.
    "gpt-5-nano": ModelFacts(400_000, 0.05, 0.4),
    "gpt-5-mini": ModelFacts(400_000, 0.25, 2.0),
    "gpt-5": ModelFacts(400_000, 1.25, 10.0),
    "gpt-4.1-nano": ModelFacts(1_047_576, 0.1, 0.4),
    "gpt-4.1-mini": ModelFacts(1_047_576, 0.4, 1.6),
    "gpt-4.1": ModelFacts(1_047_576, 2.0, 8.0),
    "gpt-4o-mini": ModelFacts(128_000, 0.15, 0.6),
    "gpt-4o": ModelFacts(128_000, 2.5, 10.0),
    "o4-mini": ModelFacts(200_000, 1.1, 4.4),
    "o3-mini": ModelFacts(200_000, 1.1, 4.4),
    "o3": ModelFacts(200_000, 2.0, 8.0),
    # Google.
    "gemini-2.5-pro": ModelFacts(1_048_576, 1.25, 10.0),
    "gemini-2.5-flash-lite": ModelFacts(1_048_576, 0.1, 0.4),
    "gemini-2.5-flash": ModelFacts(1_048_576, 0.3, 2.5),
    "gemini-2.0-flash": ModelFacts(1_048_576, 0.1, 0.4),
    # Amazon.
    "nova-premier": ModelFacts(1_000_000, 2.5, 12.5),
    "nova-pro": ModelFacts(300_000, 0.8, 3.2),
    "nova-lite": ModelFacts(300_000, 0.06, 0.24),
    "nova-micro": ModelFacts(128_000, 0.035, 0.14),
    # Meta and Mistral (Bedrock's on-demand prices).
    "llama3-3-70b": ModelFacts(128_000, 0.72, 0.72),
    "llama3-1-8b": ModelFacts(128_000, 0.22, 0.22),
    "mistral-large": ModelFacts(128_000, 2.0, 6.0),
}
"""Known models by a fragment of their id; the longest fragment an id contains wins (so
``gpt-4o-mini`` is not read as ``gpt-4o``). Prices are list prices for standard (not batch, not
cached) input and output."""


def facts_for(
    model: str | None, table: Mapping[str, ModelFacts] = KNOWN_MODELS
) -> ModelFacts | None:
    """The entry of ``table`` whose fragment ``model`` (an id) contains, the longest one."""
    if not model:
        return None
    lowered = model.lower()
    found = [fragment for fragment in table if fragment in lowered]
    return table[max(found, key=len)] if found else None


def model_id(model: object) -> str | None:
    """The ``model_id`` a Strands-style model's ``get_config()`` reports, if it reports one.

    A model that cannot say (no ``get_config``, one that fails, or no string ``model_id``) gives
    None: asking is never worth failing a model call for. A pause for a human raised there goes
    on.
    """
    get_config = getattr(model, "get_config", None)
    if not callable(get_config):
        return None
    try:
        config: object = get_config()
    except InterruptException:
        raise
    except Exception:
        return None
    # A dict first, by exact type: the common answer, without the Mapping ABC's slower test.
    if type(config) is dict or isinstance(config, Mapping):
        found = cast("Mapping[str, object]", config).get("model_id")
        if isinstance(found, str) and found:
            return found
    return None
