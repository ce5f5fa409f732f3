"""`groupcoord transactions list|describe`: kafka-transactions.sh's list and describe, over the wire.

DescribeTransactions is read by hand here: Kafka (and groupcoord) answer the start time of a transaction
with none running as -1, which kio's timestamp reader refuses.
"""

from __future__ import annotations

import asyncio
import struct

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.protocol.varint import decode_unsigned_varint

from .client import AdminClient, check_error

KEY_TYPE_TRANSACTION = 1
_RETRY = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


@frozen_dataclass(slots=False)
class TransactionListing:
    transactional_id: str
    coordinator: int
    producer_id: int
    state: str


@frozen_dataclass(slots=False)
class TransactionDescription:
    coordinator: int
    transactional_id: str
    producer_id: int
    producer_epoch: int
    state: str
    timeout_ms: int
    start_time_ms: int | None  # None: no transaction running
    partitions: tuple[tuple[str, int], ...]


async def list_transactions(client: AdminClient, duration_ms: int | None = None, states: tuple[str, ...] = (),
                            producer_ids: tuple[int, ...] = ()) -> list[TransactionListing]:
    """Every broker's transactions (Kafka's allByBrokerId), sorted by transactional id."""
    cluster = await client.metadata([])
    found = []
    for node in sorted(cluster.brokers) or [None]:
        body = {"state_filters": list(states), "producer_id_filters": list(producer_ids),
                "duration_filter": -1 if duration_ms is None else duration_ms}
        _, response = await client.request(ApiKey.LIST_TRANSACTIONS, body, node=node)
        check_error(response.error_code, "ListTransactions")
        found.extend(TransactionListing(s.transactional_id, node if node is not None else -1, int(s.producer_id),
                                        s.transaction_state) for s in response.transaction_states)
    return sorted(found, key=lambda t: t.transactional_id)


async def find_transaction_coordinator(client: AdminClient, transactional_id: str) -> int:
    deadline = asyncio.get_running_loop().time() + client.timeout
    while True:
        _, response = await client.request(ApiKey.FIND_COORDINATOR, {
            "key": transactional_id, "key_type": KEY_TYPE_TRANSACTION,
            "coordinator_keys": [transactional_id]}, cap=3)
        code = int(response.error_code)
        if code == 0:
            return int(response.node_id)
        if code not in _RETRY or asyncio.get_running_loop().time() > deadline:
            check_error(code, f"FindCoordinator for transactional id {transactional_id!r}",
                        getattr(response, "error_message", None))
        await asyncio.sleep(0.1)


async def describe_transaction(client: AdminClient, transactional_id: str) -> TransactionDescription:
    node = await find_transaction_coordinator(client, transactional_id)
    conn = await client.connection(await client.broker_address(node))
    version = conn.version_for(ApiKey.DESCRIBE_TRANSACTIONS)
    frame = await conn._exchange(ApiKey.DESCRIBE_TRANSACTIONS, version, {"transactional_ids": [transactional_id]})
    (state,) = read_describe_transactions(frame)
    check_error(state["error_code"], f"DescribeTransactions of {transactional_id!r}")
    start = state["start_time"]
    return TransactionDescription(node, transactional_id, state["producer_id"], state["producer_epoch"],
                                  state["state"], state["timeout_ms"], start if start >= 0 else None,
                                  tuple((t, p) for t, ps in state["topics"] for p in ps))


def read_describe_transactions(frame: bytes) -> list[dict]:
    """DescribeTransactions v0 (flexible; response header v1): correlation id and tags, throttle time,
    then each transaction's error, id, state, timeout, start time, producer id and epoch, and topics."""
    pos = _skip_tags(frame, 4) + 4
    count, pos = decode_unsigned_varint(frame, pos)
    states = []
    for _ in range(max(count - 1, 0)):
        (error,) = struct.unpack_from(">h", frame, pos)
        transactional_id, pos = _string(frame, pos + 2)
        state, pos = _string(frame, pos)
        timeout, start, producer_id, epoch = struct.unpack_from(">iqqh", frame, pos)
        pos += 22
        topics = []
        n_topics, pos = decode_unsigned_varint(frame, pos)
        for _ in range(max(n_topics - 1, 0)):
            topic, pos = _string(frame, pos)
            n_parts, pos = decode_unsigned_varint(frame, pos)
            parts = list(struct.unpack_from(f">{max(n_parts - 1, 0)}i", frame, pos))
            pos = _skip_tags(frame, pos + 4 * len(parts))
            topics.append((topic, parts))
        pos = _skip_tags(frame, pos)
        states.append({"error_code": error, "transactional_id": transactional_id, "state": state,
                       "timeout_ms": timeout, "start_time": start, "producer_id": producer_id,
                       "producer_epoch": epoch, "topics": topics})
    return states


def _string(buf: bytes, pos: int) -> tuple[str, int]:
    n, pos = decode_unsigned_varint(buf, pos)
    return bytes(buf[pos:pos + n - 1]).decode(), pos + n - 1


def _skip_tags(buf: bytes, pos: int) -> int:
    count, pos = decode_unsigned_varint(buf, pos)
    for _ in range(count):
        _tag, pos = decode_unsigned_varint(buf, pos)
        size, pos = decode_unsigned_varint(buf, pos)
        pos += size
    return pos
