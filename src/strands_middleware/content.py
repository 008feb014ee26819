"""Converse-shaped conversation data: messages, content blocks, tools, usage and stream chunks.

These are TypedDicts rather than classes because the data crosses every boundary of an agent
loop as plain JSON-ready dicts: models produce them, tools consume them, sessions persist them and
hosts such as ``strands-agents`` already hold their conversations in exactly this shape. Keeping
the wire shape means middleware can hand a message straight to a host, a model or ``json.dumps``
without conversion, while a type checker still catches a misspelt key.

The shapes follow the Amazon Bedrock Converse API, which is the lingua franca the Strands hosts
translate every model provider into. Media payloads (images, documents, video, audio) are typed
loosely as ``dict[str, Any]``: middleware forwards them, it never needs to look inside.
"""

# No ``from __future__ import annotations`` here, unlike the rest of the package: TypedDict can
# only tell required from optional keys at run time (``__required_keys__``) when ``Required`` and
# ``NotRequired`` are real objects, not annotation strings. Every annotation below is valid at run
# time on Python 3.10.

from typing import Any, Literal

from typing_extensions import NotRequired, Required, TypedDict

__all__ = [
    "CachePoint",
    "ContentBlock",
    "ContentBlockDelta",
    "ContentBlockDeltaEvent",
    "ContentBlockDeltaReasoning",
    "ContentBlockDeltaToolUse",
    "ContentBlockStart",
    "ContentBlockStartEvent",
    "ContentBlockStartToolUse",
    "ContentBlockStopEvent",
    "Message",
    "MessageStartEvent",
    "MessageStopEvent",
    "Messages",
    "MetadataEvent",
    "Metrics",
    "ReasoningContentBlock",
    "ReasoningTextBlock",
    "Role",
    "StopReason",
    "StreamEvent",
    "SystemContentBlock",
    "SystemPrompt",
    "ToolChoice",
    "ToolChoiceAny",
    "ToolChoiceAnyDict",
    "ToolChoiceAuto",
    "ToolChoiceAutoDict",
    "ToolChoiceTool",
    "ToolChoiceToolDict",
    "ToolInputSchema",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSpec",
    "ToolUse",
    "Usage",
]

# --------------------------------------------------------------------------------------------
# Messages and content blocks
# --------------------------------------------------------------------------------------------

Role = Literal["user", "assistant"]
"""Who authored a message. Converse has no system role: the system prompt travels separately."""


class CachePoint(TypedDict):
    """A marker telling the provider it may cache everything before this point of the prompt.

    Attributes:
        type: The cache kind; ``"default"`` is the only one Converse defines.
        ttl: How long the provider should keep the cache (``"5m"``, ``"1h"``) where it supports it.
    """

    type: str
    ttl: NotRequired[str]


class ToolUse(TypedDict):
    """A model's request to call one tool.

    Attributes:
        toolUseId: The id the matching `ToolResult` must echo so the model can pair them.
        name: The tool to call.
        input: The arguments, already parsed from the JSON the model streamed.
        reasoningSignature: A provider token binding the call to the model's reasoning; some
            providers reject the next turn if it is not sent back unchanged.
    """

    toolUseId: str
    name: str
    input: Any
    reasoningSignature: NotRequired[str]


class ToolResultContent(TypedDict, total=False):
    """One piece of what a tool returned; exactly one key is normally set.

    Attributes:
        text: Plain text output.
        json: Any JSON-serialisable value.
        image: An image, in the Converse image shape.
        document: A document, in the Converse document shape.
    """

    text: str
    json: Any
    image: dict[str, Any]
    document: dict[str, Any]


ToolResultStatus = Literal["success", "error"]
"""Whether a tool call worked. An ``"error"`` result is still a result the model gets to see."""


class ToolResult(TypedDict):
    """The outcome of one tool call, sent back to the model in a user message.

    Attributes:
        toolUseId: The `ToolUse` id this answers.
        status: ``"success"`` or ``"error"``.
        content: What the tool produced (or the error description).
    """

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


class ReasoningTextBlock(TypedDict, total=False):
    """The visible chain of thought a reasoning model produced.

    Attributes:
        text: The reasoning text.
        signature: A provider token that proves the text is the model's own; it must be sent back
            unchanged with the block on the next turn.
    """

    text: str
    signature: str


class ReasoningContentBlock(TypedDict, total=False):
    """A reasoning block: either readable reasoning or reasoning the provider encrypted.

    Attributes:
        reasoningText: Readable reasoning.
        redactedContent: Opaque reasoning the provider withheld; forward it, never decode it.
    """

    reasoningText: ReasoningTextBlock
    redactedContent: bytes


class ContentBlock(TypedDict, total=False):
    """One block of a message; normally exactly one key is set.

    Attributes:
        text: Text.
        toolUse: A tool call the assistant asks for.
        toolResult: A tool's answer, in a user message.
        reasoningContent: Reasoning a model produced before answering.
        image: An image (Converse image shape, forwarded untouched).
        document: A document (Converse document shape, forwarded untouched).
        video: A video (Converse video shape, forwarded untouched).
        audio: Audio (forwarded untouched).
        guardContent: Content flagged for guardrail evaluation.
        citationsContent: Text with the citations that back it.
        cachePoint: A prompt-cache marker between blocks.
    """

    text: str
    toolUse: ToolUse
    toolResult: ToolResult
    reasoningContent: ReasoningContentBlock
    image: dict[str, Any]
    document: dict[str, Any]
    video: dict[str, Any]
    audio: dict[str, Any]
    guardContent: dict[str, Any]
    citationsContent: dict[str, Any]
    cachePoint: CachePoint


class Message(TypedDict):
    """One turn of a conversation.

    Attributes:
        role: ``"user"`` or ``"assistant"``.
        content: The blocks of the turn, in order.
    """

    role: Role
    content: list[ContentBlock]


Messages = list[Message]
"""A conversation, oldest turn first."""

# --------------------------------------------------------------------------------------------
# System prompt
# --------------------------------------------------------------------------------------------


class SystemContentBlock(TypedDict, total=False):
    """One block of a structured system prompt.

    Attributes:
        text: Instructions for the model.
        cachePoint: A prompt-cache marker, so a long stable prompt is cached once.
    """

    text: str
    cachePoint: CachePoint


SystemPrompt = str | list[SystemContentBlock] | None
"""A system prompt: plain text, structured blocks (for cache points), or none at all."""

# --------------------------------------------------------------------------------------------
# Tools offered to the model
# --------------------------------------------------------------------------------------------


class ToolInputSchema(TypedDict):
    """The wrapper Converse puts around a tool's JSON Schema.

    Attributes:
        json: The JSON Schema of the tool's input object.
    """

    json: dict[str, Any]


class ToolSpec(TypedDict):
    """What the model is told about one tool.

    Attributes:
        name: The name the model calls it by.
        description: What the tool does; the model decides when to call it from this.
        inputSchema: The shape of the arguments.
    """

    name: str
    description: str
    inputSchema: ToolInputSchema


class ToolChoiceAuto(TypedDict):
    """The model decides whether to call a tool at all (the empty options of the ``auto`` form)."""


class ToolChoiceAny(TypedDict):
    """The model must call some tool (the empty options of the ``any`` form)."""


class ToolChoiceTool(TypedDict):
    """The model must call one named tool.

    Attributes:
        name: The tool it must call.
    """

    name: str


# Literal-keyed dicts rather than TypedDicts: Converse spells each choice as a one-key object
# (``{"auto": {}}``), and this is the spelling the Strands hosts use, so values pass between
# them without conversion.
ToolChoiceAutoDict = dict[Literal["auto"], ToolChoiceAuto]
"""``{"auto": {}}``."""

ToolChoiceAnyDict = dict[Literal["any"], ToolChoiceAny]
"""``{"any": {}}``."""

ToolChoiceToolDict = dict[Literal["tool"], ToolChoiceTool]
"""``{"tool": {"name": ...}}``."""

ToolChoice = ToolChoiceAutoDict | ToolChoiceAnyDict | ToolChoiceToolDict
"""How the model may choose among the offered tools."""

# --------------------------------------------------------------------------------------------
# Accounting
# --------------------------------------------------------------------------------------------


class Usage(TypedDict, total=False):
    """Tokens one model call consumed.

    Attributes:
        inputTokens: Tokens sent to the model.
        outputTokens: Tokens the model generated.
        totalTokens: Their sum, as the provider reports it.
        cacheReadInputTokens: Input tokens served from the prompt cache, where reported.
        cacheWriteInputTokens: Input tokens written to the prompt cache, where reported.
    """

    inputTokens: Required[int]
    outputTokens: Required[int]
    totalTokens: Required[int]
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class Metrics(TypedDict, total=False):
    """Timing of one model call.

    Attributes:
        latencyMs: Wall time of the whole call, in milliseconds.
        timeToFirstByteMs: Time until the first streamed byte, where reported.
    """

    latencyMs: Required[int]
    timeToFirstByteMs: int


StopReason = Literal[
    "cancelled",
    "checkpoint",
    "content_filtered",
    "end_turn",
    "guardrail_intervened",
    "interrupt",
    "limit_output_tokens",
    "limit_structured_output_attempts",
    "limit_total_tokens",
    "limit_turns",
    "max_tokens",
    "stop_sequence",
    "tool_use",
]
"""Why a model call or an agent pass stopped.

The model itself reports ``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``,
``guardrail_intervened`` and ``content_filtered``. The agent loop adds the rest: ``interrupt``
(waiting for a human), ``cancelled``, ``checkpoint`` (paused for persistence) and the
``limit_*`` reasons (a per-invocation budget ran out; strands-agents 1.65 added
``limit_structured_output_attempts``, its cap on attempts at a structured output).
"""

# --------------------------------------------------------------------------------------------
# Stream chunks a model yields
#
# The names ending in "Event" are Converse's own names for these chunk parts. They are plain
# dicts; the dict-subclass events in `strands_middleware.events` are what the agent loop and
# middleware stream.
# --------------------------------------------------------------------------------------------


class MessageStartEvent(TypedDict):
    """Opens the streamed message.

    Attributes:
        role: The author of the message being streamed (``"assistant"`` for a model reply).
    """

    role: Role


class ContentBlockStartToolUse(TypedDict):
    """The fixed part of a tool call, sent before its input is streamed.

    Attributes:
        toolUseId: The id of the call.
        name: The tool being called.
        reasoningSignature: A provider token binding the call to the model's reasoning.
    """

    toolUseId: str
    name: str
    reasoningSignature: NotRequired[str]


class ContentBlockStart(TypedDict, total=False):
    """What a new content block starts with; empty for text and reasoning blocks.

    Attributes:
        toolUse: Set when the block is a tool call.
    """

    toolUse: ContentBlockStartToolUse


class ContentBlockStartEvent(TypedDict, total=False):
    """Opens a content block.

    Attributes:
        contentBlockIndex: The block's position in the message (some providers omit it).
        start: What the block starts with.
    """

    contentBlockIndex: int
    start: ContentBlockStart


class ContentBlockDeltaToolUse(TypedDict):
    """A fragment of a tool call's JSON input.

    Attributes:
        input: The next characters of the JSON text; only the concatenation is valid JSON.
        toolUseId: Sent here instead of in the block start by some providers.
        name: Sent here instead of in the block start by some providers.
    """

    input: str
    toolUseId: NotRequired[str]
    name: NotRequired[str]


class ContentBlockDeltaReasoning(TypedDict, total=False):
    """A fragment of reasoning; normally exactly one key is set.

    Attributes:
        text: The next characters of the reasoning text.
        signature: (Part of) the signature that authenticates the reasoning.
        redactedContent: (Part of) reasoning the provider encrypted.
    """

    text: str
    signature: str
    redactedContent: bytes


class ContentBlockDelta(TypedDict, total=False):
    """The new material of a content block; exactly one key is set.

    Attributes:
        text: The next characters of a text block.
        toolUse: The next fragment of a tool call's input.
        reasoningContent: The next fragment of a reasoning block.
    """

    text: str
    toolUse: ContentBlockDeltaToolUse
    reasoningContent: ContentBlockDeltaReasoning


class ContentBlockDeltaEvent(TypedDict, total=False):
    """Adds material to the open content block.

    Attributes:
        contentBlockIndex: The block's position in the message (some providers omit it).
        delta: The new material.
    """

    contentBlockIndex: int
    delta: ContentBlockDelta


class ContentBlockStopEvent(TypedDict, total=False):
    """Closes the open content block.

    Attributes:
        contentBlockIndex: The block's position in the message (some providers omit it).
    """

    contentBlockIndex: int


class MessageStopEvent(TypedDict, total=False):
    """Ends the streamed message.

    Attributes:
        stopReason: Why the model stopped.
        additionalModelResponseFields: Provider-specific extras, forwarded untouched.
    """

    stopReason: Required[StopReason]
    additionalModelResponseFields: Any


class MetadataEvent(TypedDict, total=False):
    """Accounting for the call, sent after the message ends.

    Attributes:
        usage: Tokens consumed.
        metrics: Timing.
        trace: Guardrail trace information, forwarded untouched.
    """

    usage: Usage
    metrics: Metrics
    trace: Any


class StreamEvent(TypedDict, total=False):
    """One chunk of a model's streamed reply; exactly one key is set.

    A well-formed stream is ``messageStart``; then, per block, ``contentBlockStart`` (optional for
    text), any number of ``contentBlockDelta`` and a ``contentBlockStop``; then ``messageStop``
    and usually ``metadata``.

    Attributes:
        messageStart: The message opens.
        contentBlockStart: A content block opens.
        contentBlockDelta: The open block grows.
        contentBlockStop: The open block closes.
        messageStop: The message ends, with the stop reason.
        metadata: Usage and timing of the call.
    """

    messageStart: MessageStartEvent
    contentBlockStart: ContentBlockStartEvent
    contentBlockDelta: ContentBlockDeltaEvent
    contentBlockStop: ContentBlockStopEvent
    messageStop: MessageStopEvent
    metadata: MetadataEvent
