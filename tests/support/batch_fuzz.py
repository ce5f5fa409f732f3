"""Record batches for fuzzing Produce: real v2 batches in every codec, then lies told past the CRC.

A random ``records`` field is refused at the CRC and never reaches a decompressor. These batches are
well-formed and, when mutated, have their CRC made true again, so the broker's validation and the
decompressors themselves see the lie: a corrupt compressed payload, a record count that does not
match, a decompression bomb, a raw snappy payload declaring gigabytes.
"""

from __future__ import annotations

import functools
import random
import struct

from groupcoord.protocol.compression import DEFAULT_MAX_DECOMPRESSED, CompressionType, compress
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.record_batch import (ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER_SIZE, LOG_OVERHEAD,
                                              encode_batch)
from groupcoord.protocol.varint import encode_unsigned_varint as _uvarint

RECORDS_COUNT_OFFSET = HEADER_SIZE - 4
_COUNTS = (0, -1, 0x7FFFFFFF, 1 << 24, 1000)


@functools.lru_cache(maxsize=None)
def bomb(codec: CompressionType) -> bytes:
    """A payload that expands past the broker's default bound (computed once; zstd's is ~2 KiB)."""
    if codec is CompressionType.SNAPPY:
        return _uvarint(0xFFFFFFFF) + bytes(64)  # snappy cannot expand far, but it can lie
    return compress(codec, bytes(DEFAULT_MAX_DECOMPRESSED + 4096))


def seal(batch: bytearray) -> bytes:
    """Make the length and CRC of a mutated batch true again."""
    struct.pack_into(">i", batch, 8, len(batch) - LOG_OVERHEAD)
    struct.pack_into(">I", batch, CRC_OFFSET, crc32c(batch[ATTRIBUTES_OFFSET:]))
    return bytes(batch)


def record_batch(rng: random.Random, bombs: bool = True) -> bytes:
    codec = CompressionType(rng.randrange(len(CompressionType)))
    records = [(rng.choice((None, b"k", b"key-1")), bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 24))), ())
               for _ in range(rng.randint(1, 4))]
    producer_id = rng.choice((-1, -1, 0, 7))
    batch = bytearray(encode_batch(records, compression=codec, producer_id=producer_id,
                                   producer_epoch=0 if producer_id >= 0 else -1,
                                   base_sequence=rng.choice((0, 5)) if producer_id >= 0 else -1))
    kind = rng.randrange(8)
    if kind == 0:
        return bytes(batch)                      # as a client sends it
    if kind in (1, 2) and len(batch) > HEADER_SIZE:
        for _ in range(rng.randint(1, 4)):       # a corrupt (compressed) payload past a true CRC
            batch[rng.randrange(HEADER_SIZE, len(batch))] ^= 1 << rng.randrange(8)
        return seal(batch)
    if kind == 3:
        struct.pack_into(">i", batch, RECORDS_COUNT_OFFSET, rng.choice(_COUNTS))
        return seal(batch)
    if kind == 4 and bombs and codec is not CompressionType.NONE:
        return seal(batch[:HEADER_SIZE] + bomb(codec))
    if kind == 5:
        del batch[rng.randrange(HEADER_SIZE, len(batch) + 1):]  # cut inside the records
        return seal(batch)
    if kind == 6:
        struct.pack_into(">i", batch, 8, rng.choice((0, -1, 0x7FFFFFFF, len(batch))))  # batchLength lies
        return bytes(batch)
    return bytes(batch[: rng.randrange(len(batch))])  # cut anywhere, CRC and all
