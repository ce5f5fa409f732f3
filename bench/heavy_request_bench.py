"""One heavy request against everyone else's latency (issue 17, "one request stalls every client").

A daemon, a classic-group member heartbeating every 10 ms on its own connection (the prober), and then
``--concurrent`` heavy requests at once, each from its own connection, ``--repeat`` times: an OffsetCommit of
``--partitions`` partitions (1,000,000: about 18 MB), or with ``--kind join`` a JoinGroup of ``--protocols``
protocols with ``--metadata-bytes`` of metadata each. Prints, for each round, the heavy requests' own time,
the prober's heartbeat round trips while they ran (worst and p99: the stall they caused; issue 17 wants
≤ 100 ms), and the daemon's RSS at the baseline, at its peak and ``--settle`` seconds after (issue 17 wants
it back within 20 % of the baseline).

    .venv/bin/python -m bench.heavy_request_bench --partitions 1000000
    .venv/bin/python -m bench.heavy_request_bench --partitions 1000000 --concurrent 4
    .venv/bin/python -m bench.heavy_request_bench --kind join --protocols 100000 --metadata-bytes 100
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
import tempfile

from bench.requests import call, encode
from groupcoord.protocol.headers import parse_response_header
from groupcoord.protocol.registry import is_flexible, response_reader


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Prober(threading.Thread):
    """Join a classic group, then heartbeat every 10 ms, recording each round trip."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.samples: list[tuple[float, float]] = []  # (sent at, round trip)
        self.stop = threading.Event()
        self.ready = threading.Event()

    def run(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=120) as sock:
            body = {"group_id": "prober", "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
                    "group_instance_id": None, "protocol_type": "consumer",
                    "protocols": [{"name": "range", "metadata": b""}], "reason": None}
            joined = call(sock, 11, 9, body)
            if joined.error_code:  # MEMBER_ID_REQUIRED
                joined = call(sock, 11, 9, dict(body, member_id=joined.member_id))
            call(sock, 14, 5, {"group_id": "prober", "generation_id": joined.generation_id,
                               "member_id": joined.member_id, "group_instance_id": None, "protocol_type": "consumer",
                               "protocol_name": "range", "assignments": [{"member_id": joined.member_id,
                                                                           "assignment": b""}]})
            self.ready.set()
            beat = {"group_id": "prober", "generation_id": joined.generation_id, "member_id": joined.member_id,
                    "group_instance_id": None}
            while not self.stop.is_set():
                sent = time.perf_counter()
                try:
                    answer = call(sock, 12, 4, beat)
                except OSError:
                    if self.stop.is_set():
                        return  # the daemon went away at the end of the run
                    raise
                self.samples.append((sent, time.perf_counter() - sent))
                if answer.error_code:
                    raise RuntimeError(f"heartbeat failed: {answer.error_code}")
                time.sleep(0.01)

    def between(self, start: float, end: float) -> list[float]:
        """Round trips of the heartbeats in flight at any moment of [start, end], sorted."""
        return sorted(rtt for sent, rtt in self.samples if start <= sent + rtt and sent <= end)


def percentile(values: list[float], q: float) -> float:
    return values[min(int(len(values) * q), len(values) - 1)] if values else 0.0


def heavy_commit(partitions: int, group: str) -> bytes:
    return encode(8, 8, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                         "group_instance_id": None, "topics": [{"name": "orders", "partitions": [
                             {"partition_index": p, "committed_offset": p, "committed_leader_epoch": -1,
                              "committed_metadata": ""} for p in range(partitions)]}]})


def heavy_join(protocols: int, metadata_bytes: int, group: str) -> bytes:
    return encode(11, 9, {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000,
                          "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
                          "protocols": [{"name": f"p{n}", "metadata": bytes(metadata_bytes)} for n in range(protocols)],
                          "reason": None})


def send_and_wait(port: int, frame: bytes) -> tuple[float, bytes]:
    """The answer's bytes, left undecoded: decoding a million partitions holds this process's GIL for a
    while, which would stall the prober thread and be counted as the broker's stall."""
    with socket.create_connection(("127.0.0.1", port), timeout=600) as sock:
        started = time.perf_counter()
        sock.sendall(frame)
        size = struct.unpack(">i", _read(sock, 4))[0]
        data = _read(sock, size)
        return time.perf_counter() - started, data


def decode_answer(data: bytes, api_key: int, version: int) -> object:
    _, pos = parse_response_header(data, api_key, is_flexible(api_key, version))
    return response_reader(api_key, version)(data, pos)[0]


def _read(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return bytes(buf)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", choices=["commit", "join"], default="commit")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--topic-partitions", type=int, default=1,
                        help="partitions the committed topic really has: the commit stores an offset for each of "
                             "them and answers UNKNOWN_TOPIC_OR_PARTITION (3) for the rest, as Kafka does")
    parser.add_argument("--protocols", type=int, default=100_000)
    parser.add_argument("--metadata-bytes", type=int, default=100)
    parser.add_argument("--concurrent", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=5.0)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", action="store_true")
    ns = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="heavy-bench-") as tmp:
        proc = subprocess.Popen([ns.python, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--data-dir", tmp,
                                 "--metrics-port", "0", "--log-level", "warning", "--group-initial-rebalance-delay-ms",
                                 "0", "--log-format", "console"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        try:
            port = 0
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("listening on"):
                    port = int(line.rsplit(":", 1)[1])
                    break
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            with socket.create_connection(("127.0.0.1", port)) as sock:
                call(sock, 19, 7, {"topics": [{"name": "orders", "num_partitions": ns.topic_partitions,
                                               "replication_factor": 1,
                                               "assignments": [], "configs": []}], "timeout_ms": 30000,
                                   "validate_only": False})
            prober = Prober(port)
            prober.start()
            prober.ready.wait(60)
            time.sleep(1.0)
            quiet_from = time.perf_counter()
            time.sleep(3.0)
            quiet = prober.between(quiet_from, time.perf_counter())
            print(f"quiet machine check: {len(quiet)} heartbeats in 3 s with no heavy request, worst "
                  f"{percentile(quiet, 1.0) * 1000:.1f} ms, p99 {percentile(quiet, 0.99) * 1000:.1f} ms", flush=True)
            baseline = rss_kib(proc.pid)
            if ns.kind == "commit":
                frames = [heavy_commit(ns.partitions, f"heavy-{n}") for n in range(ns.concurrent)]
                key, version = 8, 8
                stored = min(ns.partitions, ns.topic_partitions)
                what = (f"{ns.partitions}-partition OffsetCommit ({len(frames[0]) / 1e6:.1f} MB, "
                        f"{stored} of them stored)")
            else:
                frames = [heavy_join(ns.protocols, ns.metadata_bytes, f"heavy-{n}") for n in range(ns.concurrent)]
                key, version = 11, 9
                what = f"{ns.protocols}-protocol JoinGroup ({len(frames[0]) / 1e6:.1f} MB)"
            if ns.concurrent > 1:
                what = f"{ns.concurrent} x {what}"
            rows = []
            for n in range(ns.repeat):
                peak = [baseline]
                done = threading.Event()

                def watch() -> None:
                    while not done.is_set():
                        peak[0] = max(peak[0], rss_kib(proc.pid))
                        time.sleep(0.01)

                threading.Thread(target=watch, daemon=True).start()
                results: list[tuple[float, bytes]] = [None] * len(frames)  # type: ignore[list-item]

                def one(i: int) -> None:
                    results[i] = send_and_wait(port, frames[i])

                started = time.perf_counter()
                senders = [threading.Thread(target=one, args=(i,)) for i in range(len(frames))]
                for t in senders:
                    t.start()
                for t in senders:
                    t.join()
                ended = time.perf_counter()
                done.set()
                errors: set[int] = set()
                for _elapsed, data in results:
                    answer = decode_answer(data, key, version)
                    if key == 8:
                        errors |= {int(p.error_code) for t in answer.topics for p in t.partitions}
                    else:
                        errors.add(int(answer.error_code))
                time.sleep(ns.settle)
                beats = prober.between(started, ended)
                rows.append({"request_s": round(max(r[0] for r in results), 3),
                             "heartbeats": len(beats),
                             "worst_heartbeat_ms": round(percentile(beats, 1.0) * 1000, 1),
                             "p99_heartbeat_ms": round(percentile(beats, 0.99) * 1000, 1),
                             "errors": sorted(errors), "rss_peak_mib": round(peak[0] / 1024, 1),
                             "rss_after_mib": round(rss_kib(proc.pid) / 1024, 1)})
                row = rows[-1]
                print(f"{what} #{n + 1}: {row['request_s']} s; {row['heartbeats']} heartbeats meanwhile, worst "
                      f"{row['worst_heartbeat_ms']} ms, p99 {row['p99_heartbeat_ms']} ms; RSS baseline "
                      f"{baseline / 1024:.1f} MiB, peak {row['rss_peak_mib']} MiB, {ns.settle:g} s after "
                      f"{row['rss_after_mib']} MiB ({(row['rss_after_mib'] * 1024 / baseline - 1) * 100:+.0f} %) "
                      f"(error codes {row['errors']})", flush=True)
            prober.stop.set()
            if ns.json:
                print(json.dumps({"baseline_rss_mib": round(baseline / 1024, 1), "rows": rows}))
        finally:
            proc.kill()
            proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
