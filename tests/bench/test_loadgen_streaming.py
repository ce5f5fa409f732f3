"""The load generator's streaming answer counter (used for Fetch, whose answers are megabytes): however the
bytes are cut into reads, every answer is counted once, its size is added to the bytes, and each answer
sends the next request."""

from __future__ import annotations

import asyncio
import struct

import pytest

from bench.loadgen import _StreamingLoadConnection


class _Transport:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.written.append(data)


def _answers(*sizes: int) -> bytes:
    return b"".join(struct.pack(">i", n) + bytes([n % 251]) * n for n in sizes)


@pytest.mark.parametrize("cut", [1, 3, 4, 5, 7, 1000, 1 << 20])
def test_answers_cut_anywhere_are_each_counted_once_with_their_bytes(cut):
    loop = asyncio.new_event_loop()
    try:
        done = loop.create_future()
        latencies: list[float] = []
        conn = _StreamingLoadConnection(b"REQ", 4, float("inf"), [10], latencies, done)
        transport = _Transport()
        conn.connection_made(transport)
        stream = _answers(10, 0, 70_000, 3)
        for i in range(0, len(stream), cut):
            conn.data_received(stream[i:i + cut])
    finally:
        loop.close()
    assert conn.answers == 4
    assert len(latencies) == 4
    assert conn.nbytes == 10 + 0 + 70_000 + 3
    assert b"".join(transport.written) == b"REQ" * (4 + 4)  # four in flight, then one per answer


def test_a_partial_answer_is_not_counted_until_its_last_byte():
    loop = asyncio.new_event_loop()
    try:
        conn = _StreamingLoadConnection(b"REQ", 1, float("inf"), [10], [], loop.create_future())
        conn.connection_made(_Transport())
        stream = _answers(100)
        conn.data_received(stream[:-1])
        assert conn.answers == 0
        conn.data_received(stream[-1:])
        assert conn.answers == 1
    finally:
        loop.close()
