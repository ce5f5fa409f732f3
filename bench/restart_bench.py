"""Restart time after SIGKILL as the data grows (issue 17, "restart time grows with the data").

For each size step the data directory grows to N GB in a user topic plus M offset commits (written through
the embedded broker, in process, so gigabytes take seconds), then the daemon is started, given some fresh
offset commits over the wire (so each crash leaves work past the last checkpoint, as a crash of a busy broker
does), and SIGKILLed. That start/commit/SIGKILL cycle is timed ``--rounds`` times:

- ``listening``: spawn → the port accepts connections (logs recovered, catalog loaded);
- ``loaded``:    spawn → the ``listening on`` line, printed once every ``__consumer_offsets`` partition has been
  replayed into the group coordinator.

    .venv/bin/python -m bench.restart_bench --sizes-gb 0.25,0.5,1,2 --commits-per-gb 200000
    .venv/bin/python -m bench.restart_bench --python /other/venv/bin/python   # the same, daemon from another build
    .venv/bin/python -m bench.restart_bench --offsets-segment-bytes 1048576   # offsets log compacted as it grows

Prints one line per step and the medians; ``--json`` adds a machine-readable line.
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
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.requests import _connect, call
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
    data_gb: float
    commits: int
    data_bytes_on_disk: int
    offsets_bytes_on_disk: int
    listening_s: list[float]
    loaded_s: list[float]

    @property
    def listening_median(self) -> float:
        return statistics.median(self.listening_s)

    @property
    def loaded_median(self) -> float:
        return statistics.median(self.loaded_s)


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


def du(path: Path, prefix: str) -> int:
    total = 0
    for entry in path.iterdir():
        if entry.is_dir() and entry.name.startswith(prefix):
            total += sum(f.stat().st_size for f in entry.iterdir() if f.suffix == ".log")
    return total


class Daemon:
    """One daemon process: spawn, time to accepting connections and to 'listening on', SIGKILL."""

    def __init__(self, python: str, data_dir: Path, port: int, settings: list[str]) -> None:
        self.port = port
        self.started = time.perf_counter()
        cmd = [python, "-m", "groupcoord", "serve", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data_dir),
               "--metrics-port", "0", "--log-level", "warning", *settings]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.loaded = threading.Event()
        self.loaded_at = 0.0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if "listening on" in line and not self.loaded.is_set():
                self.loaded_at = time.perf_counter()
                self.loaded.set()

    def wait_listening(self, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with status {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return time.perf_counter() - self.started
            except OSError:
                time.sleep(0.005)
        raise RuntimeError(f"daemon did not listen within {timeout}s")

    def wait_loaded(self, timeout: float) -> float:
        if not self.loaded.wait(timeout):
            raise RuntimeError(f"daemon did not load within {timeout}s")
        return self.loaded_at - self.started

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)


def commit_over_the_wire(port: int, requests: int, base: int) -> None:
    with _connect(f"127.0.0.1:{port}") as sock:
        for n in range(requests):
            body = {"group_id": f"group-{n % GROUPS}", "generation_id_or_member_epoch": -1, "member_id": "",
                    "group_instance_id": None,
                    "topics": [{"name": TOPIC, "partitions": [
                        {"partition_index": p, "committed_offset": base + n, "committed_leader_epoch": -1,
                         "committed_metadata": ""} for p in range(PARTITIONS)]}]}
            call(sock, 8, 8, body)


def measure(python: str, data_dir: Path, rounds: int, recent: int, timeout: float, settings: list[str],
            commit_base: int) -> tuple[list[float], list[float]]:
    listening, loaded = [], []
    for round_no in range(rounds + 1):
        daemon = Daemon(python, data_dir, free_port(), settings)
        try:
            up = daemon.wait_listening(timeout)
            ready = daemon.wait_loaded(timeout)
            commit_over_the_wire(daemon.port, recent, commit_base + round_no * recent)
        finally:
            daemon.kill()
        if round_no:  # the first start follows a clean stop; the timed ones each follow a SIGKILL
            listening.append(up)
            loaded.append(ready)
    return listening, loaded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes-gb", default="0.25,0.5,1,2", help="cumulative user-topic sizes to step through")
    parser.add_argument("--commits-per-gb", type=int, default=200_000, help="offset commit requests per GB step")
    parser.add_argument("--rounds", type=int, default=5, help="SIGKILL/restart cycles per step (medians of these)")
    parser.add_argument("--recent", type=int, default=500, help="commit requests over the wire before each SIGKILL")
    parser.add_argument("--python", default=sys.executable, help="interpreter whose groupcoord the daemon runs")
    parser.add_argument("--data-dir", default=None, help="keep the data here (default: a temporary directory)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--offsets-segment-bytes", type=int, default=104857600,
                        help="offsets.topic.segment.bytes (Kafka's default 100 MiB: nothing is compacted before a roll)")
    parser.add_argument("--setting", action="append", default=[], help="extra daemon flag, e.g. --setting=--fsync=never")
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args(argv)
    configure_logging("warning")
    sizes = [float(s) for s in ns.sizes_gb.split(",")]
    with tempfile.TemporaryDirectory(prefix="restart-bench-", dir=ns.data_dir) as tmp:
        data_dir = Path(tmp) / "data"
        steps: list[Step] = []
        commits_so_far = 0
        previous_gb = 0.0
        for size in sizes:
            commits = int((size - previous_gb) * ns.commits_per_gb)
            asyncio.run(grow(data_dir, int(size * (1 << 30)), commits, commits_so_far, ns.offsets_segment_bytes))
            commits_so_far += commits
            previous_gb = size
            settings = [f"--offsets-topic-segment-bytes={ns.offsets_segment_bytes}", *ns.setting]
            listening, loaded = measure(ns.python, data_dir, ns.rounds, ns.recent, ns.timeout, settings,
                                        commit_base=10_000_000 + commits_so_far)
            step = Step(size, commits_so_far, du(data_dir, TOPIC + "-"), du(data_dir, "__consumer_offsets-"),
                        listening, loaded)
            steps.append(step)
            print(f"{size:5.2f} GB data ({step.data_bytes_on_disk / 1e9:.2f} GB on disk), {commits_so_far:>8} commits "
                  f"({step.offsets_bytes_on_disk / 1e6:6.1f} MB offsets log): restart after SIGKILL "
                  f"listening {step.listening_median:6.3f} s, coordinator loaded {step.loaded_median:6.3f} s "
                  f"(median of {ns.rounds}; max {max(loaded):.3f} s)", flush=True)
        if ns.json:
            print(json.dumps([dict(asdict(s), listening_median=s.listening_median, loaded_median=s.loaded_median)
                              for s in steps]))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
