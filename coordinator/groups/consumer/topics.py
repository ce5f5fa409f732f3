"""Topic names <-> ids and partition counts, read from the broker's topic catalog.

KIP-848 assignments name topics by id; subscriptions name them by name.
"""

from __future__ import annotations

import uuid
from typing import Any


def resolve(topics: Any, name: str) -> tuple[uuid.UUID, int] | None:
    """(topic id, partition count) of an existing topic, or None."""
    if topics is None:
        return None
    topic = topics.get(name)
    if topic is None:
        return None
    return topic.topic_id, topic.partitions


def name_of(topics: Any, topic_id: uuid.UUID) -> str | None:
    if topics is None:
        return None
    topic = topics.by_id(topic_id)
    return None if topic is None else topic.name


def subscription_metadata(topics: Any, names: set[str]) -> dict[str, int]:
    """{name: partition count} of the subscribed topics that exist (what Kafka hashes to detect changes)."""
    out = {}
    for name in sorted(names):
        found = resolve(topics, name)
        if found is not None:
            out[name] = found[1]
    return out
