"""Topic name rules, shared by CreateTopics, Metadata auto-creation and Produce.

Kafka keeps topic names usable as directory names (``<topic>-<partition>``) and as metric names, where
``.`` and ``_`` are interchangeable; hence the character set, the length limit and the collision check.
"""
from __future__ import annotations

import re

MAX_NAME_LENGTH = 249
from groupcoord.protocol.names import INTERNAL_TOPICS

_LEGAL = r"[a-zA-Z0-9._-]+"  # compiled by its first use (re's cache), not at start-up: the first topic name checked


def topic_name_error(name: str | None) -> str | None:
    """The reason Kafka would reject ``name`` as a topic name, or None when it is legal."""
    if name is None or name == "":
        return "Topic name is illegal, it can't be empty"
    if name in (".", ".."):
        return "Topic name cannot be \".\" or \"..\""
    if len(name) > MAX_NAME_LENGTH:
        return (f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
                f"topic name: {name}")
    if not re.fullmatch(_LEGAL, name):
        return (f"Topic name \"{name}\" is illegal, it contains a character other than "
                "ASCII alphanumerics, '.', '_' and '-'")
    return None


def is_internal(name: str) -> bool:
    """Internal topics are written only by the broker itself and cannot be deleted by clients."""
    return name in INTERNAL_TOPICS


def collision_key(name: str) -> str:
    """Names equal under this key collide in metric names (``.`` and ``_`` map to the same character)."""
    return name.replace(".", "_")
