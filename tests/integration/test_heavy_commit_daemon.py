"""A 200,000-partition OffsetCommit (3.6 MB) against the daemon while another client heartbeats (issue 17).

Correctness, not timing: the commit is answered partition for partition (the 100 partitions of the topic
committed, the rest UNKNOWN_TOPIC_OR_PARTITION), every committed offset is fetched back, and the other
client's heartbeats keep being answered, without error, while the commit is being processed. The stall
itself (≤ 100 ms at 1,000,000 partitions) and RSS are measured by bench/heavy_request_bench.py.
"""

from __future__ import annotations

import socket
import threading
import time

from bench.heavy_request_bench import Prober, heavy_commit, send_and_wait, decode_answer
from bench.requests import call
from tests.support.daemon import Daemon

PARTITIONS = 200_000
TOPIC_PARTITIONS = 100


def test_a_huge_commit_is_committed_and_fetched_back_while_heartbeats_are_answered(tmp_path):
    daemon = Daemon(tmp_path).start()
    prober = None
    try:
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as sock:
            created = call(sock, 19, 7, {"topics": [{"name": "orders", "num_partitions": TOPIC_PARTITIONS,
                                                     "replication_factor": 1, "assignments": [], "configs": []}],
                                         "timeout_ms": 30000, "validate_only": False})
            assert created.topics[0].error_code == 0
        prober = Prober(daemon.port)
        prober.start()
        assert prober.ready.wait(30)
        frame = heavy_commit(PARTITIONS, "heavy")
        started = time.perf_counter()
        _elapsed, data = send_and_wait(daemon.port, frame)
        ended = time.perf_counter()
        time.sleep(0.05)
        answer = decode_answer(data, 8, 8)
        codes = [int(p.error_code) for t in answer.topics for p in t.partitions]
        assert len(codes) == PARTITIONS
        assert codes[:TOPIC_PARTITIONS] == [0] * TOPIC_PARTITIONS
        assert set(codes[TOPIC_PARTITIONS:]) == {3}
        beats = prober.between(started, ended)
        assert beats, "no heartbeat was answered while the commit was processed"
        with socket.create_connection(("127.0.0.1", daemon.port), timeout=30) as sock:
            fetched = call(sock, 9, 8, {"groups": [{"group_id": "heavy", "member_id": None, "member_epoch": -1,
                                                    "topics": None}], "require_stable": False})
        offsets = {int(p.partition_index): int(p.committed_offset)
                   for g in fetched.groups for t in g.topics for p in t.partitions}
        assert offsets == {p: p for p in range(TOPIC_PARTITIONS)}
        assert prober.is_alive(), "the heartbeating client failed"
    finally:
        if prober is not None:
            prober.stop.set()
            prober.join(10)
        daemon.terminate()
