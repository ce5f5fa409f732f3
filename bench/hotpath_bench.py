"""The request hot path in one process, without sockets: µs of Python per request, and where they go.

    python -m bench.hotpath_bench                      # Heartbeat and OffsetCommit, µs per request
    python -m bench.hotpath_bench --profile heartbeat  # the same under cProfile, top entries printed

A broker is started in-process (fsync as given); a connection is made on a transport that only counts
the bytes written, and pipelined frames are fed to its ``data_received`` exactly as the event loop would
hand them over. Socket and loop costs are left out on purpose: this is the part a change to the decoder,
the dispatcher, the group core or the encoder moves, measured with little noise on a busy machine. The
socket-level figures are ``bench.loadgen`` and ``bench.compare``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import itertools
import io
import pstats
import struct
import time
from typing import Any, Callable

from groupcoord.coordinator.broker import Broker, new_event_loop
from groupcoord.coordinator.ops.logging import configure_logging

try:
    from groupcoord.coordinator.ops.cli import settle_heap
except ImportError:  # an older tree (bench A/B against main)
    settle_heap = None
from groupcoord.coordinator.server.connection import KafkaConnection

from .requests import encode


_tags = itertools.count()


class CountingTransport:
    """What KafkaConnection needs of a transport; answers are counted, not kept."""

    def __init__(self) -> None:
        self.frames = 0
        self.bytes = 0
        self.last = b""
        self.waiting: tuple[int, asyncio.Future[None]] | None = None  # (frames, resolved once written)

    def write(self, data: bytes) -> None:
        self.bytes += len(data)
        self.last = data
        pos, n = 0, len(data)
        while pos < n:
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4 + size
            self.frames += 1
        if self.waiting is not None and self.frames >= self.waiting[0]:
            if not self.waiting[1].done():
                self.waiting[1].set_result(None)
            self.waiting = None

    async def written(self, frames: int) -> None:
        """Until ``frames`` answers in all were written, without spinning the loop (the CPU figure would count it)."""
        if self.frames < frames:
            future = asyncio.get_running_loop().create_future()
            self.waiting = (frames, future)
            await future

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None: ...
    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...
    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


def connect(broker: Broker) -> tuple[KafkaConnection, CountingTransport]:
    assert broker.server is not None
    conn = KafkaConnection(broker.server, "127.0.0.1")
    transport = CountingTransport()
    conn.connection_made(transport)  # type: ignore[arg-type]
    return conn, transport


async def roundtrip(conn: KafkaConnection, transport: CountingTransport, frame: bytes) -> bytes:
    before = transport.frames
    conn.data_received(frame)
    for _ in range(1000):
        if transport.frames > before:
            return transport.last
        await asyncio.sleep(0.001)
    raise TimeoutError("no answer")


async def setup_heartbeat(broker: Broker, conn: KafkaConnection, transport: CountingTransport) -> bytes:
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    group = f"hot-hb-{next(_tags)}"
    protocols = [{"name": "range", "metadata": b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"}]
    body = {"group_id": group, "session_timeout": 30000, "rebalance_timeout": 30000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "protocols": protocols, "reason": None}

    async def call(api_key: int, version: int, b: dict) -> Any:
        out = await roundtrip(conn, transport, encode(api_key, version, b))
        _, pos = parse_response_header(out[4:], api_key, True)
        return response_reader(api_key, version)(out[4:], pos)[0]

    joined = await call(11, 9, body)
    if joined.error_code == 79:
        joined = await call(11, 9, {**body, "member_id": joined.member_id})
    await call(14, 5, {"group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id,
                       "group_instance_id": None, "protocol_type": "consumer", "protocol_name": joined.protocol_name,
                       "assignments": [{"member_id": joined.member_id, "assignment": b""}]})
    hb = {"group_id": group, "generation_id": joined.generation_id, "member_id": joined.member_id,
          "group_instance_id": None}
    answer = await call(12, 4, hb)
    assert answer.error_code == 0, answer
    return encode(12, 4, hb)


async def setup_commit(broker: Broker, conn: KafkaConnection, transport: CountingTransport) -> bytes:
    topic = "hot-commits"
    await roundtrip(conn, transport, encode(19, 7, {"topics": [{"name": topic, "num_partitions": 1, "replication_factor": 1,
                                                                "assignments": [], "configs": []}],
                                                    "timeout": 10000, "validate_only": False}))
    body = {"group_id": f"hot-oc-{next(_tags)}", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 42,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
    frame = encode(8, 8, body)
    await roundtrip(conn, transport, frame)
    return frame


SETUPS: dict[str, Callable[..., Any]] = {"heartbeat": setup_heartbeat, "offset_commit": setup_commit}


async def measure_spread(broker: Broker, name: str, requests: int, connections: int, depth: int,
                         profile: cProfile.Profile | None) -> float:
    """As the socket bench loads the broker: ``connections`` connections, each with its own group (so the
    groups spread over the shards), each handed ``depth`` frames per turn of the loop."""
    made = [connect(broker) for _ in range(connections)]
    chunks = [(conn, transport, (await SETUPS[name](broker, conn, transport)) * depth) for conn, transport in made]
    per_round = connections * depth
    rounds = max(requests // per_round, 1)
    targets = [transport.frames for _, transport, _ in chunks]
    started, cpu = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    for _ in range(rounds):
        for i, (conn, transport, chunk) in enumerate(chunks):
            targets[i] += depth
            conn.data_received(chunk)
        for (_, transport, _), target in zip(chunks, targets):
            await transport.written(target)
    if profile is not None:
        profile.disable()
    n = rounds * per_round
    return (time.perf_counter() - started) / n, (time.process_time() - cpu) / n


async def measure(broker: Broker, name: str, requests: int, depth: int, profile: cProfile.Profile | None) -> float:
    conn, transport = connect(broker)
    frame = await SETUPS[name](broker, conn, transport)
    chunk = frame * depth
    target = transport.frames
    started, cpu = time.perf_counter(), time.process_time()
    if profile is not None:
        profile.enable()
    for _ in range(requests // depth):
        target += depth
        conn.data_received(chunk)
        await transport.written(target)
    if profile is not None:
        profile.disable()
    n = requests // depth * depth
    return (time.perf_counter() - started) / n, (time.process_time() - cpu) / n


async def run(names: list[str], requests: int, depth: int, fsync: str, profile: str | None, top: int,
              connections: int = 1) -> None:
    async with Broker(fsync=fsync, metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        if settle_heap is not None:
            settle_heap()  # as the daemon does once it serves
        for name in names:
            if connections > 1:
                def one(n: int, prof: cProfile.Profile | None) -> Any:
                    return measure_spread(broker, name, n, connections, depth, prof)
            else:
                def one(n: int, prof: cProfile.Profile | None) -> Any:
                    return measure(broker, name, n, depth, prof)
            await one(min(requests, 2000), None)  # warm caches and plans
            prof = cProfile.Profile() if profile == name else None
            if prof is not None:
                trials = [await one(requests, prof)]
            else:  # a shared machine: the fastest of several trials is the code's cost, the median its noise
                trials = sorted([await one(requests // 5, None) for _ in range(5)])
            per = trials[0][0]
            cpus = sorted(cpu for _, cpu in trials)
            print(f"{name}: {per * 1e6:.2f} µs per request, min of {len(trials)} (median {trials[len(trials) // 2][0] * 1e6:.2f}; "
                  f"CPU of the process {cpus[0] * 1e6:.2f} µs min, {cpus[len(cpus) // 2] * 1e6:.2f} median; "
                  f"{1 / per:,.0f} req/s in-process, {connections} connection(s) x depth {depth}, fsync={fsync})")
            if prof is not None:
                out = io.StringIO()
                pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top)
                print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--depth", type=int, default=64, help="frames per data_received (64 connections x 8 ≈ 512 in flight)")
    parser.add_argument("--connections", type=int, default=1,
                        help="connections, each with its own group, fed `depth` frames each per turn (64 x 8: the socket bench)")
    parser.add_argument("--fsync", default="never", choices=["never", "batch", "always"])
    parser.add_argument("--only", default="heartbeat,offset_commit")
    parser.add_argument("--profile", default=None, help="a request name to run under cProfile")
    parser.add_argument("--top", type=int, default=30)
    ns = parser.parse_args()
    configure_logging("warning", "json")  # the daemon logs at info; nothing on these paths logs below warning
    loop = new_event_loop()
    try:
        loop.run_until_complete(run(ns.only.split(","), ns.requests, ns.depth, ns.fsync, ns.profile, ns.top,
                                    ns.connections))
    finally:
        loop.close()


if __name__ == "__main__":
    main()
