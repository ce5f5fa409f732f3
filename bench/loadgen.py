"""Load generator over real sockets: many connections, pipelined requests, bounded in time and count.

    python -m bench.loadgen --bootstrap 127.0.0.1:9092 --request heartbeat --connections 64 --pipeline 8 --seconds 5

Works against any Kafka-protocol server (this one, Kafka, Redpanda). Connections are spread over
`--processes` worker processes (a single Python client process is usually the bottleneck), each pinned
to the cores given by `--client-cores`. Every connection keeps `--pipeline` requests in flight; answers
are matched by order (Kafka answers in order per connection) and timed from send to answer.
Prints requests/s and p50/p99/p999 latency.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import struct
import time
from collections import deque
from dataclasses import dataclass

from .requests import REQUESTS, Prepared

_SIZE = struct.Struct(">i")


class _LoadConnection(asyncio.Protocol):
    def __init__(self, frame: bytes, pipeline: int, deadline: float, budget: list[int], latencies: list[float], done: asyncio.Future) -> None:
        self.frame, self.pipeline, self.deadline = frame, pipeline, deadline
        self.budget, self.latencies, self.done = budget, latencies, done
        self.sent: deque[float] = deque()
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.answers = 0

    def connection_made(self, transport) -> None:
        self.transport = transport
        self._send(self.pipeline)

    def _send(self, n: int) -> None:
        n = min(n, self.budget[0])
        if n <= 0 or time.perf_counter() >= self.deadline:
            if not self.sent and not self.done.done():
                self.done.set_result(None)
            return
        self.budget[0] -= n
        now = time.perf_counter()
        self.sent.extend([now] * n)
        self.transport.write(self.frame * n)

    def data_received(self, data: bytes) -> None:
        buf = self.buf
        buf += data
        pos = 0
        got = 0
        now = time.perf_counter()
        while len(buf) - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if len(buf) - pos - 4 < size:
                break
            pos += 4 + size
            self.latencies.append(now - self.sent.popleft())
            got += 1
        if pos:
            del buf[:pos]
        self.answers += got
        if got:
            self._send(got)

    def connection_lost(self, exc) -> None:
        if not self.done.done():
            self.done.set_result(None)

    nbytes = 0  # answers' bytes: counted only where they are the figure (_StreamingLoadConnection)


class _StreamingLoadConnection(_LoadConnection):
    """For answers of megabytes (Fetch): each answer's size is read from its frame header and its body is
    skipped as it arrives instead of being buffered and cut out, so the client spends a small fraction of
    what the broker spends per MB and the broker is what the figure measures. The bodies are not read;
    the request's set-up checked one real answer (bench.requests)."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.head = b""
        self.skip = 0
        self.nbytes = 0

    def data_received(self, data: bytes) -> None:
        i, n, got = 0, len(data), 0
        while i < n:
            if self.skip:
                take = min(self.skip, n - i)
                self.skip -= take
                i += take
                if not self.skip:
                    got += 1
                continue
            piece = data[i:i + 4 - len(self.head)]
            self.head += piece
            i += len(piece)
            if len(self.head) == 4:
                (size,) = _SIZE.unpack(self.head)
                self.head = b""
                self.nbytes += size
                self.skip = size
                if not size:
                    got += 1
        if got:
            now = time.perf_counter()
            for _ in range(got):
                self.latencies.append(now - self.sent.popleft())
            self.answers += got
            self._send(got)


@dataclass
class WorkerResult:
    requests: int
    seconds: float
    latencies: list[float]
    nbytes: int = 0


async def _worker_main(bootstrap: str, prepared: list[Prepared], pipeline: int, seconds: float, max_requests: int) -> WorkerResult:
    loop = asyncio.get_running_loop()
    host, _, port = bootstrap.rpartition(":")
    latencies: list[float] = []
    budget = [max_requests]
    t0 = time.perf_counter()
    deadline = t0 + seconds
    conns = []
    for p in prepared:
        done = loop.create_future()
        kind = _StreamingLoadConnection if p.large_answers else _LoadConnection
        transport, proto = await loop.create_connection(
            lambda p=p, done=done, kind=kind: kind(p.frame, pipeline, deadline, budget, latencies, done), host, int(port)
        )
        conns.append((transport, proto, done))
    await asyncio.wait([d for _, _, d in conns], timeout=seconds + 30)
    elapsed = time.perf_counter() - t0
    for transport, _, _ in conns:
        transport.close()
    return WorkerResult(len(latencies), elapsed, latencies, sum(proto.nbytes for _, proto, _ in conns))


def _worker(args: tuple) -> WorkerResult:
    bootstrap, request, tags, pipeline, seconds, max_requests, cores = args
    if cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)
    prepared = [REQUESTS[request](bootstrap, tag) for tag in tags]
    try:
        import uvloop

        return uvloop.run(_worker_main(bootstrap, prepared, pipeline, seconds, max_requests))
    except ImportError:
        return asyncio.run(_worker_main(bootstrap, prepared, pipeline, seconds, max_requests))


@dataclass
class LoadResult:
    request: str
    connections: int
    pipeline: int
    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    p999_ms: float
    nbytes: int = 0  # answers' bytes, for a request whose answers are the figure (Fetch)

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def mb_s(self) -> float:
        return self.nbytes / self.seconds / 1e6 if self.seconds else 0.0

    def line(self) -> str:
        return (
            f"{self.request:<16} conns={self.connections:<4} pipeline={self.pipeline:<3} "
            f"{self.rate:>10,.0f} req/s   p50={self.p50_ms:.3f} ms  p99={self.p99_ms:.3f} ms  p999={self.p999_ms:.3f} ms"
            + (f"   {self.mb_s:,.0f} MB/s" if self.nbytes else "")
        )


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] * 1000


def add_load_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a bench that puts one request type under load against one broker (server_cpu,
    socket_profile): which request, the broker's fsync, how long, how many connections and how deep."""
    parser.add_argument("--request", default="heartbeat", choices=["heartbeat", "offset_commit", "api_versions"])
    parser.add_argument("--fsync", default="batch", choices=["never", "batch", "always"])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--pipeline", type=int, default=8)


def run_load(
    bootstrap: str,
    request: str,
    connections: int,
    pipeline: int = 8,
    seconds: float = 5.0,
    max_requests: int = 5_000_000,
    processes: int = 1,
    client_cores: list[int] | None = None,
    tag: str = "0",
) -> LoadResult:
    processes = max(1, min(processes, connections))
    per_proc = [list(range(i, connections, processes)) for i in range(processes)]
    jobs = [
        (bootstrap, request, [f"{tag}-{c}" for c in conns], pipeline, seconds, max_requests // processes, client_cores)
        for conns in per_proc
    ]
    ctx = mp.get_context("spawn")
    with ctx.Pool(processes) as pool:
        results = pool.map(_worker, jobs)
    latencies = sorted(x for r in results for x in r.latencies)
    elapsed = max(r.seconds for r in results)
    return LoadResult(
        request=request,
        connections=connections,
        pipeline=pipeline,
        requests=len(latencies),
        seconds=elapsed,
        p50_ms=_percentile(latencies, 0.50),
        p99_ms=_percentile(latencies, 0.99),
        p999_ms=_percentile(latencies, 0.999),
        nbytes=sum(r.nbytes for r in results),
    )


def parse_cores(text: str | None) -> list[int] | None:
    return [int(c) for c in text.split(",")] if text else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--request", choices=sorted(REQUESTS), default="api_versions")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--pipeline", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--max-requests", type=int, default=5_000_000)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--client-cores", default=None, help="comma-separated cores for the client processes")
    ns = parser.parse_args(argv)
    result = run_load(ns.bootstrap, ns.request, ns.connections, ns.pipeline, ns.seconds, ns.max_requests, ns.processes, parse_cores(ns.client_cores))
    print(result.line())


if __name__ == "__main__":
    main()
