"""Transaction end markers: the one control record Kafka writes at the end of a transaction.

A marker is a batch of its own with the control and transactional attribute bits set, the
transaction's producer id and epoch, and one record: key = int16 version 0 + int16 type (0 ABORT,
1 COMMIT), value = int16 version 0 + int32 coordinator epoch (Kafka's EndTransactionMarker).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from groupcoord.protocol.record_batch import encode_batch

CONTROL_RECORD_VERSION = 0
ABORT_TYPE = 0
COMMIT_TYPE = 1
_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    committed: bool
    coordinator_epoch: int


def encode_end_txn_marker(producer_id: int, producer_epoch: int, coordinator_epoch: int, committed: bool,
                          timestamp: int) -> bytes:
    """The whole control batch (base offset 0: the log stamps the real one)."""
    key = _KEY.pack(CONTROL_RECORD_VERSION, COMMIT_TYPE if committed else ABORT_TYPE)
    value = _VALUE.pack(CONTROL_RECORD_VERSION, coordinator_epoch)
    return encode_batch([(key, value, ())], base_timestamp=timestamp, producer_id=producer_id,
                        producer_epoch=producer_epoch, is_transactional=True, is_control=True)


def decode_end_txn_marker(key: bytes | None, value: bytes | None) -> EndTxnMarker | None:
    """The marker a control record holds, or None for a control record of another type (or too short)."""
    if key is None or len(key) < _KEY.size:
        return None
    _version, control_type = _KEY.unpack_from(key)
    if control_type not in (ABORT_TYPE, COMMIT_TYPE):
        return None
    epoch = _VALUE.unpack_from(value)[1] if value is not None and len(value) >= _VALUE.size else -1
    return EndTxnMarker(control_type == COMMIT_TYPE, epoch)
