"""A produced batch that expands near the decompression bound is validated on a worker thread (issue 17).

Before, a batch expanding to tens of MB (the bound is 64 x max.message.bytes) was decompressed on the event
loop: 0.1-0.3 s during which no other connection was served. Now the validation gives up on the loop once
the payload passes 1 MiB and runs again, whole, on a worker; ordinary batches stay on the loop. What is
checked: where the big one was expanded, that every verdict is the same as before (accepted, bomb refused
as CORRUPT_MESSAGE, compacted key rule), that the loop keeps running meanwhile, and that batches of the
same partition behind an offloaded one keep their order (an idempotent producer's next sequence is not
refused as out of order).
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from groupcoord.coordinator.dataplane import batch_validation
from groupcoord.coordinator.dataplane.batch_validation import INLINE_DECOMPRESSED_BYTES, NEEDS_WORKER, validate_batch
from groupcoord.protocol import record_batch
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch
from tests.coordinator.dataplane.test_produce import PID, SENT_AT, batch, produce, read_all

BIG = 40 * 1024 * 1024  # expands to 40 MiB: under the 64 MiB bound, far past the 1 MiB inline limit


def big_batch(compression: int, *, key: bytes | None = b"k", pid: int = -1, seq: int = -1) -> bytes:
    return encode_batch([(key, bytes(BIG), ())], compression=compression, producer_id=pid,
                        producer_epoch=0 if pid >= 0 else -1, base_sequence=seq, base_timestamp=SENT_AT)


@pytest.fixture
def expansions(monkeypatch):
    """(thread name, bytes) of every payload decompressed while validating."""
    seen: list[tuple[str, int]] = []
    # decode_records decompresses through record_batch; validate_batch sizes an undecoded payload itself
    for module, name in ((record_batch, "decompress"), (batch_validation, "decompressed_size")):
        real = getattr(module, name)

        def recording(codec, data, max_size=record_batch.DEFAULT_MAX_DECOMPRESSED, real=real):
            out = real(codec, data, max_size)
            seen.append((threading.current_thread().name, out if isinstance(out, int) else len(out)))
            return out

        monkeypatch.setattr(module, name, recording)
    return seen


@pytest.mark.parametrize("compression", [1, 3, 4])
def test_the_inline_limit_only_defers_and_never_changes_a_verdict(compression):
    for compacted in (False, True):
        for records in (big_batch(compression), batch(50, compression=compression, size=100),
                        big_batch(compression, key=None)):
            whole = validate_batch(records, api_version=9, max_message_bytes=1 << 20, compacted=compacted)
            first = validate_batch(records, api_version=9, max_message_bytes=1 << 20, compacted=compacted,
                                   inline_limit=INLINE_DECOMPRESSED_BYTES)
            assert first == whole or (first is NEEDS_WORKER and len(records) < BIG)
            if first is NEEDS_WORKER:
                assert whole is not NEEDS_WORKER
    bomb = encode_batch([(b"k", bytes(70 * 1024 * 1024), ())], compression=compression)
    assert validate_batch(bomb, api_version=9, max_message_bytes=1 << 20, compacted=False,
                          inline_limit=INLINE_DECOMPRESSED_BYTES) is NEEDS_WORKER
    refused = validate_batch(bomb, api_version=9, max_message_bytes=1 << 20, compacted=False)
    assert refused.error is ErrorCode.corrupt_message


@pytest.mark.parametrize("compression", [1, 4])
async def test_a_batch_expanding_near_the_bound_is_validated_off_the_loop(dataplane, expansions, compression):
    await dataplane.topics.create("orders", 1)
    main = threading.current_thread().name
    ticks = 0
    done = False

    async def ticker():
        nonlocal ticks
        while not done:
            ticks += 1
            await asyncio.sleep(0)

    counting = asyncio.ensure_future(ticker())
    big = await produce(dataplane, "orders", 0, big_batch(compression))
    done = True
    await counting
    small = await produce(dataplane, "orders", 0, batch(3, compression=compression))
    assert (big["error_code"], big["base_offset"]) == (ErrorCode.none, 0)
    assert (small["error_code"], small["base_offset"]) == (ErrorCode.none, 1)
    off_loop = [size for thread, size in expansions if thread != main]
    on_loop = [size for thread, size in expansions if thread == main]
    assert len(off_loop) == 1 and off_loop[0] >= BIG  # the big one was expanded on a worker thread, the small one on the loop
    assert all(size <= INLINE_DECOMPRESSED_BYTES for size in on_loop)
    assert ticks > 1  # the loop ran other callbacks while the big batch was being validated
    assert [len(r.value) for r in await read_all(dataplane, "orders")] == [BIG, 10, 10, 10]


async def test_a_bomb_is_still_refused_as_corrupt_message(dataplane):
    await dataplane.topics.create("orders", 1)
    bomb = encode_batch([(b"k", bytes(70 * 1024 * 1024), ())], compression=4)
    answer = await produce(dataplane, "orders", 0, bomb)
    assert answer["error_code"] is ErrorCode.corrupt_message
    assert (await produce(dataplane, "orders", 0, batch()))["base_offset"] == 0


async def test_batches_behind_an_offloaded_one_keep_their_order(dataplane):
    await dataplane.topics.create("orders", 1)
    first = asyncio.ensure_future(produce(dataplane, "orders", 0, big_batch(4, pid=PID, seq=0)))
    second = asyncio.ensure_future(produce(dataplane, "orders", 0, batch(3, pid=PID, epoch=0, seq=1)))
    a, b = await first, await second
    assert (a["error_code"], a["base_offset"]) == (ErrorCode.none, 0)
    assert (b["error_code"], b["base_offset"]) == (ErrorCode.none, 1)
    assert not dataplane.produce._offloaded  # no gate left behind
