"""Kafka's own DumpLogSegments reads the segments groupcoord writes: the batches, their CRCs, the
``__consumer_offsets`` keys and values (through Kafka's offsets decoder), and the offset/time indexes.

The data is made by stock clients against an embedded broker, so the test covers what users' brokers
actually hold, not hand-built bytes.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.groups.hashing import partition_for
from tests.reference.kafka_tools import dump_log_segments

pytestmark = pytest.mark.reference

TOPIC = "interop"
GROUP = "interop-group"
COMMIT_ROUNDS = 120  # enough commits to pass index.interval.bytes (4096) several times
RECORDS = 2000


def value(i: int) -> str:
    """Hex digests: lz4 cannot squeeze them much, so the data segments pass index.interval.bytes too."""
    return hashlib.sha256(str(i).encode()).hexdigest() * 2


def first_segment(data_dir: Path, partition_dir: str) -> Path:
    return data_dir / partition_dir / f"{0:020d}.log"


def make_log(data_dir: Path) -> None:
    """A consumer group forms, commits round after round, and leaves; a producer writes lz4 batches."""
    with run_in_thread(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, group_initial_rebalance_delay_ms=0,
                       fsync="never") as broker:
        bootstrap = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until its future completes
        admin.create_topics([NewTopic(TOPIC, 3, 1)])[TOPIC].result(30)
        producer = Producer({"bootstrap.servers": bootstrap, "compression.type": "lz4", "linger.ms": 5,
                             "batch.num.messages": 50})
        for i in range(RECORDS):
            producer.produce(TOPIC, key=f"k{i}".encode(), value=value(i).encode(), partition=i % 3)
        assert producer.flush(30) == 0
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "enable.auto.commit": False,
                             "auto.offset.reset": "earliest"})
        consumer.subscribe([TOPIC])
        deadline = time.monotonic() + 30
        while len(consumer.assignment()) < 3 and time.monotonic() < deadline:
            consumer.poll(0.1)
        assert len(consumer.assignment()) == 3, "the consumer never got its assignment"
        for round_ in range(1, COMMIT_ROUNDS + 1):
            consumer.commit(offsets=[TopicPartition(TOPIC, p, round_ * 10 + p) for p in range(3)], asynchronous=False)
        consumer.close()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("groupcoord-data")
    make_log(data_dir)
    return data_dir


def test_kafka_decodes_our_consumer_offsets_records(written, kafka_tools):
    segment = first_segment(written, f"__consumer_offsets-{partition_for(GROUP, 50)}")
    dump = dump_log_segments(kafka_tools, [segment], "--offsets-decoder", "--deep-iteration")

    assert dump.batches and all(b.is_valid and b.header["magic"] == "2" for b in dump.batches), dump.output[-2000:]
    latest: dict[int, int] = {}
    groups = []
    for record in dump.records:
        key, payload = record["key"], record["payload"]
        if key["type"] == "1":
            assert key["data"]["group"] == GROUP and key["data"]["topic"] == TOPIC
            latest[key["data"]["partition"]] = payload["data"]["offset"]
        elif key["type"] == "2":
            groups.append(payload)
    assert latest == {p: COMMIT_ROUNDS * 10 + p for p in range(3)}

    formed, left = groups[0], groups[-1]
    assert formed["version"] == "3" and formed["data"]["protocolType"] == "consumer"
    (member,) = formed["data"]["members"]
    assert member["subscription"]["topics"] == [TOPIC]
    assert member["assignment"]["assignedPartitions"] == [{"topic": TOPIC, "partitions": [0, 1, 2]}]
    assert left["data"]["members"] == [] and left["data"]["generation"] == formed["data"]["generation"] + 1


def test_kafka_finds_our_indexes_consistent(written, kafka_tools):
    offsets_dir = written / f"__consumer_offsets-{partition_for(GROUP, 50)}"
    for directory in (offsets_dir, written / f"{TOPIC}-0"):
        index, time_index = directory / f"{0:020d}.index", directory / f"{0:020d}.timeindex"
        assert index.stat().st_size >= 16, f"{index} should hold several entries"
        sanity = dump_log_segments(kafka_tools, [index, time_index], "--index-sanity-check")
        assert sanity.output.count("passed sanity check") == 2, sanity.output
        verified = dump_log_segments(kafka_tools, [index, time_index], "--verify-index-only")
        assert "mismatch" not in verified.output.lower(), verified.output[-2000:]


def test_kafka_reads_our_data_segments(written, kafka_tools):
    dump = dump_log_segments(kafka_tools, [first_segment(written, f"{TOPIC}-1")], "--deep-iteration", "--print-data-log")

    assert all(b.is_valid and b.header["compresscodec"] == "lz4" for b in dump.batches)
    values = [record["payload"] for record in dump.records]
    assert values == [value(i) for i in range(1, RECORDS, 3)]
    assert [int(record["offset"]) for record in dump.records] == list(range(len(values)))


def test_kafka_flags_a_corrupted_copy(written, kafka_tools, tmp_path):
    """The negative control: the same tool does notice a flipped byte, so its 'valid' above means something."""
    segment = first_segment(written, f"__consumer_offsets-{partition_for(GROUP, 50)}")
    copy = tmp_path / segment.name
    shutil.copy(segment, copy)
    data = bytearray(copy.read_bytes())
    data[100] ^= 0xFF  # inside the first batch's records, covered by its CRC
    copy.write_bytes(bytes(data))

    dump = dump_log_segments(kafka_tools, [copy])
    assert dump.batches[0].header["isvalid"] == "false"
