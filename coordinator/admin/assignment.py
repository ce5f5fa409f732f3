"""Decode the consumer protocol's member assignment (the bytes a DescribeGroups member carries).

The blob is an int16 version followed by a ConsumerProtocolAssignment body. Versions newer than kio knows only
append fields, so they are read with the newest known layout — as Kafka's own ConsumerProtocol does.
"""

from __future__ import annotations

import struct

from kio.schema.consumer_protocol_assignment.v0.data import ConsumerProtocolAssignment as _V0
from kio.schema.consumer_protocol_assignment.v1.data import ConsumerProtocolAssignment as _V1
from kio.schema.consumer_protocol_assignment.v2.data import ConsumerProtocolAssignment as _V2
from kio.schema.consumer_protocol_assignment.v3.data import ConsumerProtocolAssignment as _V3
from kio.serial import entity_reader

_BY_VERSION = (_V0, _V1, _V2, _V3)
_VERSION = struct.Struct(">h")


def decode_assignment(blob: bytes | None) -> tuple[tuple[str, int], ...]:
    """(topic, partition) pairs of a consumer-protocol assignment; empty for an empty or foreign blob."""
    if not blob or len(blob) < _VERSION.size:
        return ()
    (version,) = _VERSION.unpack_from(blob, 0)
    if version < 0:
        return ()
    schema = _BY_VERSION[min(version, len(_BY_VERSION) - 1)]
    try:
        assignment, _ = entity_reader(schema)(blob, _VERSION.size)
    except Exception:  # a non-consumer protocol type (e.g. connect) carries its own format
        return ()
    return tuple(
        (tp.topic, int(partition)) for tp in assignment.assigned_partitions for partition in tp.partitions
    )
