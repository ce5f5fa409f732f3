"""SIGKILL chaos: committing and producing clients against a daemon killed at random moments (issue 17).

Committers each own one group and commit the same increasing offset to all of its partitions in one
request; producers each own one partition and send one uniquely numbered record per request (acks=-1).
Every answer is remembered: what was acknowledged, and the one request in flight when the kill came (whose
fate is unknown). After each restart, before load resumes, every group's committed offsets are fetched:
each must be the last acknowledged commit or the one in flight — and the same for all partitions of the
request (a commit is one batch). After the last kill the records are read back from the data directory:
every acknowledged record is there, in order, and nothing that was never sent.

    .venv/bin/python -m tests.support.chaos --kills 200 --time-limit-s 3600     # make chaos
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from groupcoord.protocol.record_batch import encode_batch

from tests.support.daemon import Daemon
from tests.support.wire import WireClient

TOPIC = "chaos"
COMMIT_PARTITIONS = 8


@dataclass
class Worker:
    name: str
    acked: list = field(default_factory=list)
    in_flight: object = None
    """What was sent when the connection died: it may or may not have been applied."""
    ambiguous: list = field(default_factory=list)
    """Records that were in flight at some kill (producers): each may or may not be in the log."""


@dataclass
class ChaosReport:
    kills: int = 0
    acknowledged_commits: int = 0
    acknowledged_records: int = 0
    lost_commits: int = 0
    lost_records: int = 0
    problems: list[str] = field(default_factory=list)
    restart_seconds: list[float] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.kills} SIGKILLs, {self.acknowledged_commits} acknowledged partition commits, "
                f"{self.acknowledged_records} acknowledged records: {self.lost_commits} commits and "
                f"{self.lost_records} records lost; restarts median "
                f"{sorted(self.restart_seconds)[len(self.restart_seconds) // 2] if self.restart_seconds else 0:.2f} s"
                + (f"; problems: {self.problems[:5]}" if self.problems else ""))


class Chaos:
    def __init__(self, data_dir: Path, committers: int = 2, producers: int = 2, seed: int = 17, **settings) -> None:
        self.daemon = Daemon(data_dir, **settings)
        self.data_dir = data_dir
        self.random = random.Random(seed)
        self.committers = [Worker(f"chaos-group-{n}") for n in range(committers)]
        self.producers = [Worker(f"producer-{n}") for n in range(producers)]
        self.go = threading.Event()
        self.stop = threading.Event()
        self.report = ChaosReport()
        self._threads: list[threading.Thread] = []

    # ---------------------------------------------------------------- clients

    def _connect(self) -> WireClient | None:
        while not self.stop.is_set():
            self.go.wait(1.0)
            if not self.go.is_set():
                continue
            try:
                return WireClient(self.daemon.bootstrap_servers, timeout=30)
            except OSError:
                time.sleep(0.05)
        return None

    def _commit_loop(self, worker: Worker) -> None:
        offset = 0
        client = None
        while not self.stop.is_set():
            if client is None:
                client = self._connect()
                if client is None:
                    return
                offset = max([offset, *(worker.acked[-1:] or [0])])
            offset += 1
            worker.in_flight = offset
            try:
                answer = client.request(8, 8, {
                    "group_id": worker.name, "generation_id_or_member_epoch": -1, "member_id": "",
                    "group_instance_id": None, "topics": [{"name": TOPIC, "partitions": [
                        {"partition_index": p, "committed_offset": offset, "committed_leader_epoch": -1,
                         "committed_metadata": ""} for p in range(COMMIT_PARTITIONS)]}]})
            except (OSError, ConnectionError, AssertionError):
                client.close()
                client = None
                continue  # in_flight stays: its fate is checked after the restart
            worker.in_flight = None
            codes = {p.error_code for t in answer.topics for p in t.partitions}
            if codes == {0}:
                worker.acked.append(offset)
                self.report.acknowledged_commits += COMMIT_PARTITIONS
            # a retriable error (the shard still loading) is simply not acknowledged
        if client is not None:
            client.close()

    def _produce_loop(self, worker: Worker, partition: int) -> None:
        seq = 0
        client = None
        while not self.stop.is_set():
            if client is None:
                client = self._connect()
                if client is None:
                    return
            seq += 1
            value = f"{worker.name}-{seq}".encode()
            worker.in_flight = value
            try:
                answer = client.request(0, 9, {"transactional_id": None, "acks": -1, "timeout": 30000, "topic_data": [
                    {"name": TOPIC, "partition_data": [{"index": partition,
                                                        "records": encode_batch([(None, value, ())])}]}]})
            except (OSError, ConnectionError, AssertionError):
                worker.ambiguous.append(value)
                client.close()
                client = None
                continue
            worker.in_flight = None
            if answer.responses[0].partition_responses[0].error_code == 0:
                worker.acked.append(value)
                self.report.acknowledged_records += 1
            else:
                worker.ambiguous.append(value)  # refused, but be lenient: never counted as acknowledged
        if client is not None:
            client.close()

    # ---------------------------------------------------------------- orchestration

    def run(self, kills: int, load_s: tuple[float, float] = (0.2, 1.0), time_limit_s: float = 600.0) -> ChaosReport:
        deadline = time.monotonic() + time_limit_s
        self.daemon.start()
        with WireClient(self.daemon.bootstrap_servers) as admin:
            created = admin.request(19, 7, {"topics": [{"name": TOPIC, "num_partitions": max(COMMIT_PARTITIONS, len(self.producers)),
                                                        "replication_factor": 1, "assignments": [], "configs": []}],
                                            "timeout_ms": 30000, "validate_only": False})
            assert created.topics[0].error_code in (0, 36), created
        for worker in self.committers:
            self._threads.append(threading.Thread(target=self._commit_loop, args=(worker,), daemon=True))
        for n, worker in enumerate(self.producers):
            self._threads.append(threading.Thread(target=self._produce_loop, args=(worker, n), daemon=True))
        for thread in self._threads:
            thread.start()
        self.go.set()
        try:
            for _ in range(kills):
                if time.monotonic() > deadline:
                    break
                time.sleep(self.random.uniform(*load_s))
                self.go.clear()
                self.daemon.kill()
                self.report.kills += 1
                started = time.perf_counter()
                self.daemon.start(timeout=60)
                self.report.restart_seconds.append(time.perf_counter() - started)
                time.sleep(0.05)  # let the workers notice the closed connections
                self._check_commits()
                self.go.set()
        finally:
            self.stop.set()
            self.go.set()
            for thread in self._threads:
                thread.join(60)
            self.daemon.kill()
        self._check_records()
        return self.report

    def _check_commits(self) -> None:
        """Every group's offsets, fetched after the restart: the last acknowledged commit or the one in flight,
        the same on every partition."""
        deadline = time.monotonic() + 60
        with WireClient(self.daemon.bootstrap_servers) as client:
            for worker in self.committers:
                while True:
                    answer = client.request(9, 8, {"groups": [{"group_id": worker.name, "topics": None}],
                                                   "require_stable": False})
                    group = answer.groups[0]
                    if group.error_code == 0 or time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
                offsets = {p.committed_offset for t in group.topics for p in t.partitions}
                acked = worker.acked[-1] if worker.acked else None
                allowed = {acked, worker.in_flight} - {None}
                fetched = next(iter(offsets)) if len(offsets) == 1 else None
                if not allowed and not offsets:
                    continue
                if len(offsets) != 1:
                    self.report.problems.append(f"{worker.name}: a commit applied to some partitions only: {offsets}")
                    self.report.lost_commits += COMMIT_PARTITIONS
                elif fetched not in allowed:
                    self.report.problems.append(f"{worker.name}: fetched {fetched}, acknowledged {acked}, "
                                                f"in flight {worker.in_flight}")
                    self.report.lost_commits += COMMIT_PARTITIONS
                if fetched is not None and fetched == worker.in_flight:
                    worker.acked.append(fetched)  # it was applied: later checks start from it
                worker.in_flight = None

    def _check_records(self) -> None:
        from groupcoord.coordinator.broker import Broker
        from groupcoord.protocol.record_batch import decode_records

        async def read_back() -> dict[int, list[bytes]]:
            async with Broker(data_dir=self.data_dir, listen="127.0.0.1:0", metrics_port=0) as broker:
                out = {}
                for n in range(len(self.producers)):
                    log = broker.dataplane.topics.log(TOPIC, n)
                    values: list[bytes] = []
                    async for header, raw in log.batches(0):
                        values.extend(r.value for r in decode_records(raw, 0, header))
                    out[n] = values
                return out

        logs = asyncio.run(read_back())
        for n, worker in enumerate(self.producers):
            values = logs[n]
            present = set(values)
            lost = [v for v in worker.acked if v not in present]
            self.report.lost_records += len(lost)
            if lost:
                self.report.problems.append(f"{worker.name}: {len(lost)} acknowledged records lost, first {lost[0]!r}")
            known = set(worker.acked) | set(worker.ambiguous) | ({worker.in_flight} if worker.in_flight else set())
            invented = [v for v in values if v not in known]
            if invented:
                self.report.problems.append(f"{worker.name}: {len(invented)} records never sent, first {invented[0]!r}")
            order = [v for v in values if v in set(worker.acked)]
            if order != [v for v in worker.acked if v in present]:
                self.report.problems.append(f"{worker.name}: acknowledged records out of order")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--time-limit-s", type=float, default=3600)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--data-dir", default=None)
    ns = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="chaos-", dir=ns.data_dir) as tmp:
        report = Chaos(Path(tmp), seed=ns.seed).run(ns.kills, time_limit_s=ns.time_limit_s)
    print(report.summary(), flush=True)
    return 0 if not report.problems else 1


if __name__ == "__main__":
    sys.exit(main())
