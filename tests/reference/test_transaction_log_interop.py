"""``__transaction_state`` both ways: Kafka's DumpLogSegments (``--transaction-log-decoder``) reads the
segments groupcoord writes, and groupcoord loads the ``__transaction_state`` partitions a Kafka 4.3.1 broker
wrote (value v1, flexible, as Kafka writes it with transaction.version 2) and serves what Kafka served.

The transactions are made by a stock client (confluent-kafka's transactional producer, with
send_offsets_to_transaction), so the files are what users' brokers hold.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.transactions.records import decode_value
from groupcoord.protocol.record_batch import decode_records, iter_batches
from tests.reference.kafka_broker import SHARED_BROKER
from tests.reference.kafka_tools import dump_log_segments

pytestmark = pytest.mark.reference

PARTITIONS = 50  # transaction.state.log.num.partitions and offsets.topic.num.partitions, ours and the reference's
TOPIC = "txn-interop"
GROUP = "txn-interop-group"


def transactional_story(bootstrap: str, committed_id: str, open_id: str, topic: str, group: str) -> None:
    """One transaction committed with its consumer offsets, one aborted, and one left open."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(30)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": committed_id})
    producer.init_transactions(30)
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, value=f"kept-{i}".encode(), partition=i % 2)
    producer.send_offsets_to_transaction([TopicPartition(topic, 0, 7)], consumer.consumer_group_metadata(), 30)
    producer.commit_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, value=b"dropped", partition=0)
    assert producer.flush(30) == 0  # librdkafka purges unsent records on abort: make the broker see them
    producer.abort_transaction(30)
    left_open = Producer({"bootstrap.servers": bootstrap, "transactional.id": open_id,
                          "transaction.timeout.ms": 900000})
    left_open.init_transactions(30)
    left_open.begin_transaction()
    left_open.produce(topic, value=b"pending", partition=1)
    assert left_open.flush(30) == 0
    consumer.close()


def segment(data_dir: Path, topic: str, key: str) -> Path:
    return data_dir / f"{topic}-{partition_for(key, PARTITIONS)}" / f"{0:020d}.log"


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("groupcoord-txn-data")
    with run_in_thread(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never") as broker:
        transactional_story(broker.bootstrap_servers, "interop-committed", "interop-open", TOPIC, GROUP)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(
                m.state.is_prepare for m in broker.transactions.iter_transactions()):
            time.sleep(0.05)
    return data_dir


def test_kafka_decodes_our_transaction_state_records(written, kafka_tools):
    dump = dump_log_segments(kafka_tools, [segment(written, "__transaction_state", "interop-committed")],
                             "--transaction-log-decoder", "--deep-iteration")
    assert dump.batches and all(b.is_valid for b in dump.batches), dump.output[-2000:]
    ours = [r for r in dump.records if r["key"]["data"]["transactionalId"] == "interop-committed"]
    values = [r["payload"]["data"] for r in ours]
    assert {r["payload"]["version"] for r in ours} == {"0"}  # transaction version 0/1: value v0, as Kafka writes it
    states = [v["transactionStatus"] for v in values]
    collapsed = [s for i, s in enumerate(states) if i == 0 or states[i - 1] != s]
    # Empty, Ongoing (growing), PrepareCommit, CompleteCommit, then Ongoing, PrepareAbort, CompleteAbort.
    assert collapsed == [0, 1, 2, 4, 1, 3, 5], dump.output[-3000:]
    prepare = values[states.index(2)]
    assert sorted((p["topic"], tuple(p["partitionIds"])) for p in prepare["transactionPartitions"]) == [
        ("__consumer_offsets", (partition_for(GROUP, PARTITIONS),)), (TOPIC, (0, 1))]
    assert prepare["producerEpoch"] == 0 and prepare["transactionTimeoutMs"] == 60000
    assert values[0]["transactionPartitions"] is None and values[states.index(4)]["transactionPartitions"] == []


def test_kafka_reads_our_transactional_offset_commit_and_its_marker(written, kafka_tools):
    dump = dump_log_segments(kafka_tools, [segment(written, "__consumer_offsets", GROUP)], "--offsets-decoder",
                             "--deep-iteration")
    assert all(b.is_valid for b in dump.batches), dump.output[-2000:]
    flags = [(b.header.get("isTransactional"), b.header.get("isControl")) for b in dump.batches]
    assert ("true", "false") in flags and ("true", "true") in flags, dump.output[-3000:]
    assert "COMMIT" in dump.output, dump.output[-3000:]


def test_kafka_reads_our_data_markers(written, kafka_tools):
    dump = dump_log_segments(kafka_tools, [written / f"{TOPIC}-0" / f"{0:020d}.log"], "--deep-iteration")
    controls = [b for b in dump.batches if b.header.get("isControl") == "true"]
    assert len(controls) == 2 and all(b.is_valid for b in dump.batches), dump.output[-3000:]
    assert "COMMIT" in dump.output and "ABORT" in dump.output


def test_groupcoord_loads_the_transaction_state_kafka_wrote(kafka_reference, tmp_path):
    run = uuid.uuid4().hex[:8]
    committed_id, open_id = f"kafka-committed-{run}", f"kafka-open-{run}"
    transactional_story(kafka_reference, committed_id, open_id, f"txn-migrating-{run}", f"txn-group-{run}")
    kafka_admin = AdminClient({"bootstrap.servers": kafka_reference})
    expected = {t: kafka_admin.describe_transactions([t])[t].result(30) if hasattr(kafka_admin, "describe_transactions") else None
                for t in (committed_id, open_id)}
    data = tmp_path / "data"
    data.mkdir()
    for tid in (committed_id, open_id):
        name = f"__transaction_state-{partition_for(tid, PARTITIONS)}"
        if not (data / name).exists():
            shutil.copytree(SHARED_BROKER.broker.workdir / "data" / name, data / name)
    versions = set()
    for log in data.glob("__transaction_state-*/*.log"):
        raw = log.read_bytes()
        for pos, header in iter_batches(raw):
            for record in decode_records(raw, pos, header):
                if record.value is not None:
                    versions.add(decode_value(record.value).version)
    with run_in_thread(data_dir=data, listen="127.0.0.1:0", metrics_port=-1) as broker:
        committed, still_open = broker.transactions.describe([committed_id, open_id])
    assert versions == {1}  # Kafka 4.3.1 (transaction.version 2) writes the flexible value v1
    assert committed["error_code"] == 0 and committed["transaction_state"] == "CompleteAbort"
    assert still_open["error_code"] == 0 and still_open["transaction_state"] == "Ongoing"
    assert still_open["topics"] == [{"topic": f"txn-migrating-{run}", "partitions": [1]}]
    assert still_open["transaction_timeout"] == 900000
    for tid, ours in ((committed_id, committed), (open_id, still_open)):
        theirs = expected[tid]
        if theirs is not None:
            assert ours["producer_id"] == theirs.producer_id and ours["producer_epoch"] == theirs.producer_epoch
