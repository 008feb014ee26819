"""`Pseudonyms`: one run's stable stand-ins for what a reversible `Redact` masks.

The model is sent ``<EMAIL_1>`` where the conversation holds an address; the same value gets the
same pseudonym on every call of the run, so the model can refer to it, and the pseudonyms it
writes back are replaced by the values they stand for where the value leaves the model: a tool's
arguments and the answer the user reads. Only pseudonyms this run handed out are restored: a
``<EMAIL_7>`` the model made up stays as it is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._content_rewrite import ContentRewriter

__all__ = ["PSEUDONYM", "Pseudonyms", "pseudonym_label", "pseudonym_of"]

PSEUDONYM = re.compile(r"<[A-Z][A-Z0-9_]*_[1-9][0-9]*>")
"""What every pseudonym looks like: ``<`` a label, ``_`` a number from 1, ``>``."""

_NOT_LABEL = re.compile(r"[^A-Z0-9]+")


def pseudonym_label(name: str) -> str:
    """The label of a pattern's pseudonyms: its name upper-cased, other characters as ``_``."""
    label = _NOT_LABEL.sub("_", name.upper()).strip("_")
    if not label or not label[0].isalpha():
        label = f"X_{label}" if label else "X"
    return label


class Pseudonyms:
    """The pseudonyms of one run, both ways.

    Args:
        mask_text: Masks a text, given how a match becomes a pseudonym (``(name, value) ->
            pseudonym``); the run's own masking, bound to this map.
    """

    __slots__ = ("_by_value", "_counts", "_mask_text", "masking", "restoring", "values")

    def __init__(self, mask_text: Callable[[str, Callable[[str, str], str]], str]) -> None:
        self._mask_text = mask_text
        self._counts: dict[str, int] = {}
        self._by_value: dict[str, str] = {}
        # Each pseudonym handed out, to the value it stands for.
        self.values: dict[str, str] = {}
        # Converse content masked with this run's pseudonyms, and with the values put back.
        self.masking = ContentRewriter(self.mask)
        self.restoring = ContentRewriter(self.restore)

    def pseudonym(self, name: str, value: str) -> str:
        """The pseudonym of ``value`` (matched by the pattern ``name``), handed out if new."""
        known = self._by_value.get(value)
        if known is not None:
            return known
        label = pseudonym_label(name)
        count = self._counts.get(label, 0) + 1
        self._counts[label] = count
        made = f"<{label}_{count}>"
        self._by_value[value] = made
        self.values[made] = value
        return made

    def mask(self, text: str) -> str:
        """``text`` with every match replaced by its pseudonym."""
        return self._mask_text(text, self.pseudonym)

    def restore(self, text: str) -> str:
        """``text`` with every pseudonym of this run replaced by its value."""
        if "<" not in text or not self.values:
            return text
        restored = PSEUDONYM.sub(self.restore_match, text)
        return text if restored == text else restored

    def restore_match(self, match: re.Match[str]) -> str:
        """What a pseudonym found in the model's text becomes: its value, if this run made it."""
        found = match.group(0)
        return self.values.get(found, found)


def pseudonym_of(
    name: str, check: Callable[[str], bool] | None, pseudonym: Callable[[str, str], str]
) -> Callable[[re.Match[str]], str]:
    """What a match of the pattern ``name`` becomes in a reversible run."""

    def substitute(match: re.Match[str]) -> str:
        found = match.group(0)
        if check is not None and not check(found):
            return found
        return pseudonym(name, found)

    return substitute
