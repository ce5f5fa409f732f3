"""Subscribed topic names resolved against the topic catalog, and the group's metadata hash.

Kafka hashes every subscribed topic's id, name, partitions and racks (MetadataHash in ShareGroupMetadataValue)
to notice a topic change without storing the topics; this hashes (name, id, partition count) with BLAKE2b —
not Kafka's value, but it changes exactly when those do, and it is persisted so a restart compares alike.

hashlib is imported by the first hash, not with this module: it loads OpenSSL's _hashlib, ~0.6 % of the daemon's
start-up to `listening on`; the warm-up after that imports it (coordinator/apis/warm_up.py).
"""

from __future__ import annotations

import struct
import uuid
from typing import Any, Iterable

from groupcoord.coordinator.groups.consumer.topics import name_of, resolve

__all__ = ["resolve", "name_of", "metadata_hash", "topic_ids"]


def metadata_hash(topics: Any, names: Iterable[str]) -> int:
    import hashlib  # not at the top: see the module docstring

    h = hashlib.blake2b(digest_size=8)
    found = False
    for name in sorted(set(names)):
        info = resolve(topics, name)
        if info is None:
            continue
        found = True
        h.update(name.encode() + b"\0" + info[0].bytes + struct.pack(">i", info[1]))
    return struct.unpack(">q", h.digest())[0] if found else 0


def topic_ids(topics: Any, names: Iterable[str]) -> frozenset[uuid.UUID]:
    out = set()
    for name in names:
        info = resolve(topics, name)
        if info is not None:
            out.add(info[0])
    return frozenset(out)
