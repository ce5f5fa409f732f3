"""A hand-written writer of FetchResponse bodies for the flexible versions (12-17), from the fetch service's
version-neutral dict.

Why: a consumer at the log end is answered ~41,000 times per 500,000 records in franz-go's TestGroupETL, each
answer a few small batches of ~11 partitions; the schema-driven encoder (protocol/encode.py) walks a plan per
field, per partition, which was ~20 % of a tail fetch's Python (cProfile, bench.fetch_instructions' tail shape).
This writes the same bytes from struct-packed parts.

kio stays the source of truth: tests/protocol/test_fetch_response.py checks every version served here byte for
byte against kio's serializer and the general encoder, over generated answers. Anything this does not write
exactly as they would makes it return ``None`` and the general encoder takes the answer: records as a
``FileRegion`` or as a memoryview the general encoder would splice into the frame uncopied (``SPLICE_MIN``),
a throttle time that is not a plain int, and any field it does not know (the tagged ones, a topic's or
partition's extra keys)."""

from __future__ import annotations

import struct
import uuid
from typing import Any

from .encode import SPLICE_MIN, EncodedBody
from .varint import write_unsigned_varint

VERSIONS = range(12, 18)
"""The flexible FetchResponse versions: 12 names topics, 13 and later give their ids."""

_TOP = struct.Struct(">ihi")          # throttle time, error code, session id
_PARTITION = struct.Struct(">ihqqq")  # partition index, error code, high watermark, last stable, log start
_ABORTED = struct.Struct(">qqB")      # producer id, first offset, empty tag buffer
_I32 = struct.Struct(">i")
_pack_partition = _PARTITION.pack
_pack_aborted = _ABORTED.pack
_pack_i32 = _I32.pack

_TOPIC_KEYS = frozenset({"topic", "topic_id", "partitions"})
_PARTITION_KEYS = frozenset({"partition_index", "error_code", "high_watermark", "last_stable_offset",
                             "log_start_offset", "aborted_transactions", "preferred_read_replica", "records"})
_TOP_KEYS = frozenset({"throttle_time", "error_code", "session_id", "responses"})


class _Declined(Exception):
    """Raised inside the writer for an answer the general encoder must write."""


def write_body(version: int, response: dict) -> EncodedBody | None:
    """The body of a FetchResponse ``version`` (12-17) for the fetch service's dict, or None where the general
    encoder must write it (see the module's docstring)."""
    if version not in VERSIONS or type(response) is not dict or not _TOP_KEYS.issuperset(response):
        return None
    throttle = response.get("throttle_time")
    if type(throttle) is not int:
        return None
    by_id = version >= 13
    try:
        out = bytearray(_TOP.pack(throttle, response["error_code"], response.get("session_id", 0)))
        responses = response["responses"]
        write_unsigned_varint(out, len(responses) + 1)
        for topic in responses:
            _write_topic(out, topic, by_id)
    except (_Declined, KeyError, TypeError, AttributeError, ValueError, struct.error):
        return None  # (the general encoder writes it, or raises what it raises for it)
    out.append(0)  # the answer's tagged fields (node_endpoints, v16+: none, as the general encoder leaves them)
    return EncodedBody(out)


def _write_topic(out: bytearray, topic: dict, by_id: bool) -> None:
    if type(topic) is not dict or not _TOPIC_KEYS.issuperset(topic):
        raise _Declined
    if by_id:
        topic_id = topic.get("topic_id")
        if type(topic_id) is not uuid.UUID:
            raise _Declined
        out += topic_id.bytes
    else:
        name = topic["topic"].encode("utf-8")
        write_unsigned_varint(out, len(name) + 1)
        out += name
    partitions = topic["partitions"]
    write_unsigned_varint(out, len(partitions) + 1)
    for entry in partitions:
        if type(entry) is not dict or not _PARTITION_KEYS.issuperset(entry):
            raise _Declined
        out += _pack_partition(entry["partition_index"], entry["error_code"], entry["high_watermark"],
                               entry.get("last_stable_offset", -1), entry.get("log_start_offset", -1))
        aborted = entry["aborted_transactions"]
        if aborted is None:
            out.append(0)
        else:
            write_unsigned_varint(out, len(aborted) + 1)
            for txn in aborted:
                out += _pack_aborted(txn["producer_id"], txn["first_offset"], 0)
        out += _pack_i32(entry.get("preferred_read_replica", -1))
        records = entry["records"]
        if records is None:
            out.append(0)
        else:
            kind = type(records)
            if kind is memoryview:
                if len(records) >= SPLICE_MIN:
                    raise _Declined  # the general encoder cuts the body around it (no copy)
            elif kind is not bytes and kind is not bytearray:
                raise _Declined  # a FileRegion (sent with sendfile), or anything else
            write_unsigned_varint(out, len(records) + 1)
            out += records
        out.append(0)  # the partition's tagged fields (none: no diverging epoch, leader or snapshot id)
    out.append(0)  # the topic's tagged fields
