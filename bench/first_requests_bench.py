"""The first requests' latency on a fresh daemon: Metadata, Fetch and JoinGroup, as a client's first of each.

    python -m bench.first_requests_bench --runs 5                 # requests sent as soon as the daemon listens
    python -m bench.first_requests_bench --runs 5 --after 2       # ... 2 s after (the warm-up done)
    python -m bench.first_requests_bench --python /work/main/.venv/bin/python   # another tree's daemon

Each run starts ``python -m groupcoord serve`` on an empty data dir (bytecode compiled once, as
bench/startup_bench.py does), waits for its `listening on` line (and ``--after`` seconds), then sends, on one
connection, Metadata v12 (creating the topic), Fetch v16 (that topic, by id), JoinGroup v5 (a new member: answered
MEMBER_ID_REQUIRED), each twice: the first pays whatever the daemon still has to import for it, the second
is the steady state. These are librdkafka's versions. The client's own encoders and readers are built before
the daemon starts, so only the daemon's time is in the figures. Prints each request's median first and second
round trip in ms, and the medians from exec to `listening on` and to the first Metadata's answer.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.registry import response_reader

from .requests import call, encode
from .servers import _LISTENING, stop

TOPIC = "first-requests"


def metadata() -> dict:
    return {"topics": [{"topic_id": uuid.UUID(int=0), "name": TOPIC}], "allow_auto_topic_creation": True,
            "include_topic_authorized_operations": False}


def fetch(topic_id: uuid.UUID) -> dict:
    return {"replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
            "session_id": 0, "session_epoch": -1, "rack_id": "",
            "topics": [{"topic_id": topic_id, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": []}


def join_group() -> dict:
    return {"group_id": TOPIC, "session_timeout": 10_000, "rebalance_timeout": 10_000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"}]}


REQUESTS = (("Metadata", ApiKey.METADATA, 12), ("Fetch", ApiKey.FETCH, 16), ("JoinGroup", ApiKey.JOIN_GROUP, 5))


def _warm_the_client() -> None:
    """Build this process's encoders and readers, so the round trips measure the daemon only."""
    for body, (_, key, version) in zip((metadata(), fetch(uuid.uuid4()), join_group()), REQUESTS):
        encode(key, version, body)
        response_reader(key, version)


def one_run(python: str, cwd: str | None, after: float, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """{request: (first, second) round trip in ms} on a fresh daemon; also "listening" (exec to the line) and
    "answered" (exec to the first Metadata's answer), as (ms, ms)."""
    with tempfile.TemporaryDirectory(prefix="groupcoord-first-") as data:
        cmd = [python, "-m", "groupcoord", "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--fsync", "batch",
               "--metrics-port", "0", "--log-level", "warning", "--log-format", "json"]
        t_exec = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=cwd, env=env)
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                found = _LISTENING.search(line)
                if found:
                    break
            else:
                raise RuntimeError("the daemon did not say 'listening on'")
            host, port = line.split()[-1].rsplit(":", 1)
            listening = (time.perf_counter() - t_exec) * 1000
            time.sleep(after)
            sock = socket.create_connection((host, int(port)))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            times: dict[str, tuple[float, float]] = {}
            topic_id = None
            for name, key, version in REQUESTS:
                rtts = []
                for _ in range(2):
                    body = metadata() if key == ApiKey.METADATA else fetch(topic_id) if key == ApiKey.FETCH else join_group()
                    t0 = time.perf_counter()
                    answer = call(sock, key, version, body)
                    rtts.append((time.perf_counter() - t0) * 1000)
                    if key == ApiKey.METADATA:
                        topic_id = answer.topics[0].topic_id
                        if not rtts[1:]:
                            answered = (time.perf_counter() - t_exec) * 1000
                times[name] = (rtts[0], rtts[1])
            sock.close()
            times["exec to"] = (listening, answered)
            return times
        finally:
            stop(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--after", type=float, default=0.0, help="seconds to wait after `listening on`")
    parser.add_argument("--python", default=sys.executable, help="the daemon's interpreter (its venv's groupcoord)")
    parser.add_argument("--cwd", default=None)
    ns = parser.parse_args()
    _warm_the_client()
    with tempfile.TemporaryDirectory(prefix="groupcoord-first-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        one_run(ns.python, ns.cwd, 2.0, env)  # uncounted: writes the bytecode
        runs = [one_run(ns.python, ns.cwd, ns.after, env) for _ in range(max(1, ns.runs))]
    print(f"daemon {ns.python}, requests {ns.after:g} s after `listening on`, {len(runs)} runs")
    print(f"from exec: `listening on` {statistics.median(r['exec to'][0] for r in runs):.0f} ms, the first Metadata "
          f"answered {statistics.median(r['exec to'][1] for r in runs):.0f} ms (medians)")
    for name, _, version in REQUESTS:
        first = statistics.median(r[name][0] for r in runs)
        second = statistics.median(r[name][1] for r in runs)
        print(f"{name} v{version}: first {first:.1f} ms, second {second:.1f} ms "
              f"(firsts {', '.join(f'{r[name][0]:.1f}' for r in runs)})")


if __name__ == "__main__":
    main()
