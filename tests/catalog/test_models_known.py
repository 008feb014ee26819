"""The table of known models: matched by a fragment of the id, the longest one winning."""

from __future__ import annotations

from typing import Any

import pytest

from strands_middleware.catalog._models_known import KNOWN_MODELS, ModelFacts, facts_for, model_id
from strands_middleware.interrupts import Interrupt, InterruptException


@pytest.mark.parametrize(
    ("model", "window"),
    [
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", 200_000),  # Bedrock's id
        ("claude-3-5-haiku-latest", 200_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("GPT-4.1-MINI", 1_047_576),
        ("gemini-2.5-flash-lite", 1_048_576),
        ("amazon.nova-micro-v1:0", 128_000),
    ],
)
def test_a_model_is_found_by_the_fragment_its_id_contains(model: str, window: int) -> None:
    facts = facts_for(model)
    assert facts is not None and facts.context_window == window


def test_the_longest_fragment_wins_so_a_mini_model_is_not_read_as_its_big_sibling() -> None:
    assert facts_for("gpt-4o-mini") == KNOWN_MODELS["gpt-4o-mini"]
    assert facts_for("gpt-4o") == KNOWN_MODELS["gpt-4o"]
    assert facts_for("gpt-5-nano") == KNOWN_MODELS["gpt-5-nano"]


def test_an_unknown_or_missing_id_has_no_facts_and_a_table_can_be_given() -> None:
    assert facts_for("my-finetune") is None and facts_for(None) is None and facts_for("") is None
    mine = {"my-finetune": ModelFacts(32_000, 1.0, 2.0)}
    assert facts_for("org/my-finetune-v2", mine) == ModelFacts(32_000, 1.0, 2.0)


def test_every_entry_is_a_plausible_figure() -> None:
    for fragment, facts in KNOWN_MODELS.items():
        assert fragment == fragment.lower()
        assert 8_000 <= facts.context_window <= 10_000_000
        assert 0 < facts.input_price <= facts.output_price


class Configured:
    def __init__(self, config: Any) -> None:
        self.config = config

    def get_config(self) -> Any:
        if isinstance(self.config, BaseException):
            raise self.config
        return self.config


def test_a_models_id_is_read_from_its_config_and_anything_else_is_none() -> None:
    assert model_id(Configured({"model_id": "claude-x", "temperature": 0})) == "claude-x"
    for config in ({}, {"model_id": 5}, {"model_id": ""}, ["model_id"], RuntimeError("no")):
        assert model_id(Configured(config)) is None
    assert model_id(object()) is None


def test_a_pause_raised_while_reading_the_config_goes_on() -> None:
    pause = InterruptException(Interrupt(id="i", name="ask"))
    with pytest.raises(InterruptException):
        model_id(Configured(pause))
