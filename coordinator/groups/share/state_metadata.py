"""ShareGroupStatePartitionMetadata as live state: which share partitions of a group are being
initialised, are initialised (their state exists in the share coordinator) or are being deleted.

Kafka keeps it per group beside the group (GroupMetadataManager.shareGroupStatePartitionMetadata); the
helpers here are its combineInitMaps and friends, as pure functions over immutable maps.
"""

from __future__ import annotations

import uuid
from dataclasses import field

from groupcoord.coordinator.groups import offsets_records as rec  # consumer/share-group records: loaded on first use
from groupcoord.protocol.frozen import frozen_dataclass

InitMap = dict[uuid.UUID, tuple[str, frozenset[int]]]  # topic id -> (topic name, partitions)


@frozen_dataclass
class ShareStatePartitions:
    """A share group's ShareGroupStatePartitionMetadata: partitions initializing, initialized, and topics being
    deleted."""
    initializing: InitMap = field(default_factory=dict)
    initialized: InitMap = field(default_factory=dict)
    deleting: frozenset[uuid.UUID] = frozenset()
    deleting_names: dict[uuid.UUID, str] = field(default_factory=dict)
    # When each initializing topic was (re)sent to the persister, in memory (Kafka stamps the replay time).
    initializing_since: dict[uuid.UUID, int] = field(default_factory=dict)


def combine(a: InitMap, b: InitMap) -> InitMap:
    """Kafka's combineInitMaps: the union, partition by partition; b's name wins."""
    out: InitMap = dict(a)
    for topic_id, (name, parts) in b.items():
        old = out.get(topic_id)
        out[topic_id] = (name, (old[1] if old else frozenset()) | parts)
    return out


def subtract(a: InitMap, b: dict[uuid.UUID, frozenset[int]]) -> InitMap:
    out: InitMap = {}
    for topic_id, (name, parts) in a.items():
        left = parts - b.get(topic_id, frozenset())
        if left:
            out[topic_id] = (name, left)
    return out


def record(group_id: str, initializing: InitMap, initialized: InitMap, deleting: dict[uuid.UUID, str]):
    def infos(m: InitMap) -> tuple[rec.TopicPartitionsInfo, ...]:
        return tuple(rec.TopicPartitionsInfo(t, name, tuple(sorted(ps)))
                     for t, (name, ps) in sorted(m.items(), key=lambda kv: str(kv[0])))

    value = rec.ShareGroupStatePartitionMetadataValue(
        initializing_topics=infos(initializing),
        initialized_topics=infos(initialized),
        deleting_topics=tuple(rec.TopicInfo(t, n) for t, n in sorted(deleting.items(), key=lambda kv: str(kv[0]))),
    )
    return rec.ShareGroupStatePartitionMetadataKey(group_id), value


def tombstone(group_id: str):
    return rec.ShareGroupStatePartitionMetadataKey(group_id), None


def from_value(value: rec.ShareGroupStatePartitionMetadataValue, now: int) -> ShareStatePartitions:
    initializing = {t.topic_id: (t.topic_name, frozenset(t.partitions)) for t in value.initializing_topics}
    return ShareStatePartitions(
        initializing=initializing,
        initialized={t.topic_id: (t.topic_name, frozenset(t.partitions)) for t in value.initialized_topics},
        deleting=frozenset(t.topic_id for t in value.deleting_topics),
        deleting_names={t.topic_id: t.topic_name for t in value.deleting_topics},
        initializing_since={t: now for t in initializing},
    )
