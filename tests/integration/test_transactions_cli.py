"""`groupcoord transactions list|describe` against a live broker: groupcoord, and the Kafka reference when it
is available, through the same scenario (kafka-transactions.sh's columns, and --json)."""

from __future__ import annotations

import json

import pytest
from confluent_kafka import Producer

from tests.integration.test_admin_cli import bootstrap, cli, unique  # noqa: F401  (the fixture is shared)


def open_and_idle(servers: str, topic: str) -> tuple[str, str, Producer, Producer]:
    busy_id, idle_id = unique("busy"), unique("idle")
    busy = Producer({"bootstrap.servers": servers, "transactional.id": busy_id, "transaction.timeout.ms": 600000})
    busy.init_transactions(30)
    busy.begin_transaction()
    busy.produce(topic, b"pending", partition=0)
    assert busy.flush(30) == 0
    idle = Producer({"bootstrap.servers": servers, "transactional.id": idle_id})
    idle.init_transactions(30)
    return busy_id, idle_id, busy, idle


def test_list_and_describe_transactions(bootstrap):
    topic = unique("txn-cli")
    assert cli(bootstrap, "topics", "create", "--topic", topic, "--partitions", "1")[0] == 0
    busy_id, idle_id, busy, idle = open_and_idle(bootstrap, topic)
    try:
        code, out, err = cli(bootstrap, "transactions", "list")
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].split() == ["TransactionalId", "Coordinator", "ProducerId", "TransactionState"]
        rows = {line.split()[0]: line.split() for line in lines[1:]}
        assert rows[busy_id][3] == "Ongoing" and rows[idle_id][3] == "Empty"

        code, out, _ = cli(bootstrap, "transactions", "list", "--state", "Ongoing", "--json")
        listed = {t["transactional_id"]: t for t in json.loads(out)}
        assert busy_id in listed and idle_id not in listed and listed[busy_id]["state"] == "Ongoing"

        code, out, err = cli(bootstrap, "transactions", "describe", "--transactional-id", busy_id)
        assert code == 0, err
        header, row = out.splitlines()
        assert header.split() == ["CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                                  "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                                  "TopicPartitions"]
        cells = row.split()
        assert cells[1:] [:1] == [busy_id] and cells[3:6] == ["0", "Ongoing", "600000"] and cells[8] == f"{topic}-0"
        assert int(cells[7]) >= 0

        code, out, _ = cli(bootstrap, "transactions", "describe", "--transactional-id", idle_id, "--json")
        described = json.loads(out)
        assert described["state"] == "Empty" and described["start_time_ms"] is None and described["partitions"] == []

        code, _, err = cli(bootstrap, "transactions", "describe", "--transactional-id", unique("nobody"))
        assert code == 1 and "TRANSACTIONAL_ID_NOT_FOUND" in err
    finally:
        busy.abort_transaction(30)
