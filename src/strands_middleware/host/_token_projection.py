"""`project_input_tokens`: the estimate of a model call's input tokens hosts put on the context.

It follows strands-agents' estimate (1.62), so budget and context-window middleware read the same
figure on every host:

* the last model call's reported usage is a known baseline: the prompt it processed (cached
  tokens included) plus what it generated, since that output is now part of the history; only the
  messages after its assistant message are estimated and added;
* with no baseline (the first call, or a previous call whose usage reports no input tokens, as a
  model that reports no usage does), the whole request is estimated: system prompt, messages and
  tool specs;
* the estimate is a character heuristic: text counts one token per four characters, JSON (tool
  inputs, structured tool results, tool specs) one per two characters of its serialised form,
  each rounded up; images, documents and other binary content count nothing.

A bridged host translates its history anew for every model call, so no message keeps its
identity from one call to the next, and a host's own history carries no usage strands would
recognise. `CallUsage` is what such a host keeps instead: the usage each recent call reported,
by the turn it produced (its text and tool-use ids, which survive the translation both ways).
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from ..content import Message, SystemPrompt, ToolSpec, Usage

__all__ = ["CallUsage", "project_input_tokens", "prompt_tokens"]


def project_input_tokens(
    messages: Sequence[Message],
    *,
    system_prompt: SystemPrompt = None,
    tool_specs: Sequence[ToolSpec] = (),
    last_call: tuple[Message, Usage] | None = None,
) -> int:
    """Estimate the input tokens of a model call sending ``messages`` (strands' way).

    Args:
        messages: The conversation the call sends (the host's history).
        system_prompt: The call's system prompt (a string or system content blocks).
        tool_specs: The tools the call offers.
        last_call: The assistant message the previous model call produced and the usage it
            reported. When that message is still in ``messages`` (found by identity, or in a
            copy of the history as the last assistant message with the same text and tool-use
            ids), its usage is the baseline. Without it, the last assistant message carrying
            strands' ``metadata["usage"]`` serves, so a strands history needs nothing more.

    Returns:
        The projected input tokens: ``InvokeModelContext.projected_input_tokens``.
    """
    return _projected(messages, system_prompt, tool_specs, _baseline(messages, last_call))


def _projected(
    messages: Sequence[Message],
    system_prompt: SystemPrompt,
    tool_specs: Sequence[ToolSpec],
    found: tuple[int, Usage] | None,
) -> int:
    if found is not None:
        index, usage = found
        known = prompt_tokens(usage) + usage.get("outputTokens", 0)
        return known + sum(_message_tokens(message) for message in messages[index + 1 :])
    total = _system_prompt_tokens(system_prompt)
    total += sum(_message_tokens(message) for message in messages)
    total += sum(_json_tokens(spec) for spec in tool_specs)
    return total


def prompt_tokens(usage: Usage) -> int:
    """The whole prompt a call processed, cached tokens included.

    Providers either count cached tokens inside ``inputTokens`` or report them apart; when input
    and output add up to the total, they are inside, otherwise the cache figures are added.
    """
    input_tokens = usage.get("inputTokens", 0)
    if input_tokens + usage.get("outputTokens", 0) == usage.get("totalTokens", 0):
        return input_tokens
    return (
        input_tokens + usage.get("cacheReadInputTokens", 0) + usage.get("cacheWriteInputTokens", 0)
    )


_Turn = int
"""What identifies a produced turn across a host's translations: the hash of its text and
tool-use ids (a hash, so a record keeps no message text alive)."""

_CALLS_KEPT = 64
"""How many calls a `CallUsage` remembers: enough for the runs of one agent in flight at once."""


def _turn(message: Message) -> _Turn:
    # One loop, not two generator expressions: this runs at the end of every model call.
    texts: list[str] = []
    uses: list[str] = []
    for block in cast("list[Mapping[str, Any]]", message.get("content", [])):
        if "text" in block:
            texts.append(block["text"])
        if "toolUse" in block:
            uses.append(block["toolUse"].get("toolUseId", ""))
    return hash(("".join(texts).strip(), tuple(uses)))


class CallUsage:
    """The usage recent model calls of one agent reported, by the turn each produced.

    A host that translates its history for every call records each call's result here
    (`record`) and projects the next call's input tokens from it (`project`): the baseline is
    the last assistant turn of the history that a recorded call produced (or that carries
    strands' usage metadata), as strands takes the last assistant message carrying usage
    metadata. Runs of the agent in flight at once share
    it without mixing their figures up: each finds its own turns.
    """

    __slots__ = ("_usage",)

    def __init__(self) -> None:
        self._usage: OrderedDict[_Turn, Usage] = OrderedDict()

    def record(self, message: Message, usage: Usage) -> None:
        """Note that a call produced ``message`` and reported ``usage``."""
        key = _turn(message)
        self._usage[key] = usage
        self._usage.move_to_end(key)
        if len(self._usage) > _CALLS_KEPT:
            self._usage.popitem(last=False)

    def project(
        self,
        messages: Sequence[Message],
        *,
        system_prompt: SystemPrompt = None,
        tool_specs: Sequence[ToolSpec] = (),
    ) -> int:
        """`project_input_tokens` for a call sending ``messages``, with the recorded usage."""
        known = self._usage

        def recorded(message: Message) -> Usage | None:
            # strands' own metadata first (a strands history carries it), then the record.
            usage = _metadata_usage(message)
            if usage is None and known:
                usage = known.get(_turn(message))
            return usage

        return _projected(messages, system_prompt, tool_specs, _last_reported(messages, recorded))


def _metadata_usage(message: Message) -> Usage | None:
    metadata: object = cast("Mapping[str, Any]", message).get("metadata")
    if isinstance(metadata, Mapping):
        reported: object = cast("Mapping[str, Any]", metadata).get("usage")
        if isinstance(reported, Mapping) and reported:
            return cast(Usage, reported)
    return None


def _last_reported(
    messages: Sequence[Message], usage_of: Callable[[Message], Usage | None]
) -> tuple[int, Usage] | None:
    """The last assistant message with a reported usage, and that usage (if it saw a prompt)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "assistant":
            continue
        usage = usage_of(message)
        if usage is not None:
            return (index, usage) if prompt_tokens(usage) > 0 else None
    return None


def _baseline(
    messages: Sequence[Message], last_call: tuple[Message, Usage] | None
) -> tuple[int, Usage] | None:
    if last_call is not None:
        produced, usage = last_call
        # From the end: the previous call's message is nearly always among the last few.
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is produced:
                return (index, usage) if prompt_tokens(usage) > 0 else None
        # A copy of the history (the one handlers get) holds the message as an equal turn.
        turn = _turn(produced)
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") == "assistant" and _turn(message) == turn:
                return (index, usage) if prompt_tokens(usage) > 0 else None
    return _last_reported(messages, _metadata_usage)


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _json_tokens(value: object) -> int:
    try:
        return math.ceil(len(json.dumps(value)) / 2)
    except (TypeError, ValueError):  # not serialisable (bytes, say): counted as nothing
        return 0


def _system_prompt_tokens(system_prompt: SystemPrompt) -> int:
    if system_prompt is None:
        return 0
    if isinstance(system_prompt, str):
        return _text_tokens(system_prompt)
    return sum(_text_tokens(block["text"]) for block in system_prompt if "text" in block)


def _message_tokens(message: Message) -> int:
    total = 0
    for block in cast("list[Mapping[str, Any]]", message.get("content", [])):
        total += _block_tokens(block)
    return total


def _block_tokens(block: Mapping[str, Any]) -> int:
    total = 0
    if "text" in block:
        total += _text_tokens(block["text"])
    if "toolUse" in block:
        tool_use = block["toolUse"]
        total += _text_tokens(tool_use.get("name", "")) + _json_tokens(tool_use.get("input", {}))
    if "toolResult" in block:
        for item in block["toolResult"].get("content", []):
            if "text" in item:
                total += _text_tokens(item["text"])
            if "json" in item:
                total += _json_tokens(item["json"])
    reasoning = block.get("reasoningContent")
    if reasoning is not None and "text" in reasoning.get("reasoningText", {}):
        total += _text_tokens(reasoning["reasoningText"]["text"])
    guard = block.get("guardContent")
    if guard is not None and "text" in guard.get("text", {}):
        total += _text_tokens(guard["text"]["text"])
    citations = block.get("citationsContent")
    if citations is not None:
        for item in citations.get("content", []):
            if "text" in item:
                total += _text_tokens(item["text"])
    return total
