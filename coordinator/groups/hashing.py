"""Which ``__consumer_offsets`` partition (shard) owns a group: exactly Kafka's formula.

Clients compute nothing here, but the partition a group lives in is visible in the
log's directory names and must match Kafka for data written by one to be read by
the other, so Java's ``String.hashCode`` is reproduced bit for bit.
"""

from __future__ import annotations

import sys
from array import array
from operator import mul

_INT_MIN = -(2**31)
_MASK = 0xFFFFFFFF
_CHUNK = 64
_POWERS = tuple(pow(31, k, 1 << 32) for k in range(_CHUNK + 1))  # 31**k mod 2**32, k = 0.._CHUNK
_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"  # code units in the machine's order


def java_string_hash(text: str) -> int:
    """Java ``String.hashCode()``: 31*h + c over UTF-16 code units, wrapped to signed 32 bits.

    Written as the sum it expands to, ``c[0]*31**(n-1) + ... + c[n-1]*31**0`` (mod 2**32), a chunk of up to
    64 units at a time summed in C (``sum(map(mul, ...))`` over the units from the last and the powers of 31),
    rather than one Python step per character: a new group's id is hashed once per group formed, and the
    character loop was ~2 % of the daemon's instructions per group. An ASCII id's bytes are its code units."""
    units = text.encode("ascii") if text.isascii() else array("H", text.encode(_UTF16))
    powers = _POWERS
    h = 0
    for start in range(0, len(units), _CHUNK):
        chunk = units[start:start + _CHUNK]
        h = (h * powers[len(chunk)] + sum(map(mul, reversed(chunk), powers))) & _MASK
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: like ``abs`` but ``Integer.MIN_VALUE`` maps to 0, not to itself."""
    return 0 if n == _INT_MIN else abs(n)


# Every request routes by group id (or transactional id, or share-partition key), and hashing one in Python
# each time is measurable, so answers are cached — bounded in count and in what one entry may hold: keys
# are the clients' strings, and a cache of 65,536 of them grew the daemon's RSS by 18 MiB (24 %) over a
# million fuzzed frames (group ids up to 32 KiB would have let one client pin gigabytes). Longer keys are
# hashed each time.
CACHED_KEYS = 16_384
CACHED_KEY_CHARS = 128


class Partitions(dict):
    """``partitions[group_id]``: the partition of ``group_id`` among ``num_partitions``, hashed once and then
    remembered, at most ``CACHED_KEYS`` keys of at most ``CACHED_KEY_CHARS`` (longer ones are hashed each time),
    the oldest forgotten first. A hit is the dictionary's own look-up, no Python call: the heartbeat lane holds
    the table itself (``partitions``); everyone else asks ``partition_for``."""

    __slots__ = ("num_partitions",)

    def __init__(self, num_partitions: int) -> None:
        super().__init__()
        self.num_partitions = num_partitions

    def __missing__(self, group_id: str) -> int:
        partition = kafka_abs(java_string_hash(group_id)) % self.num_partitions
        if len(group_id) <= CACHED_KEY_CHARS:
            if len(self) >= CACHED_KEYS:
                del self[next(iter(self))]
            self[group_id] = partition
        return partition


_TABLES: dict[int, Partitions] = {}


def partitions(num_partitions: int) -> Partitions:
    """The one table of answers for ``num_partitions`` (a broker has one or two counts: its offsets and
    transaction-state topics), shared by every caller."""
    table = _TABLES.get(num_partitions)
    if table is None:
        table = _TABLES[num_partitions] = Partitions(num_partitions)
    return table


def partition_for(group_id: str, num_partitions: int) -> int:
    table = _TABLES.get(num_partitions)
    if table is None:
        table = partitions(num_partitions)
    return table[group_id]
