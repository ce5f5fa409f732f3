"""Transactions per second: a confluent-kafka transactional producer committing small transactions.

Each transaction is begin, one 100-byte record to each of K partitions, commit (which waits for the
coordinator's commit decision; markers follow). The figure is committed transactions per second over a
fixed time, for K = 1 and K = 8, after an unmeasured warm-up. It measures the transaction coordinator's
round trips (AddPartitionsToTxn, EndTxn, the __transaction_state writes) and the data side's marker writes.

    python -m bench.txn_bench --seconds 5                       # starts its own groupcoord (fsync=batch)
    python -m bench.txn_bench --seconds 5 --bootstrap HOST:PORT # or measures any broker

Every phase is bounded in time.
"""

from __future__ import annotations

import argparse
import time
import uuid

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from .servers import groupcoord

RECORD = b"x" * 100
OPERATION_TIMEOUT_S = 30.0


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(OPERATION_TIMEOUT_S)


def transactions_per_second(bootstrap: str, partitions: int, seconds: float, warmup_seconds: float = 1.0) -> float:
    """Committed transactions per second, each writing one record to each of ``partitions`` partitions."""
    stamp = uuid.uuid4().hex[:6]
    topic = f"bench-txn-{partitions}p-{stamp}"
    create_topic(bootstrap, topic, partitions)
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"bench-txn-{stamp}", "linger.ms": 0})
    producer.init_transactions(OPERATION_TIMEOUT_S)

    def one() -> None:
        producer.begin_transaction()
        for partition in range(partitions):
            producer.produce(topic, RECORD, partition=partition)
        producer.commit_transaction(OPERATION_TIMEOUT_S)

    end = time.monotonic() + warmup_seconds
    while time.monotonic() < end:
        one()
    count = 0
    started = time.monotonic()
    end = started + seconds
    while time.monotonic() < end:
        one()
        count += 1
    return count / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    def run(bootstrap: str) -> None:
        for partitions in (1, 8):
            rate = transactions_per_second(bootstrap, partitions, args.seconds)
            print(f"transactions/s, one record to each of {partitions} partition(s): {rate:,.1f}")

    if args.bootstrap:
        run(args.bootstrap)
    else:
        with groupcoord(None, fsync="batch") as (bootstrap, _startup):
            run(bootstrap)


if __name__ == "__main__":
    main()
