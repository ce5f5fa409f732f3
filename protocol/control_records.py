"""Control records: the transaction markers (EndTransactionMarker) that end a transaction in a partition.

A marker is a batch of its own with the transactional and control attribute bits set and the producer id
and epoch of the transaction it ends. Its single record has the key ``int16 version (0), int16 type``
(0 = ABORT, 1 = COMMIT; Kafka's ControlRecordType) and the value ``int16 version (0), int32 coordinator
epoch``. Consumers never see control records; a read_committed consumer uses an ABORT marker to stop
skipping the aborted producer's batches. This module is the one place that lays them out and reads them.
"""
from __future__ import annotations

import enum
import struct
from typing import Final

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.record_batch import BatchHeader, Buffer, decode_records, encode_batch

CONTROL_KEY_VERSION: Final = 0
END_TXN_MARKER_VERSION: Final = 0
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


class ControlRecordType(enum.IntEnum):
    """Kafka's ControlRecordType; 2-6 are KRaft's own and never appear in a data partition here."""
    ABORT = 0
    COMMIT = 1
    UNKNOWN = -1


@frozen_dataclass
class EndTxnMarker:
    """What an end-transaction marker says: commit or abort, and the coordinator epoch that wrote it."""
    control_type: ControlRecordType
    coordinator_epoch: int

    @property
    def committed(self) -> bool:
        return self.control_type is ControlRecordType.COMMIT


def end_txn_marker_batch(producer_id: int, producer_epoch: int, coordinator_epoch: int, committed: bool,
                         timestamp_ms: int) -> bytes:
    """One control batch as Kafka's MemoryRecords.withEndTransactionMarker builds it: base offset 0 (the log
    assigns it), no partition leader epoch (stamped on append), no sequence, one record."""
    control_type = ControlRecordType.COMMIT if committed else ControlRecordType.ABORT
    key = _KEY.pack(CONTROL_KEY_VERSION, control_type)
    value = _VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)
    return encode_batch([(key, value, ())], base_timestamp=timestamp_ms, producer_id=producer_id,
                        producer_epoch=producer_epoch, base_sequence=-1, is_transactional=True, is_control=True)


def control_type_of(key: bytes | None) -> ControlRecordType:
    """The type a control record's key names (Kafka's ControlRecordType.parse); UNKNOWN for anything else."""
    if key is None or len(key) < _KEY.size:
        return ControlRecordType.UNKNOWN
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        return ControlRecordType.UNKNOWN
    try:
        return ControlRecordType(kind)
    except ValueError:
        return ControlRecordType.UNKNOWN


def read_end_txn_marker(buf: Buffer, pos: int = 0, header: BatchHeader | None = None) -> EndTxnMarker | None:
    """The marker a control batch carries; None for an empty control batch (its transaction was cleaned
    away) or a control record that is not an end-transaction marker."""
    records = decode_records(buf, pos, header)
    if not records:
        return None
    record = records[0]
    control_type = control_type_of(record.key)
    if control_type is ControlRecordType.UNKNOWN:
        return None
    if record.value is None or len(record.value) < _VALUE.size:
        return None
    version, coordinator_epoch = _VALUE.unpack_from(record.value)
    if version < 0:
        return None
    return EndTxnMarker(control_type, coordinator_epoch)
