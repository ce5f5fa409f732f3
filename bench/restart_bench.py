"""Restart time after SIGKILL as the data grows (issue 17, "restart time grows with the data").

For each size step the data directory grows to N GB in a user topic plus M offset commit requests (each
committing 4 partitions of one of 500 groups; written through the embedded broker, in process, so gigabytes
take seconds), then the daemon is started, given some fresh offset commits over the wire (so each crash
leaves work past the last checkpoint and snapshot, as a crash of a busy broker does), and SIGKILLed. That
start/commit/SIGKILL cycle is timed ``--rounds`` times:

- ``listening``: exec → the port accepts connections (logs recovered, catalog loaded);
- ``serving``:   exec → an OffsetFetch (v8) for ``group-0`` answered without error and with the offset its
  last acknowledged commit gave partition 0: the coordinator has loaded that group. This is "restart".

``--kafka`` grows a Kafka 4.3.1 (the cached reference distribution, production JVM flags: G1, 1 GiB heap) to
the same data over the wire (Produce v9 of 1 MB batches, acks=1; the same OffsetCommit requests) and times
the same cycle the same way: exec of ``kafka.Kafka`` → the same OffsetFetch answered with the same check.

    .venv/bin/python -m bench.restart_bench --sizes-gb 0.25,0.5,1,2 --commits-per-gb 200000
    .venv/bin/python -m bench.restart_bench --sizes-gb 10 --commits-per-gb 100000 --kafka   # issue 17's figure
    .venv/bin/python -m bench.restart_bench --python /other/venv/bin/python   # the same, daemon from another build

Prints one line per step and the medians, after the floor: the same daemon's exec → listening on an empty data
directory (what the interpreter and the imports cost on this machine now); ``--json`` adds a machine-readable line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.requests import _connect, call, encode
from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import is_flexible, response_reader
from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.ops.logging import configure_logging
from groupcoord.protocol.record_batch import encode_batch

TOPIC = "bulk"
PARTITIONS = 4
BATCH_VALUE = bytes(range(256)) * 256  # 64 KiB, incompressible enough not to matter (no compression is used)
RECORDS_PER_BATCH = 16                 # 1 MiB batches
GROUPS = 500


@dataclass(frozen=True, slots=True)
class Step:
    broker: str
    data_gb: float
    commits: int
    data_bytes_on_disk: int
    offsets_bytes_on_disk: int
    listening_s: list[float]
    serving_s: list[float]

    @property
    def listening_median(self) -> float:
        return statistics.median(self.listening_s)

    @property
    def serving_median(self) -> float:
        return statistics.median(self.serving_s)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def grow(data_dir: Path, data_bytes: int, commits: int, commit_base: int, offsets_segment_bytes: int) -> None:
    """Append until the user topic holds ``data_bytes`` and ``commits`` more offset commits exist, compact the
    offsets log's closed segments (as the daemon's cleaner would have meanwhile), stop cleanly."""
    async with Broker(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, fsync="never",
                      log_cleaner_enable=False, offsets_topic_segment_bytes=offsets_segment_bytes) as broker:
        topics = broker.dataplane.topics
        if topics.get(TOPIC) is None:
            await topics.create(TOPIC, PARTITIONS)
        batch = encode_batch([(b"k", BATCH_VALUE, ())] * RECORDS_PER_BATCH)
        logs = [topics.log(TOPIC, p) for p in range(PARTITIONS)]
        written = sum(log.size_bytes for log in logs)
        turn = 0
        while written < data_bytes:
            await logs[turn % PARTITIONS].append(batch)
            written += len(batch)
            turn += 1
        pending = []
        for n in range(commits):
            group = f"group-{n % GROUPS}"
            offset = commit_base + n
            request = OffsetCommit(group, ((TOPIC, tuple(CommitPartition(p, offset, -1, "") for p in range(PARTITIONS))),),
                                   -1, "")
            pending.append(broker.groups.commit_offsets(request))
            if len(pending) >= 2000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
        await broker.log_manager.clean_now("__consumer_offsets")


def last_commit_of_group_0(commit_base: int, commits: int) -> int:
    """The offset the last of ``commits`` requests numbered from ``commit_base`` committed for group-0."""
    last = ((commits - 1) // GROUPS) * GROUPS
    return commit_base + last


def du(path: Path, prefix: str) -> int:
    total = 0
    for entry in path.iterdir():
        if entry.is_dir() and entry.name.startswith(prefix):
            total += sum(f.stat().st_size for f in entry.iterdir() if f.suffix == ".log")
    return total


class Spawned:
    """One broker process: exec, time to accepting connections and to serving group-0's offsets, SIGKILL."""

    def __init__(self, cmd: list[str], port: int, cwd: Path | None = None, stdout=subprocess.DEVNULL) -> None:
        self.port = port
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True)

    def wait_listening(self, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited with status {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return time.perf_counter() - self.started
            except OSError:
                time.sleep(0.005)
        raise RuntimeError(f"broker did not listen within {timeout}s")

    def wait_serving(self, timeout: float, expected: int) -> float:
        """exec → OffsetFetch v8 for group-0 answered without error, partition 0 at ``expected``."""
        deadline = time.perf_counter() + timeout
        last = None
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"broker exited with status {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                    while time.perf_counter() < deadline:
                        answer = call(sock, 9, 8, {"groups": [{"group_id": "group-0", "topics": [
                            {"name": TOPIC, "partition_indexes": [0]}]}], "require_stable": False})
                        group = answer.groups[0]
                        offsets = [p.committed_offset for t in group.topics for p in t.partitions if p.error_code == 0]
                        if group.error_code == 0 and offsets == [expected]:
                            return time.perf_counter() - self.started
                        last = (group.error_code, offsets)
                        time.sleep(0.005)
            except OSError:
                time.sleep(0.005)
        raise RuntimeError(f"group-0 not served within {timeout}s (last answer {last}, expected {expected})")

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(60)


def offset_commit_body(n: int, offset: int) -> dict:
    return {"group_id": f"group-{n % GROUPS}", "generation_id_or_member_epoch": -1, "member_id": "",
            "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": p, "committed_offset": offset, "committed_leader_epoch": -1,
                 "committed_metadata": ""} for p in range(PARTITIONS)]}]}


def pipelined(port: int, frames, api_key: int, version: int, window: int = 64) -> int:
    """Send frames keeping ``window`` in flight on one connection; every answer is decoded and checked."""
    reader = response_reader(api_key, version)
    flexible = is_flexible(api_key, version)
    errors = 0
    in_flight = 0

    def read_one(sock: socket.socket) -> None:
        nonlocal errors
        size = int.from_bytes(_read_exact(sock, 4), "big")
        frame = _read_exact(sock, size)
        _, pos = parse_response_header(frame, api_key, flexible)
        answer = reader(frame, pos)[0]
        if api_key == 0:
            errors += sum(1 for r in answer.responses for p in r.partition_responses if p.error_code)
        else:
            errors += sum(1 for t in answer.topics for p in t.partitions if p.error_code)

    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        for frame in frames:
            sock.sendall(frame)
            in_flight += 1
            if in_flight >= window:
                read_one(sock)
                in_flight -= 1
        while in_flight:
            read_one(sock)
            in_flight -= 1
    return errors


def _read_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed")
        buf += chunk
    return bytes(buf)


def commit_over_the_wire(port: int, requests: int, base: int, timeout: float = 120.0) -> None:
    """One commit request after the other, each retried while its group's partition is still loading (a
    broker serving group-0 may not have loaded every other partition yet: Kafka loads them one by one)."""
    deadline = time.perf_counter() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        for n in range(requests):
            while True:
                answer = call(sock, 8, 8, offset_commit_body(n, base + n))
                codes = {p.error_code for t in answer.topics for p in t.partitions}
                if codes == {0}:
                    break
                if time.perf_counter() > deadline:
                    raise RuntimeError(f"commit refused: {codes}")
                time.sleep(0.01)


def groupcoord_command(python: str, data_dir: Path, port: int, settings: list[str]) -> list[str]:
    return [python, "-m", "groupcoord", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data_dir),
            "--metrics-port", "0", "--log-level", "warning", *settings]


def measure(spawn, rounds: int, recent: int, timeout: float, commit_base: int, expected: int) -> tuple[list[float], list[float]]:
    """``rounds`` + 1 cycles of exec, serving, ``recent`` commits over the wire, SIGKILL; the first start
    (after a clean stop or a fresh grow) is not counted, each timed one follows a SIGKILL."""
    listening, serving = [], []
    for round_no in range(rounds + 1):
        broker: Spawned = spawn()
        try:
            up = broker.wait_listening(timeout)
            ready = broker.wait_serving(timeout, expected)
            base = commit_base + round_no * recent
            commit_over_the_wire(broker.port, recent, base)
            expected = last_commit_of_group_0(base, recent)
        finally:
            broker.kill()
        if round_no:
            listening.append(up)
            serving.append(ready)
    return listening, serving


def empty_start(python: str, workdir: Path, rounds: int, timeout: float) -> list[float]:
    """exec → listening of a daemon on an empty data directory, SIGKILLed, ``rounds`` times: what a restart
    costs with no data at all (the interpreter and the imports), so that a slow figure on a loaded machine
    can be told apart from a restart that depends on the data."""
    times = []
    for n in range(rounds):
        empty = workdir / f"empty-{n}"
        port = free_port()
        broker = Spawned(groupcoord_command(python, empty, port, []), port, cwd=workdir)
        try:
            times.append(broker.wait_listening(timeout))
        finally:
            broker.kill()
    return times


# ----------------------------------------------------------------------------------------------- Kafka

class KafkaRestarts:
    """Kafka 4.3.1 on a data directory that survives its restarts: formatted once, then exec'd and
    SIGKILLed like the daemon, with production JVM flags (bench/kafka_server.py)."""

    def __init__(self, workdir: Path) -> None:
        from bench.kafka_server import PRODUCTION_JVM_OPTIONS, kafka_config
        from tests.reference.kafka_broker import _LOG4J2, free_port as kafka_port, new_cluster_id, server_properties
        from tests.reference.kafka_distribution import ensure_kafka

        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.distribution = ensure_kafka()
        self.port = kafka_port()
        controller = kafka_port()
        config = kafka_config()
        extra = dict(config.extra, **{"offsets.topic.segment.bytes": "104857600"})
        self.properties = workdir / "server.properties"
        self.properties.write_text(server_properties(type(config)(config.group_initial_rebalance_delay_ms,
                                                                  config.offsets_topic_num_partitions, extra),
                                                     self.port, controller, workdir / "data"))
        (workdir / "log4j2.properties").write_text(_LOG4J2.format(log=workdir / "server.log"))
        self.jvm = ["java", *PRODUCTION_JVM_OPTIONS, f"-Dlog4j2.configurationFile={workdir / 'log4j2.properties'}",
                    "-cp", self.distribution.classpath]
        subprocess.run([*self.jvm, "kafka.tools.StorageTool", "format", f"--cluster-id={new_cluster_id()}",
                        f"--config={self.properties}"], check=True, capture_output=True, timeout=300)

    def spawn(self) -> Spawned:
        return Spawned([*self.jvm, "kafka.Kafka", str(self.properties)], self.port,
                       stdout=open(self.workdir / "stdout.log", "ab"))

    def stop(self, broker: Spawned) -> None:
        os.killpg(broker.proc.pid, signal.SIGTERM)
        broker.proc.wait(120)


def grow_kafka(kafka: KafkaRestarts, data_bytes: int, commits: int, commit_base: int, timeout: float) -> None:
    """The same data as ``grow`` over the wire: TOPIC with 1 MB batches, then the same commit requests."""
    broker = kafka.spawn()
    try:
        broker.wait_listening(timeout)
        deadline = time.perf_counter() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", kafka.port), timeout=30) as sock:
                    created = call(sock, 19, 7, {"topics": [{"name": TOPIC, "num_partitions": PARTITIONS,
                                                             "replication_factor": 1, "assignments": [], "configs": []}],
                                                 "timeout_ms": 30000, "validate_only": False})
                if created.topics[0].error_code in (0, 36):  # created, or TOPIC_ALREADY_EXISTS
                    break
            except OSError:
                pass
            if time.perf_counter() > deadline:
                raise RuntimeError("Kafka did not create the topic")
            time.sleep(0.2)
        batch = encode_batch([(b"k", BATCH_VALUE, ())] * (RECORDS_PER_BATCH - 1))  # under message.max.bytes
        per_partition = [encode(0, 9, {"transactional_id": None, "acks": 1, "timeout": 30000, "topic_data": [
            {"name": TOPIC, "partition_data": [{"index": p, "records": batch}]}]}) for p in range(PARTITIONS)]
        for frame in per_partition:  # the first produce to each partition waits out the leader election
            while True:
                if not pipelined(kafka.port, [frame], 0, 9, window=1):
                    break
                if time.perf_counter() > deadline:
                    raise RuntimeError("Kafka did not accept a produce")
                time.sleep(0.2)
        batches = max(data_bytes // len(batch) + 1 - PARTITIONS, 0)
        errors = pipelined(kafka.port, (per_partition[n % PARTITIONS] for n in range(batches)), 0, 9, window=8)
        if errors:
            raise RuntimeError(f"Kafka refused {errors} produce batches")
        # Kafka creates __consumer_offsets on the first FindCoordinator, then elects and loads its partitions.
        while True:
            with socket.create_connection(("127.0.0.1", kafka.port), timeout=30) as sock:
                call(sock, 10, 4, {"key_type": 0, "coordinator_keys": ["group-0"]})
            if all(not pipelined(kafka.port, [encode(8, 8, offset_commit_body(n, 0))], 8, 8, window=1)
                   for n in range(GROUPS)):
                break
            if time.perf_counter() > deadline:
                raise RuntimeError("Kafka's group coordinator did not come up")
            time.sleep(0.5)
        lanes = 4
        with ThreadPoolExecutor(lanes) as pool:
            futures = [pool.submit(pipelined, kafka.port,
                                   (encode(8, 8, offset_commit_body(n, commit_base + n))
                                    for n in range(lane, commits, lanes)), 8, 8) for lane in range(lanes)]
            errors = sum(f.result() for f in futures)
        if errors:
            raise RuntimeError(f"Kafka refused {errors} commits")
    finally:
        kafka.stop(broker)


def kafka_du(data_dir: Path, prefix: str) -> int:
    return du(data_dir, prefix) if data_dir.exists() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes-gb", default="0.25,0.5,1,2", help="cumulative user-topic sizes to step through")
    parser.add_argument("--commits-per-gb", type=int, default=200_000, help="offset commit requests per GB step")
    parser.add_argument("--rounds", type=int, default=5, help="SIGKILL/restart cycles per step (medians of these)")
    parser.add_argument("--recent", type=int, default=500, help="commit requests over the wire before each SIGKILL")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose groupcoord the daemon runs")
    parser.add_argument("--data-dir", default=None, help="keep the data here (default: a temporary directory)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--offsets-segment-bytes", type=int, default=104857600,
                        help="offsets.topic.segment.bytes (Kafka's default 100 MiB)")
    parser.add_argument("--setting", action="append", default=[], help="extra daemon flag, e.g. --setting=--fsync=never")
    parser.add_argument("--kafka", action="store_true", help="the same steps against Kafka 4.3.1, in the same run")
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args(argv)
    configure_logging("warning")
    sizes = [float(s) for s in ns.sizes_gb.split(",")]
    with tempfile.TemporaryDirectory(prefix="restart-bench-", dir=ns.data_dir) as tmp:
        steps: list[Step] = []
        floor = empty_start(ns.python, Path(tmp), ns.rounds, ns.timeout)
        print(f"  groupcoord on an empty data directory (the floor: interpreter, imports, no data): listening "
              f"{statistics.median(floor):.3f} s (median of {ns.rounds}; max {max(floor):.3f} s)", flush=True)
        data_dir = Path(tmp) / "data"
        kafka = KafkaRestarts(Path(tmp) / "kafka") if ns.kafka else None
        commits_so_far = 0
        previous_gb = 0.0
        for size in sizes:
            commits = int((size - previous_gb) * ns.commits_per_gb)
            started = time.perf_counter()
            asyncio.run(grow(data_dir, int(size * (1 << 30)), commits, commits_so_far, ns.offsets_segment_bytes))
            print(f"groupcoord grown to {size} GB and {commits_so_far + commits} commits in "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
            expected = last_commit_of_group_0(commits_so_far, commits)
            commit_base = 10_000_000 + commits_so_far
            settings = [f"--offsets-topic-segment-bytes={ns.offsets_segment_bytes}", *ns.setting]

            def spawn_groupcoord() -> Spawned:
                port = free_port()
                # run from outside the source tree, so that --python's own install is what runs
                return Spawned(groupcoord_command(ns.python, data_dir, port, settings), port, cwd=Path(tmp))

            listening, serving = measure(spawn_groupcoord, ns.rounds, ns.recent, ns.timeout, commit_base, expected)
            steps.append(Step("groupcoord", size, commits_so_far + commits, du(data_dir, TOPIC + "-"),
                              du(data_dir, "__consumer_offsets-"), listening, serving))
            report(steps[-1], ns.rounds)
            if kafka is not None:
                started = time.perf_counter()
                grow_kafka(kafka, int(size * (1 << 30)) - kafka_du(kafka.workdir / "data", TOPIC + "-"),
                           commits, commits_so_far, ns.timeout)
                print(f"kafka grown to {size} GB and {commits_so_far + commits} commits in "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
                listening, serving = measure(kafka.spawn, ns.rounds, ns.recent, ns.timeout, commit_base + 1_000_000,
                                             expected)
                steps.append(Step("kafka 4.3.1", size, commits_so_far + commits,
                                  kafka_du(kafka.workdir / "data", TOPIC + "-"),
                                  kafka_du(kafka.workdir / "data", "__consumer_offsets-"), listening, serving))
                report(steps[-1], ns.rounds)
            commits_so_far += commits
            previous_gb = size
        if ns.json:
            print(json.dumps([dict(asdict(s), listening_median=s.listening_median, serving_median=s.serving_median)
                              for s in steps]))
    return 0


def report(step: Step, rounds: int) -> None:
    print(f"{step.broker:>12}: {step.data_gb:5.2f} GB data ({step.data_bytes_on_disk / 1e9:.2f} GB on disk), "
          f"{step.commits:>8} commits ({step.offsets_bytes_on_disk / 1e6:6.1f} MB offsets log): restart after SIGKILL "
          f"listening {step.listening_median:6.3f} s, OffsetFetch served {step.serving_median:6.3f} s "
          f"(median of {rounds}; max {max(step.serving_s):.3f} s)", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
