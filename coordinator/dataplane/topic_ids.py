"""Topic ids: Kafka's random UUIDs, shown base64url without padding, kept in each partition's
``partition.metadata`` file exactly as Kafka writes it, so ids survive restarts and tools that read the
data directory see the same id the protocol reports.
"""
from __future__ import annotations

import base64
import os
import uuid
from pathlib import Path

PARTITION_METADATA = "partition.metadata"
from groupcoord.protocol.names import ZERO_UUID
_RESERVED = {ZERO_UUID, uuid.UUID(int=1)}   # "no id" and the KRaft metadata topic's id


def to_kafka_string(topic_id: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(topic_id.bytes).decode().rstrip("=")


def from_kafka_string(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text.strip() + "==")
    if len(raw) != 16:
        raise ValueError(f"not a topic id: {text!r}")
    return uuid.UUID(bytes=raw)


def random_topic_id() -> uuid.UUID:
    """Like Kafka's Uuid.randomUuid: never a reserved id, never a string starting with '-'."""
    while True:
        candidate = uuid.uuid4()
        if candidate not in _RESERVED and not to_kafka_string(candidate).startswith("-"):
            return candidate


def write_partition_metadata(directory: Path, topic_id: uuid.UUID) -> None:
    path = Path(directory) / PARTITION_METADATA
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        f.write(f"version: 0\ntopic_id: {to_kafka_string(topic_id)}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_partition_metadata(directory: Path) -> uuid.UUID | None:
    path = Path(directory) / PARTITION_METADATA
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "topic_id":
            try:
                return from_kafka_string(value)
            except ValueError:
                return None
    return None
