"""Produce read by its hand-written reader reaches the handler as kio's reading of it would, and a broker answers
Produce byte for byte the same with its fast codec as without it.

Requests: kio writes a generated ProduceRequest of every served version; ``FAST.read`` must give the same client
id, transactional id, acks and ``TopicData`` as kio's reader followed by the handler's own conversion
(``topics_of``). Answers: two embedded brokers, one with the fast codecs (the default) and one with every request
through kio's reader and the schema encoder, are sent the same Produce requests over the connection code itself
(appends, retries, refusals) and must send the same bytes back.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.hotpath_bench import connect, roundtrip
from bench.requests import encode
from groupcoord.coordinator.apis.produce import topics_of
from groupcoord.coordinator.apis.produce_codec import FAST
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.dataplane.produce import PartitionData, TopicData
from groupcoord.protocol.fast_produce import ProduceRequestView
from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.protocol.registry import response_reader
from tests.coordinator.server.test_fast_codecs_vs_general_path import start  # a broker with or without fast codecs
from tests.protocol.test_fast_codecs import kio_read, request_frame
from tests.support.full_run import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
text = st.one_of(st.text(max_size=12), st.text(min_size=120, max_size=300))
# Records of every length class of a compact length: one varint byte, two, three. The long ones repeat a short
# pattern to a drawn length (16,384 bytes and more need a third byte), so that an example does not draw its every
# byte: hypothesis refuses examples of that much entropy (its data_too_large health check).
long_records = st.tuples(st.binary(min_size=1, max_size=16), st.integers(16_384, 140_000)).map(
    lambda drawn: (drawn[0] * (drawn[1] // len(drawn[0]) + 1))[:drawn[1]])
records = st.one_of(st.none(), st.binary(max_size=200), long_records)
partitions = st.lists(st.fixed_dictionaries({"index": int32, "records": records}), max_size=4)
topics = st.lists(st.fixed_dictionaries({"name": text, "partition_data": partitions}), max_size=4)


@pytest.mark.parametrize("version", FAST.versions)
@SETTINGS
@given(transactional_id=st.one_of(st.none(), text), acks=int16, timeout=int32, topics=topics,
       client_id=st.one_of(st.none(), st.text(max_size=20)))
def test_produce_request_reads_as_kio_reads_it_and_the_handler_converts_it(version, transactional_id, acks, timeout,
                                                                            topics, client_id):
    frame = request_frame(0, version, {"transactional_id": transactional_id, "acks": acks, "timeout": timeout,
                                       "topic_data": topics}, client_id)
    kio_client, kio_request = kio_read(frame, 0, version)
    read = FAST.read(frame, version)
    assert read is not None
    client, request = read
    assert type(request) is ProduceRequestView
    assert client == kio_client
    assert request.transactional_id == kio_request.transactional_id
    assert request.acks == int(kio_request.acks)
    expected = topics_of(kio_request)
    assert request.topics == expected
    for topic in request.topics:
        assert type(topic) is TopicData
        for partition in topic.partitions:
            assert type(partition) is PartitionData
            assert partition.records is None or type(partition.records) is bytes


# --------------------------------------------------------------------------- through a connection

TOPIC = "orders"
INTERNAL = "__consumer_offsets"


def produce_body(acks: int, topic_data: list, transactional_id: str | None = None) -> dict:
    return {"transactional_id": transactional_id, "acks": acks, "timeout": 30000, "topic_data": topic_data}


def batch(producer_id: int = -1, epoch: int = -1, sequence: int = -1, count: int = 3, transactional: bool = False,
          corrupt: bool = False) -> bytes:
    data = bytearray(encode_batch([(b"k%d" % i, b"v" * 10, ()) for i in range(count)], base_timestamp=1_700_000_000_000,
                                  producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                                  is_transactional=transactional))
    if corrupt:
        data[-1] ^= 0xFF
    return bytes(data)


async def produce_scenario(broker: Broker) -> list[bytes]:
    """Every Produce answer of the scenario, in order: in every served version, plain and idempotent appends
    over two topics, a retry of an appended batch (its duplicate's answer), a sequence gap, a partition the topic
    does not have, a corrupt batch, null records, an internal topic, transactional records without a
    transactional id and acks the broker refuses."""
    conn, transport = connect(broker)
    corr = itertools.count(100)
    await roundtrip(conn, transport, encode(19, 7, {
        "topics": [{"name": name, "num_partitions": 3, "replication_factor": 1, "assignments": [], "configs": []}
                   for name in (TOPIC, "audit")], "timeout": 10000, "validate_only": False}, next(corr)))
    answer = await roundtrip(conn, transport, encode(22, 5, {
        "transactional_id": None, "transaction_timeout": -1, "producer_id": -1, "producer_epoch": -1}, next(corr)))
    _, at = parse_response_header(answer[4:], 22, True)
    init = response_reader(22, 5)(answer[4:], at)[0]
    pid, epoch = int(init.producer_id), int(init.producer_epoch)
    answers: list[bytes] = []
    sequences = dict.fromkeys(range(3), 0)

    async def send(version: int, body: dict) -> None:
        answers.append(await roundtrip(conn, transport, encode(0, version, body, next(corr))))

    for version in FAST.versions:
        idempotent = [{"index": p, "records": batch(pid, epoch, sequences[p])} for p in range(3)]
        await send(version, produce_body(-1, [{"name": TOPIC, "partition_data": idempotent},
                                              {"name": "audit", "partition_data": [{"index": 1, "records": batch()}]}]))
        await send(version, produce_body(1, [{"name": TOPIC, "partition_data": idempotent[:1]}]))  # a retry
        for p in range(3):
            sequences[p] += 3
        await send(version, produce_body(-1, [{"name": TOPIC, "partition_data": [
            {"index": 1, "records": batch(pid, epoch, sequences[1] + 5)},  # a gap: out of order
            {"index": 7, "records": batch()},
            {"index": 2, "records": batch(corrupt=True)},
            {"index": 0, "records": None}]}]))
        await send(version, produce_body(1, [{"name": INTERNAL, "partition_data": [{"index": 0, "records": batch()}]},
                                             {"name": "audit", "partition_data": [
                                                 {"index": 0, "records": batch(pid, epoch, 0, transactional=True)}]}]))
        await send(version, produce_body(3, [{"name": TOPIC, "partition_data": [{"index": 0, "records": batch()}]}]))
    return answers


@pytest.mark.asyncio
async def test_a_broker_answers_produce_exactly_as_without_its_fast_codec():
    fast, general = await start(True), await start(False)
    assert fast.dispatcher._fast and not general.dispatcher._fast  # the two paths really are different
    assert any(codec is FAST for _, codec, _ in fast.dispatcher._fast.values())
    try:
        with_fast = await produce_scenario(fast)
        without = await produce_scenario(general)
    finally:
        await fast.stop()
        await general.stop()
    assert len(with_fast) == len(without) == 5 * len(FAST.versions)
    for i, (a, b) in enumerate(zip(with_fast, without)):
        assert a == b, f"answer {i} differs"
    # the scenario's answers are the ones it means (those of the last version): the appends, the retry answered
    # with its original's offset, then each refusal
    last = [[(int(p.error_code), int(p.base_offset)) for t in read_answer(answer, 11).responses
             for p in t.partition_responses] for answer in with_fast[-5:]]
    appended = last[0][0][1]
    assert appended > 0 and last[0] == [(0, appended)] * 4 and last[1] == [(0, appended)]
    assert [[error for error, _ in answer] for answer in last[2:]] == [[45, 3, 2, 87], [17, 53], [21]]


def read_answer(frame: bytes, version: int):
    body = frame[4:]
    _, at = parse_response_header(body, 0, version >= 9)
    return response_reader(0, version)(body, at)[0]
