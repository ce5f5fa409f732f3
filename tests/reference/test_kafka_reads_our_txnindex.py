"""Kafka's own DumpLogSegments reads the transaction data groupcoord writes: the ``.txnindex`` of aborted
transactions (Kafka's entry layout, printed field by field) and the COMMIT/ABORT control batches in the
``.log`` (transactional + control attributes, the marker's type and coordinator epoch).

The data is written by confluent-kafka's transactional producer against an embedded broker: a committed,
an aborted and another committed transaction."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from groupcoord.coordinator.broker import run_in_thread
from tests.reference.kafka_tools import dump_log_segments

pytestmark = pytest.mark.reference

TOPIC = "txn-interop"


def make_log(data_dir: Path) -> None:
    with run_in_thread(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": "interop-txn"})
        producer.init_transactions(30)
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            for i in range(3):
                producer.produce(TOPIC, key=f"{outcome}-{i}".encode(), value=b"v")
            producer.flush(30)
            if outcome == "commit":
                producer.commit_transaction(30)
            else:
                producer.abort_transaction(30)


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("groupcoord-txn-data")
    make_log(data_dir)
    return data_dir / f"{TOPIC}-0"


def test_kafka_reads_our_transaction_index(written, kafka_tools):
    index = written / f"{0:020d}.txnindex"
    assert index.stat().st_size == 34
    dump = dump_log_segments(kafka_tools, [index])
    [line] = [line for line in dump.output.splitlines() if line.startswith("version:")]
    fields = dict(re.findall(r"(\w+): (-?\d+)", line))
    # the aborted transaction: offsets 4-6 (after the first one's three records and marker), marker at 7
    assert fields["version"] == "0"
    assert (fields["firstOffset"], fields["lastOffset"], fields["lastStableOffset"]) == ("4", "7", "8")


def test_kafka_reads_our_markers(written, kafka_tools):
    dump = dump_log_segments(kafka_tools, [written / f"{0:020d}.log"], "--deep-iteration")
    assert all(batch.is_valid for batch in dump.batches), dump.output[-2000:]
    markers = [batch for batch in dump.batches if batch.header.get("isControl") == "true"]
    assert [b.header["baseOffset"] for b in markers] == ["3", "7", "11"]
    assert all(b.header["isTransactional"] == "true" for b in markers)
    kinds = re.findall(r"endTxnMarker: (\w+) coordinatorEpoch: (\d+)", dump.output)
    assert [kind for kind, _ in kinds] == ["COMMIT", "ABORT", "COMMIT"]
    data = [batch for batch in dump.batches if batch.header.get("isControl") == "false"]
    assert data and all(b.header["isTransactional"] == "true" for b in data)
