"""What a produced partition payload must satisfy before it reaches the log, in Kafka's order:
the request-level rules (ProduceRequest.validateRecords: exactly one v2 batch, zstd only from v7),
then the log's (size against max.message.bytes, CRC, offset/count consistency, producer fields,
no client-written control batches, keys on compacted topics, CreateTime timestamps within the topic's
window).

Records are decoded only when a rule needs them: keys on compacted topics, timestamps when the topic
bounds them. A compressed batch is always decompressed once, as Kafka's LogValidator does, but into a
bounded buffer: one that expands past ``decompressed_limit(max.message.bytes)`` (a decompression bomb, or
a header that lies about its size) is refused as CORRUPT_MESSAGE before it can reach the log, where every
later reader (ListOffsets, the cleaner, timestamp lookups) would expand it again.

Expanding a payload near that bound (64 MiB) takes the thread 0.1-0.3 s. Called with ``inline_limit``, the
validation gives up with ``NEEDS_WORKER`` as soon as the payload expands past it (1 MiB: a few ms of work,
what ordinary batches stay under), so the caller can run it again, whole, on a worker thread and keep the
event loop serving everyone else meanwhile; the verdict is the same either way.
"""
from __future__ import annotations

import enum

from groupcoord.protocol.compression import (CompressionError, CompressionType, DecompressedTooLarge,
                                              decompressed_limit, decompressed_size)
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.storage.config import LONG_MAX
from groupcoord.protocol.record_batch import (ATTRIBUTES_OFFSET, COMPRESSION_MASK, CONTROL_BIT, HEADER_SIZE,
                                              LOG_OVERHEAD, MAGIC_OFFSET, TIMESTAMP_TYPE_BIT, TRANSACTIONAL_BIT,
                                              BatchHeader, CorruptBatchError, decode_records, parse_header)

ZSTD = 4
MIN_ZSTD_PRODUCE_VERSION = 7

_UNCOMPRESSED = int(CompressionType.NONE)  # (a global: no EnumType look-up per batch)

INLINE_DECOMPRESSED_BYTES = 1024 * 1024
"""What a produce payload may expand to on the event loop; past it the validation is done on a worker."""


class _Offload(enum.Enum):
    NEEDS_WORKER = "the payload expands past the inline limit: validate it again on a worker thread"


NEEDS_WORKER = _Offload.NEEDS_WORKER


@frozen_dataclass
class BatchRejected:
    """Why a produced batch is refused: the partition's error code and message."""
    error: ErrorCode
    message: str


@frozen_dataclass
class TimestampWindow:
    """CreateTime records must lie within [now - before_ms, now + after_ms]
    (message.timestamp.before.max.ms / message.timestamp.after.max.ms)."""
    now_ms: int
    before_ms: int
    after_ms: int

    def holds_declared(self, header: BatchHeader) -> bool:
        """Whether the batch's declared maximum timestamp is within the window and the window has no lower bound
        (Kafka 4's default: message.timestamp.before.max.ms unbounded, after.max.ms an hour): then no record is
        decoded to check it. Why: the default window applies to every produced batch, and decoding each record to
        read its timestamp would cost the Produce path more than the rest of validation. Kafka checks each record's
        own timestamp; a batch whose records lie past the maximum its own header declares (no client writes one)
        is accepted here where Kafka would refuse it. A lower bound, or a maximum outside the window, is checked
        record by record as Kafka does (the refusal names the first record outside it)."""
        return self.before_ms >= LONG_MAX and header.max_timestamp <= self.now_ms + self.after_ms

    def refusal(self, timestamp: int, offset: int) -> BatchRejected | None:
        low, high = self.now_ms - self.before_ms, self.now_ms + self.after_ms
        if low <= timestamp <= high:
            return None
        return BatchRejected(ErrorCode.invalid_timestamp,
                             f"Timestamp {timestamp} of message with offset {offset} is out of range. The "
                             f"timestamp should be within [{low}, {high}]")


@frozen_dataclass
class ValidBatch:
    """A produced batch that passed validation: its parsed header and exactly its bytes."""
    header: BatchHeader
    data: bytes                 # exactly the one batch (a trailing partial header, as Kafka ignores, is cut)


def validate_batch(records: bytes | None, *, api_version: int, max_message_bytes: int, compacted: bool,
                   timestamps: TimestampWindow | None = None,
                   inline_limit: int | None = None) -> ValidBatch | BatchRejected | _Offload:
    """``timestamps``: the window CreateTime records must fall in, or None when the topic sets none.
    ``inline_limit``: give up with NEEDS_WORKER when the payload expands past it (see the module's doc)."""
    if records is None or len(records) < LOG_OVERHEAD:
        return BatchRejected(ErrorCode.invalid_record,
                             f"Produce requests with version {api_version} must have at least one record batch "
                             "per partition")
    if len(records) <= MAGIC_OFFSET:
        return BatchRejected(ErrorCode.corrupt_message, "Record batch is truncated")
    magic = records[MAGIC_OFFSET]
    if magic != 2:
        return BatchRejected(ErrorCode.invalid_record,
                             f"Produce requests with version {api_version} are only allowed to contain record "
                             "batches with magic version 2")
    try:
        header = parse_header(records, 0)
    except CorruptBatchError as exc:
        return BatchRejected(ErrorCode.corrupt_message, str(exc))
    # (the header's fields read once, into locals: each property of BatchHeader is a Python call)
    end = header.batch_length + LOG_OVERHEAD
    attributes = header.attributes
    codec = attributes & COMPRESSION_MASK
    if end > len(records):
        return BatchRejected(ErrorCode.corrupt_message,
                             f"Record batch of {end} bytes is cut short at {len(records)} bytes")
    if len(records) - end >= LOG_OVERHEAD:
        return BatchRejected(ErrorCode.invalid_record,
                             f"Produce requests with version {api_version} are only allowed to contain exactly "
                             "one record batch per partition")
    if codec == ZSTD and api_version < MIN_ZSTD_PRODUCE_VERSION:
        return BatchRejected(ErrorCode.unsupported_compression_type,
                             f"Produce requests with version {api_version} are not allowed to use ZStandard "
                             "compression")
    if end > max_message_bytes:
        return BatchRejected(ErrorCode.message_too_large,
                             f"The request included a message larger than the max message size the server will "
                             f"accept: {end} > {max_message_bytes}")
    data = records[:end] if end != len(records) else records
    # The CRC-32C of attributes..end against the stored one: record_batch.verify_crc's comparison, whose length
    # checks parse_header and the cut-short check above have made.
    if header.crc != crc32c(memoryview(data)[ATTRIBUTES_OFFSET:end]):
        return BatchRejected(ErrorCode.corrupt_message,
                             f"Record batch is corrupt (stored crc = {header.crc})")
    rejected = _check_header(header, attributes)
    if rejected is not None:
        return rejected
    if timestamps is not None and (attributes & TIMESTAMP_TYPE_BIT or timestamps.holds_declared(header)):
        timestamps = None                       # LogAppendTime batches are stamped by the broker
    bound = decompressed_limit(max_message_bytes)
    offload = inline_limit is not None and inline_limit < bound and codec != _UNCOMPRESSED
    if offload:
        bound = inline_limit  # type: ignore[assignment]
    if compacted or timestamps is not None:
        try:
            decoded = decode_records(data, 0, header, bound)
        except (CorruptBatchError, ValueError) as exc:
            if offload and isinstance(exc.__cause__, DecompressedTooLarge):
                return NEEDS_WORKER
            return BatchRejected(ErrorCode.corrupt_message, str(exc))
        if compacted and any(record.key is None for record in decoded):
            return BatchRejected(ErrorCode.invalid_record, "Compacted topic cannot accept message without key")
        if timestamps is not None:
            for record in decoded:
                refusal = timestamps.refusal(record.timestamp, record.offset)
                if refusal is not None:
                    return refusal
    elif codec != _UNCOMPRESSED:
        # The payload must decode within the bound; only its size is kept (the decoded bytes are not needed).
        try:
            decompressed_size(codec, memoryview(data)[HEADER_SIZE:end], bound)
        except CompressionError as exc:
            if offload and isinstance(exc, DecompressedTooLarge):
                return NEEDS_WORKER
            return BatchRejected(ErrorCode.corrupt_message, str(CorruptBatchError(str(exc), 0)))
    return ValidBatch(header, bytes(data))


def _check_header(header: BatchHeader, attributes: int) -> BatchRejected | None:
    if attributes & CONTROL_BIT:
        return BatchRejected(ErrorCode.invalid_record, "Clients are not allowed to write control records")
    if attributes & TRANSACTIONAL_BIT and header.producer_id < 0:
        return BatchRejected(ErrorCode.invalid_record, "Transactional batch without a producer id")
    if header.records_count <= 0:
        return BatchRejected(ErrorCode.invalid_record, "Invalid reported count for record batch")
    if header.last_offset_delta < 0:
        return BatchRejected(ErrorCode.invalid_record, "Batch has an invalid offset range")
    if header.last_offset_delta + 1 != header.records_count:
        return BatchRejected(ErrorCode.invalid_record, "Inconsistent batch offset range and record count")
    if header.producer_id >= 0 and header.base_sequence < 0:
        return BatchRejected(ErrorCode.invalid_record, "Invalid sequence number")
    if header.batch_length + LOG_OVERHEAD < HEADER_SIZE:
        return BatchRejected(ErrorCode.corrupt_message, "Record batch is smaller than its header")
    return None
