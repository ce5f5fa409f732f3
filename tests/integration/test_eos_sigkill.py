"""A bounded exactly-once run through SIGKILLs: a confluent-kafka consume-transform-produce pipeline while
the daemon is killed mid-transaction several times — after the records are written, after the offsets are
added, and while the commit is under way. Each time the daemon restarts on its data and a new incarnation
of the application (same transactional id and group) takes over, fencing the old one. At the end the output
read at read_committed holds every input record exactly once, and the committed input offsets match the
output partition by partition."""
from __future__ import annotations

import threading
import time

import pytest
from confluent_kafka import KafkaException

from tests.integration.eos_support import (PARTITIONS, Pipeline, committed_offsets, create_topics, exactly_once,
                                           produce_input, read_all, read_per_partition)
from tests.support.daemon import Daemon

pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]

RECORDS = 400
# which transaction dies, and where: after its records are flushed, after its offsets are added, mid-commit
KILLS = {3: "written", 6: "offsets", 9: "commit", 12: "written", 15: "commit"}
RUN_LIMIT_S = 200


def test_exactly_once_through_repeated_sigkills(tmp_path):
    daemon = Daemon(tmp_path / "data", fsync="always").start()
    try:
        bootstrap = daemon.bootstrap_servers
        create_topics(bootstrap, "in", "out")
        produce_input(bootstrap, "in", RECORDS)
        app = Pipeline(bootstrap, "in", "out", "etl", "etl-chaos")
        abandoned = []
        kills = 0
        transactions = 0
        started = time.monotonic()

        def restart() -> Pipeline:
            nonlocal kills
            daemon.kill()
            kills += 1
            abandoned.append(app)
            app.abandon()
            daemon.start()
            return Pipeline(bootstrap, "in", "out", "etl", "etl-chaos", init_timeout=90)

        while True:
            assert time.monotonic() - started < RUN_LIMIT_S, f"stalled after {transactions} transactions"
            messages = app.poll_batch(max_records=25)
            if not messages:
                committed = committed_offsets(bootstrap, "etl", "in")
                if sum(max(o, 0) for o in committed.values()) >= RECORDS:
                    break
                continue
            transactions += 1
            stage = KILLS.get(transactions)
            try:
                nxt = app.begin_and_write(messages)
                if stage == "written":
                    assert app.producer.flush(30) == 0
                    app = restart()
                    continue
                app.send_offsets(nxt)
                if stage == "offsets":
                    app = restart()
                    continue
                if stage == "commit":
                    committing = threading.Thread(target=_commit_quietly, args=(app,), daemon=True)
                    committing.start()
                    time.sleep(0.01)
                    app = restart()
                    committing.join(1)
                    continue
                app.producer.commit_transaction(30)
            except KafkaException as exc:
                # an abortable error: throw the transaction away and process its records again
                if exc.args[0].txn_requires_abort():
                    app.producer.abort_transaction(30)
                    app.rewind(messages)
                else:
                    raise
        assert kills == len(KILLS)

        values = read_all(bootstrap, "out", "read_committed", RECORDS)
        exactly_once(values, RECORDS)
        offsets = committed_offsets(bootstrap, "etl", "in")
        per_partition = read_per_partition(bootstrap, "out", RECORDS)
        assert offsets == {p: RECORDS // PARTITIONS + (1 if p < RECORDS % PARTITIONS else 0)
                           for p in range(PARTITIONS)}
        assert offsets == {p: per_partition[p] for p in range(PARTITIONS)}, "committed input offsets = output"
        app.consumer.close()
    finally:
        daemon.kill()


def _commit_quietly(app: Pipeline) -> None:
    try:
        app.producer.commit_transaction(5)
    except KafkaException:
        pass      # the broker died under it: the next incarnation settles the transaction
