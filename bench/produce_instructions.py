"""Instructions the broker executes per Produce request and per partition append, at the shape of franz-go's
TestGroupETL (valgrind callgrind's Ir count, every thread): idempotent producers, acks=-1, each request ~13
partitions of topics of 11, one raw-snappy batch of 20 small records per partition.

    python -m bench.produce_instructions                        # this tree, fsync=batch then never, 3 runs
    python -m bench.produce_instructions --fsync never          # one policy
    python -m bench.produce_instructions --ab /work/main --ab-python /work/main/.venv/bin/python

Why instructions, why in process: as bench.heartbeat_instructions and bench.commit_instructions (whose parent side
this reuses): the CPU time of the same command varies 2x between processes on the shared machine, the instructions
executed for the same work are nearly deterministic. The ETL run keeps the daemon at 100 % of a core with ~400
Produce requests/s of ~13 partition appends each: what one append costs the interpreter is the figure to lower.

What a request costs here: its frame read and decoded (kio), every partition's batch validated (CRC, header
rules, the snappy payload's bounded size check, the records' timestamps against the topic's window), the
producer's sequence checked and recorded, the append's offsets assigned and its bytes queued, written by the
storage thread (and, under fsync=batch, made durable by a shared ``syncfs`` round), the answer encoded and written.

How: a child process runs under ``valgrind --tool=callgrind`` with the tree to measure first on its path. It starts
an embedded broker with the fsync policy asked (its logs in a temporary directory), freezes the heap as the daemon
does, creates ``TOPICS`` topics of ``PARTITIONS`` partitions and, per connection, one idempotent producer
(InitProducerId). Every Produce frame of the run is encoded before the measurement (through kio, as a client
would send it: v11, acks=-1), each producer's sequences advancing per partition: request ``r`` of connection ``c``
covers ``PER_REQUEST`` consecutive partitions of the flat list of all partitions, starting at
``(c + r) * PER_REQUEST``, grouped by topic. A round hands every connection's ``data_received`` its next ``depth``
frames, then the loop runs until every connection has been answered all of them (the last answer resolves the
round's future: no polling). The parent zeroes the child's counters before the measured rounds and dumps them
after; the figure is divided by the requests fed and by the partition appends they carried.

The child then reads every answer with kio: every partition NONE, and every partition's base offsets exactly
those following the warm-up's, 20 apart (each batch appended once, none lost), else the run fails (a broker
answering errors is fast). The harness's own Python is the transport's ``write`` (a few lines per write) and
the round's loop.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
FSYNCS = ("batch", "never")
TOPICS = 4
PARTITIONS = 11
PER_REQUEST = 13
RECORDS = 20
VALUE = bytes(range(64))
PRODUCE_VERSION = 11


# --------------------------------------------------------------------------- the child (under valgrind)


class AnswerSink:
    """The transport a connection writes its answers to: ``write`` keeps the data and counts the frames in it
    (answers are written whole); once the round's count is reached it tells ``finished``."""

    def __init__(self, finished: Callable[[], None]) -> None:
        self.written: list[bytes] = []
        self.owed = 0
        self._finished = finished
        self.get_write_buffer_size = (0).__index__

    def write(self, data: Any) -> None:
        data = bytes(data)
        self.written.append(data)
        pos, n = 0, len(data)
        while pos < n:
            pos += 4 + int.from_bytes(data[pos:pos + 4], "big")
            self.owed -= 1
        if self.owed == 0:
            self._finished()

    def writelines(self, parts: Any) -> None:
        self.write(b"".join(parts))

    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


def snappy_batch(first_key: int, producer_id: int, epoch: int, sequence: int) -> bytes:
    """One v2 batch as franz-go sends it with snappy: ``RECORDS`` records (6-digit keys, 64-byte values), the
    records section in raw (unframed) snappy, the producer's id, epoch and first sequence."""
    import cramjam

    from groupcoord.protocol.crc import crc32c
    from groupcoord.protocol.record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER_SIZE, LOG_OVERHEAD, encode_batch

    plain = encode_batch([(b"%06d" % (first_key + i), VALUE, ()) for i in range(RECORDS)],
                         producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence)
    out = bytearray(plain[:HEADER_SIZE]) + bytes(cramjam.snappy.compress_raw(plain[HEADER_SIZE:]))
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    struct.pack_into(">h", out, ATTRIBUTES_OFFSET, struct.unpack_from(">h", out, ATTRIBUTES_OFFSET)[0] | 2)
    struct.pack_into(">I", out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def topic_name(t: int) -> str:
    return f"etl-{t}"


def produce_frames(connection: int, count: int, producer_id: int, epoch: int) -> list[bytes]:
    """The connection's ``count`` Produce frames, in order, its sequences advancing per partition."""
    from bench.requests import encode

    everywhere = [(t, p) for t in range(TOPICS) for p in range(PARTITIONS)]
    sequences: dict[tuple[int, int], int] = {}
    frames = []
    for r in range(count):
        start = (connection + r) * PER_REQUEST
        chosen = [everywhere[(start + i) % len(everywhere)] for i in range(PER_REQUEST)]
        topics: dict[int, list[dict]] = {}
        for t, p in chosen:
            seq = sequences.get((t, p), 0)
            sequences[(t, p)] = seq + RECORDS
            topics.setdefault(t, []).append({"index": p, "records": snappy_batch(seq, producer_id, epoch, seq)})
        body = {"transactional_id": None, "acks": -1, "timeout": 30000,
                "topic_data": [{"name": topic_name(t), "partition_data": parts} for t, parts in topics.items()]}
        frames.append(encode(0, PRODUCE_VERSION, body, correlation_id=r))
    return frames


def check_answers(sinks: list[AnswerSink], expected: int, next_offsets: dict[tuple[str, int], int]) -> int:
    """Every answer read by kio: each partition NONE; every partition's base offsets ``next_offsets``'s (0 at
    first), then 20 more each time, without a gap or a repeat (``next_offsets`` is moved past them). Returns the
    partition appends answered (the run stops on anything else)."""
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    read = response_reader(0, PRODUCE_VERSION)
    offsets: dict[tuple[str, int], list[int]] = {}
    answers = 0
    for sink in sinks:
        data = b"".join(sink.written)
        pos = 0
        while pos < len(data):
            (size,) = struct.unpack_from(">i", data, pos)
            frame = data[pos + 4:pos + 4 + size]
            pos += 4 + size
            answers += 1
            _, at = parse_response_header(frame, 0, True)
            for topic in read(frame, at)[0].responses:
                for part in topic.partition_responses:
                    if int(part.error_code) != 0:
                        raise SystemExit(f"a partition refused: {topic.name}-{part.index}: {part!r}")
                    offsets.setdefault((str(topic.name), int(part.index)), []).append(int(part.base_offset))
    if answers != expected:
        raise SystemExit(f"{answers} answers to {expected} requests")
    appends = 0
    for where, got in offsets.items():
        first = next_offsets.get(where, 0)
        if sorted(got) != list(range(first, first + RECORDS * len(got), RECORDS)):
            raise SystemExit(f"{where}: base offsets {sorted(got)[:10]}... are not {first}, {first + RECORDS}, ...")
        next_offsets[where] = first + RECORDS * len(got)
        appends += len(got)
    return appends


async def _child(fsync: str, connections: int, depth: int, rounds: int, warm_rounds: int,
                 handshake: Callable[[str], None]) -> str:
    import asyncio

    from bench.hotpath_bench import connect, roundtrip  # the measured tree's (as bench.heartbeat_instructions)
    from bench.requests import encode
    from groupcoord.coordinator.broker import Broker
    from groupcoord.coordinator.ops.cli import settle_heap
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    async with Broker(fsync=fsync, metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        settle_heap()
        made = [connect(broker) for _ in range(connections)]
        conn, transport = made[0]
        await roundtrip(conn, transport, encode(19, 7, {
            "topics": [{"name": topic_name(t), "num_partitions": PARTITIONS, "replication_factor": 1,
                        "assignments": [], "configs": []} for t in range(TOPICS)],
            "timeout": 10000, "validate_only": False}))
        feeds = []
        for c, (conn, transport) in enumerate(made):
            answer = await roundtrip(conn, transport, encode(22, 5, {
                "transactional_id": None, "transaction_timeout": -1, "producer_id": -1, "producer_epoch": -1}))
            _, at = parse_response_header(answer[4:], 22, True)
            init = response_reader(22, 5)(answer[4:], at)[0]
            if int(init.error_code) != 0:
                raise SystemExit(f"InitProducerId failed: {init!r}")
            frames = produce_frames(c, (warm_rounds + rounds) * depth, int(init.producer_id), int(init.producer_epoch))
            feeds.append((conn, [b"".join(frames[i:i + depth]) for i in range(0, len(frames), depth)]))
        loop = asyncio.get_running_loop()
        state: dict[str, Any] = {"left": 0, "done": None}

        def finished() -> None:
            state["left"] -= 1
            if state["left"] == 0:
                state["done"].set_result(None)

        sinks = []
        for conn, _ in feeds:
            sink = AnswerSink(finished)
            conn.transport = sink  # type: ignore[assignment]
            sinks.append(sink)
        chunks = [chunks for _, chunks in feeds]
        receivers = [conn.data_received for conn, _ in feeds]

        async def feed(first: int, n: int) -> None:
            for r in range(first, first + n):
                state["left"] = connections
                state["done"] = loop.create_future()
                for sink in sinks:
                    sink.owed = depth
                for data_received, mine in zip(receivers, chunks):
                    data_received(mine[r])
                await asyncio.wait_for(state["done"], 600)

        await feed(0, warm_rounds)
        next_offsets: dict[tuple[str, int], int] = {}
        check_answers(sinks, warm_rounds * depth * connections, next_offsets)
        for sink in sinks:
            sink.written.clear()
        handshake("ready")  # the parent zeroes the counters
        started, cpu = time.perf_counter(), time.process_time()
        await feed(warm_rounds, rounds)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        handshake("done")  # the parent dumps the counters

        fed = rounds * connections * depth
        appends = check_answers(sinks, fed, next_offsets)  # (from where the warm-up left the offsets)
        if appends != fed * PER_REQUEST:
            raise SystemExit(f"{appends} partition appends answered, {fed * PER_REQUEST} fed")
        return f"ok {fed} {appends} {wall / fed * 1e6:.2f} {cpu / fed * 1e6:.2f}"


def _heartbeat_bench() -> dict[str, Any]:
    """This tree's bench.heartbeat_instructions, read from beside this file: the child runs in the measured
    tree, whose `bench` package may be older than this one."""
    import runpy

    return runpy.run_path(str(HERE.parent / "heartbeat_instructions.py"))


def child_main(ns: argparse.Namespace) -> None:
    run_child = _heartbeat_bench()["run_child"]
    rounds = max(1, ns.requests // (ns.connections * ns.depth))
    run_child(lambda handshake: _child(ns.fsync, ns.connections, ns.depth, rounds, ns.warm_rounds, handshake))


# --------------------------------------------------------------------------- the parent


def one_run(tree: Path, python: str, fsync: str, requests: int, connections: int, depth: int, warm_rounds: int,
            valgrind: bool = True, keep: str | None = None) -> tuple[float | None, float | None, float, float]:
    """(instructions per request and per partition append, or Nones without valgrind; wall µs, CPU µs per
    request of the child)."""
    from bench.heartbeat_instructions import count_child

    args = ("--requests", str(requests), "--connections", str(connections), "--depth", str(depth),
            "--warm-rounds", str(warm_rounds), "--fsync", fsync)
    total, (fed, appends, wall, cpu) = count_child(tree, python, HERE, args, valgrind=valgrind, keep=keep)
    if total is None:
        return None, None, float(wall), float(cpu)
    return total / int(fed), total / int(appends), float(wall), float(cpu)


def main() -> None:
    heartbeat_bench = _heartbeat_bench()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    heartbeat_bench["add_run_arguments"](parser, "produce", warm_rounds=4)
    parser.set_defaults(requests=384, connections=8, depth=3)
    parser.add_argument("--fsync", default=",".join(FSYNCS), help="policies measured, each in every run (batch,never)")
    ns = parser.parse_args()
    if ns.child:
        if ns.fsync not in FSYNCS:
            raise SystemExit(f"--fsync {ns.fsync}: one of {FSYNCS} in the child")
        child_main(ns)
        return
    fsyncs = [f for f in ns.fsync.split(",") if f]
    if not fsyncs or any(f not in FSYNCS for f in fsyncs):
        raise SystemExit(f"--fsync: a comma-separated list of {FSYNCS}")
    sides = heartbeat_bench["sides_of"](ns, TREE)
    per_request: dict[tuple[str, str], list[float]] = {(name, f): [] for name, _, _ in sides for f in fsyncs}
    per_append: dict[tuple[str, str], list[float]] = {(name, f): [] for name, _, _ in sides for f in fsyncs}
    for run in range(max(1, ns.runs)):
        for fsync in fsyncs:
            for name, tree, python in sides:
                request, append, wall, cpu = one_run(
                    tree, python, fsync, ns.requests, ns.connections, ns.depth, ns.warm_rounds,
                    valgrind=not ns.no_valgrind, keep=heartbeat_bench["kept_dump"](ns, name, fsync, run + 1))
                count = ("" if request is None else
                         f"{request:,.0f} instructions per request, {append:,.0f} per partition append; ")
                print(f"{name} fsync={fsync} run {run + 1}: {count}{wall:.2f} µs wall, {cpu:.2f} µs CPU per request"
                      f"{' (under valgrind)' if request is not None else ''}; {ns.connections} connections x depth "
                      f"{ns.depth} x {PER_REQUEST} partitions ({time.strftime('%H:%M:%S', time.gmtime())} UTC, "
                      f"load {os.getloadavg()[0]:.2f})", flush=True)
                if request is not None:
                    per_request[(name, fsync)].append(request)
                    per_append[(name, fsync)].append(append)
    summary = heartbeat_bench["median_summary"]
    for fsync in fsyncs:
        if all(per_request[(name, fsync)] for name, _, _ in sides):
            print(f"fsync={fsync} per request: {summary({n: per_request[(n, fsync)] for n, _, _ in sides})}")
            print(f"fsync={fsync} per partition append: {summary({n: per_append[(n, fsync)] for n, _, _ in sides})}",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
