"""A message's identity by what it says, for items that remember messages across calls.

Each model call gets its own copy of the history, so a message is recognised by a digest of its
role and content rather than by the object. Other keys are left out: hosts may add their own
(strands keeps usage ``metadata`` on assistant messages) without changing what was said.
"""

from __future__ import annotations

import hashlib
import json

from ..content import Message

__all__ = ["message_bytes", "message_digest"]


def message_bytes(message: Message) -> bytes:
    """The canonical bytes of ``message``'s role and content (sorted keys, media by ``repr``)."""
    return json.dumps(
        [message["role"], message["content"]], sort_keys=True, default=repr, ensure_ascii=False
    ).encode()


def message_digest(message: Message) -> str:
    """A SHA-256 digest of `message_bytes`."""
    return hashlib.sha256(message_bytes(message)).hexdigest()
