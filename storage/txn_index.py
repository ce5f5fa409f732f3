"""The transaction index (``<base offset>.txnindex``): the aborted transactions whose ABORT marker lies in
one segment, in Kafka's exact layout (its TransactionIndex and AbortedTxn).

Each entry is 34 bytes, big-endian: int16 version (0), int64 producer id, int64 first offset (the
transaction's first batch in this partition), int64 last offset (the ABORT marker's offset), int64 last
stable offset (the LSO once the abort was written). A read_committed Fetch answers the entries overlapping
what it returns, so the consumer can drop the aborted producer's batches without reading ahead to the
marker. The file exists only for a segment that holds an abort (Kafka creates it lazily too); entries are
in the order of their markers, so their last offsets increase.
"""
from __future__ import annotations

import struct
from typing import Final

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.storage.index import IndexFormatError

TXN_INDEX_VERSION: Final = 0
ENTRY_SIZE: Final = 34
_ENTRY = struct.Struct(">hqqqq")


@frozen_dataclass
class AbortedTxn:
    """One ``.txnindex`` entry: an aborted transaction's producer, first and last offsets, and the LSO after it."""
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int

    def to_bytes(self) -> bytes:
        return _ENTRY.pack(TXN_INDEX_VERSION, self.producer_id, self.first_offset, self.last_offset,
                           self.last_stable_offset)


class TransactionIndex:
    """One segment's aborted transactions, held in memory; the file is their concatenation."""

    def __init__(self, base_offset: int, entries: list[AbortedTxn] | None = None) -> None:
        self.base_offset = base_offset
        self.entries: list[AbortedTxn] = entries or []

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def from_bytes(cls, base_offset: int, data: bytes) -> TransactionIndex:
        """Kafka refuses a file whose length is not a whole number of entries or with an unknown version."""
        if len(data) % ENTRY_SIZE:
            raise IndexFormatError(f"transaction index of {len(data)} bytes is not a multiple of {ENTRY_SIZE}")
        entries = []
        for pos in range(0, len(data), ENTRY_SIZE):
            version, producer_id, first, last, lso = _ENTRY.unpack_from(data, pos)
            if version != TXN_INDEX_VERSION:
                raise IndexFormatError(f"transaction index entry at {pos} has unknown version {version}")
            entries.append(AbortedTxn(producer_id, first, last, lso))
        return cls(base_offset, entries)

    def to_bytes(self) -> bytes:
        return b"".join(entry.to_bytes() for entry in self.entries)

    def append(self, entry: AbortedTxn) -> bool:
        """Add an entry unless one for the same marker is there already (recovery may meet it twice);
        False when it was. An entry going back in last offsets is refused, as Kafka's append does."""
        if self.entries:
            last = self.entries[-1].last_offset
            if entry.last_offset == last or entry in self.entries:
                return False
            if entry.last_offset < last:
                raise ValueError(f"aborted transaction {entry} goes back before last offset {last}")
        self.entries.append(entry)
        return True

    def contains(self, last_offset: int) -> bool:
        return any(entry.last_offset == last_offset for entry in self.entries)

    def collect(self, fetch_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """Kafka's collectAbortedTxns: the transactions still open at ``fetch_offset`` (their marker is at or
        past it) that began before ``upper_bound_offset``."""
        return [entry for entry in self.entries
                if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound_offset]

    def truncate_from(self, offset: int) -> bool:
        """Drop the entries whose marker is at or past ``offset`` (the log was cut there); True if any were."""
        kept = [entry for entry in self.entries if entry.last_offset < offset]
        changed = len(kept) != len(self.entries)
        self.entries = kept
        return changed
