"""Instructions and system calls the broker spends per Fetch of a consumer tailing many partitions of small batches
(franz-go's TestGroupETL: topics of 11 partitions, small produced batches, consumers at the log end).

    python -m bench.fetch_instructions                                  # this tree, both shapes, 3 runs
    python -m bench.fetch_instructions --shape tail --runs 5
    python -m bench.fetch_instructions --ab /work/main                  # alternating: that tree, this tree
    python -m bench.fetch_instructions --syscalls                       # system calls per fetch (strace), no counts

Why instructions: as bench.heartbeat_instructions (whose parent side this reuses): the CPU time of the same command
varies 2x between processes on the shared machine; the instructions executed for the same work are nearly
deterministic. Callgrind counts every thread, so the executor threads' reads are in the figure; the kernel's
work (the preads' copies, the wake-ups) is not, which is why the system calls are counted as well.

The load: an embedded broker (fsync=never) with one topic of ``--partitions`` partitions, each filled with
``--batches`` batches of 20 uncompressed records of 70-byte values (about 1.7 KB a batch, the log's default
4 KB index interval; ``--records-per-batch 1`` makes them ~100 bytes, TestGroupETL's), appended by the broker (so
their CRCs are checked already and a plaintext listener's read is the region path, ``segment_reads.read_region``,
as for a client over TCP). ``--connections`` connections each send a Fetch v16 as franz-go does (topic ids,
max_wait 5 s, min_bytes 1, fetch max 50 MiB, partition max 1 MiB, no session) for every partition, each round one
fetch per connection, the loop run until each is answered:

- ``tail``: every partition from 3 batches before its end (a consumer at the log end, woken by appends: the
  TestGroupETL case);
- ``wake``: every partition from its end, so that each fetch parks in the purgatory; once all are parked, one
  batch is appended to one partition (the next in turn, by the log's ``append``: its cost is in the figure, the
  same on both sides of an A/B) and wakes them, and each answers that batch with the others' watermarks (the
  TestGroupETL pattern: a consumer at the log end woken by a producer's append). Each round's frames name the
  ends as they will be, made before the counters are zeroed;
- ``middle``: every partition from its middle (a consumer catching up: 1 MiB per partition, answered as file
  regions; the test's transport has no socket, so the connection reads the regions' bytes, one pread each, as
  under TLS: the same on both sides of an A/B).

The answers are checked: in the warm-up kio reads every partition as NONE with records (else the run fails), and
every measured answer has the warm-up answer's size. Instructions are per fetch and per partition read (the
fetch's figure over ``--partitions``).

``--syscalls`` runs the child under ``strace -f`` instead and counts, by name, the system calls of every thread
between the child's "ready" and "done" lines (the preads, the executor's wake-ups of the loop, the loop's
polls), per fetch.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
SHAPES = ("tail", "middle", "wake")
TOPIC = "etl"
RECORDS_PER_BATCH = 20
VALUE_BYTES = 70
TAIL_BATCHES = 3
APPEND_BATCHES = 100  # batches per log.append while filling (set-up only)
PARTITION_MAX_BYTES = 1 << 20
FETCH_MAX_BYTES = 50 << 20
MAX_WAIT_MS = 5000
WAKE_MAX_WAIT_MS = 3_600_000  # the wake shape's: franz-go's 5 s runs out under valgrind before the append wakes it


# --------------------------------------------------------------------------- the child (under valgrind or strace)


class SizeSink:
    """The transport a connection writes its answers to, counting bytes without copying them (a fetch's answer
    is records views the size of the answer; a copy would be counted as the broker's work). ``keep`` keeps the
    answers' bytes (the warm-up's, to be checked); ``owed`` counts down the round's bytes and tells
    ``finished`` when this connection's answer is all written."""

    def __init__(self, finished: Callable[[], None]) -> None:
        self.sizes: list[int] = []
        self.kept: list[bytes] = []
        self.keep = False
        self.owed = 0
        self._finished = finished
        self.get_write_buffer_size = (0).__index__

    def write(self, data: Any) -> None:
        self.writelines((data,))

    def writelines(self, parts: Any) -> None:
        size = 0
        for part in parts:
            size += len(part)
            if self.keep:
                self.kept.append(bytes(part))
        self.sizes.append(size)
        self.owed -= size
        if self.owed <= 0:
            self._finished()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default  # no socket: a region is read (file_sender.read_regions)

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None: ...
    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


def _answered_connections(broker: Any, connections: int, connect: Callable[[Any], Any],
                          ) -> tuple[dict[str, Any], list[SizeSink], list[Callable[[bytes], None]]]:
    """``connections`` connections to ``broker`` whose answers go to SizeSinks: (the round's state, whose
    ``done`` future is resolved when ``left`` answers have come; the sinks; each connection's data_received)."""
    state: dict[str, Any] = {"left": 0, "done": None}

    def finished() -> None:
        state["left"] -= 1
        if state["left"] == 0:
            state["done"].set_result(None)

    made = [connect(broker) for _ in range(connections)]
    sinks = []
    for conn, _ in made:
        sink = SizeSink(finished)
        conn.transport = sink  # type: ignore[assignment]
        sinks.append(sink)
    return state, sinks, [conn.data_received for conn, _ in made]


def _one_batch(per_batch: int) -> bytes:
    """The batch every append of the load writes (the broker assigns its offsets): ``per_batch`` records."""
    from groupcoord.protocol.record_batch import encode_batch

    return encode_batch([(b"key-%02d" % i, bytes([i]) * VALUE_BYTES, ()) for i in range(per_batch)],
                        base_timestamp=1_700_000_000_000)


async def _fill(broker: Any, partitions: int, batches: int, per_batch: int) -> tuple[Any, list[int]]:
    """The topic made and filled (one encoded batch appended again and again: the broker assigns its offsets);
    returns the topic id and each partition's high watermark."""
    catalog = broker.dataplane.topics
    await catalog.create(TOPIC, partitions, 1)
    one = _one_batch(per_batch)
    ends = []
    for partition in range(partitions):
        log = catalog.log(TOPIC, partition)
        left = batches
        while left:
            n = min(left, APPEND_BATCHES)
            await log.append(one * n)
            left -= n
        ends.append(log.high_watermark)
    return catalog.get(TOPIC).topic_id, ends


def fetch_frame(topic_id: Any, offsets: list[int], max_wait_ms: int = MAX_WAIT_MS) -> bytes:
    """A Fetch v16 as franz-go sends it (no session: the session's bookkeeping is not what is measured)."""
    from bench.requests import encode

    body = {"replica_id": -1, "max_wait": max_wait_ms, "min_bytes": 1, "max_bytes": FETCH_MAX_BYTES,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
            "topics": [{"topic_id": topic_id, "partitions": [
                {"partition": p, "current_leader_epoch": -1, "fetch_offset": offset, "last_fetched_epoch": -1,
                 "log_start_offset": -1, "partition_max_bytes": PARTITION_MAX_BYTES}
                for p, offset in enumerate(offsets)]}]}
    return encode(1, 16, body)


def _checked(answer: bytes, partitions: int, with_records: int | None = None) -> None:
    """kio reads ``answer`` (a whole Fetch v16 frame) as NONE with records for every partition (or, with
    ``with_records``, for that partition only), else the run stops."""
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    _, pos = parse_response_header(answer[4:], 1, True)
    read = response_reader(1, 16)(answer[4:], pos)[0]
    parts = [p for t in read.responses for p in t.partitions]
    if int(read.error_code) or len(parts) != partitions or any(
            int(p.error_code) or bool(p.records) != (with_records is None or p.partition_index == with_records)
            for p in parts):
        raise SystemExit(f"the fetch was not answered with the records expected: {read!r}"[:2000])


async def _child(shape: str, partitions: int, batches: int, connections: int, rounds: int, warm_rounds: int,
                 per_batch: int, handshake: Callable[[str], None]) -> str:
    import asyncio

    from bench.hotpath_bench import connect  # the measured tree's
    from groupcoord.coordinator.broker import Broker
    from groupcoord.coordinator.ops.cli import settle_heap

    async with Broker(fsync="never", metrics_port=0) as broker:
        topic_id, ends = await _fill(broker, partitions, batches, per_batch)
        if shape == "wake":
            return await _wake_child(broker, topic_id, ends, connections, rounds, warm_rounds, per_batch, handshake)
        back = TAIL_BATCHES * per_batch
        offsets = [end - back if shape == "tail" else (end // per_batch // 2) * per_batch for end in ends]
        frame = fetch_frame(topic_id, offsets)
        settle_heap()
        loop = asyncio.get_running_loop()
        state, sinks, feeds = _answered_connections(broker, connections, connect)

        async def feed(n: int, owed: int) -> None:
            for _ in range(n):
                state["left"] = connections
                state["done"] = loop.create_future()
                for sink in sinks:
                    sink.owed = owed
                for data_received in feeds:
                    data_received(frame)
                await asyncio.wait_for(state["done"], 60.0 * 10)

        # The first round learns the answer's size and checks it (set-up only, bounded).
        for sink in sinks:
            sink.keep = True
            sink.owed = 1 << 60
        for data_received in feeds:
            data_received(frame)
        for _ in range(60_000):
            if all(sink.sizes for sink in sinks):
                break
            await asyncio.sleep(0.001)
        else:
            raise SystemExit("the first fetches were not all answered")
        answers = {b"".join(sink.kept) for sink in sinks}
        if len(answers) != 1:
            raise SystemExit("the connections were answered differently")
        answer = answers.pop()
        _checked(answer, partitions)
        size = len(answer)
        for sink in sinks:
            sink.keep = False
            sink.kept.clear()
            sink.sizes.clear()
        await feed(warm_rounds, size)
        for sink in sinks:
            sink.sizes.clear()
        handshake("ready")  # the parent zeroes the counters
        started, cpu = time.perf_counter(), time.process_time()
        await feed(rounds, size)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        handshake("done")  # the parent dumps the counters

        fed = rounds * connections
        got = [s for sink in sinks for s in sink.sizes]
        if len(got) != fed or any(s != size for s in got):
            raise SystemExit(f"{len(got)} answers to {fed} fetches, or of another size than {size}")
        return f"ok {fed} {wall / fed * 1e6:.2f} {cpu / fed * 1e6:.2f} {size}"


async def _wake_child(broker: Any, topic_id: Any, ends: list[int], connections: int, rounds: int, warm_rounds: int,
                      per_batch: int, handshake: Callable[[str], None]) -> str:
    """The ``wake`` shape: each round, every connection's fetch at the log ends parked, then one batch appended to
    partition ``round % partitions``, which answers them all."""
    import asyncio

    from bench.hotpath_bench import connect  # the measured tree's
    from groupcoord.coordinator.ops.cli import settle_heap

    partitions = len(ends)
    one = _one_batch(per_batch)
    total = 1 + warm_rounds + rounds
    frames, at = [], list(ends)
    for r in range(total):
        frames.append(fetch_frame(topic_id, at, WAKE_MAX_WAIT_MS))
        at[r % partitions] += per_batch
    catalog = broker.dataplane.topics
    purgatory = broker.dataplane.purgatory
    loop = asyncio.get_running_loop()
    state, sinks, feeds = _answered_connections(broker, connections, connect)
    settle_heap()

    async def one_round(r: int, owed: int) -> None:
        state["left"] = connections
        state["done"] = loop.create_future()
        for sink in sinks:
            sink.owed = owed
        for data_received in feeds:
            data_received(frames[r])
        for _ in range(10_000):
            if purgatory.parked == connections:
                break
            await asyncio.sleep(0)
        else:
            raise SystemExit("the fetches did not park")
        await catalog.log(TOPIC, r % partitions).append(one)
        if r:
            await asyncio.wait_for(state["done"], 60.0 * 10)
            return
        for _ in range(60_000):  # the first round: its size is not known yet (set-up only, bounded)
            if all(sink.sizes for sink in sinks):
                return
            await asyncio.sleep(0.001)
        raise SystemExit("the first fetches were not all answered")

    for sink in sinks:
        sink.keep = True
    await one_round(0, 1 << 60)
    answers = {b"".join(sink.kept) for sink in sinks}
    if len(answers) != 1:
        raise SystemExit("the connections were answered differently")
    answer = answers.pop()
    _checked(answer, partitions, with_records=0)
    size = len(answer)
    for sink in sinks:
        sink.keep = False
        sink.kept.clear()
        sink.sizes.clear()
    for r in range(1, 1 + warm_rounds):
        await one_round(r, size)
    for sink in sinks:
        sink.sizes.clear()
    handshake("ready")
    started, cpu = time.perf_counter(), time.process_time()
    for r in range(1 + warm_rounds, total):
        await one_round(r, size)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    handshake("done")
    fed = rounds * connections
    got = [s for sink in sinks for s in sink.sizes]
    if len(got) != fed or any(s != size for s in got):
        raise SystemExit(f"{len(got)} answers to {fed} fetches, or of another size than {size}")
    return f"ok {fed} {wall / fed * 1e6:.2f} {cpu / fed * 1e6:.2f} {size}"


def _heartbeat_bench() -> dict[str, Any]:
    """This tree's bench.heartbeat_instructions, read from beside this file: the child runs in the measured
    tree, whose `bench` package may be older than this one."""
    import runpy

    return runpy.run_path(str(HERE.parent / "heartbeat_instructions.py"))


def child_main(ns: argparse.Namespace) -> None:
    run_child = _heartbeat_bench()["run_child"]
    rounds = max(1, ns.requests // ns.connections)
    run_child(lambda handshake: _child(ns.shape, ns.partitions, ns.batches, ns.connections, rounds, ns.warm_rounds,
                                       ns.records_per_batch, handshake))


# --------------------------------------------------------------------------- the parent


def _child_args(ns: argparse.Namespace, shape: str) -> tuple[str, ...]:
    return ("--shape", shape, "--partitions", str(ns.partitions), "--batches", str(ns.batches),
            "--requests", str(ns.requests), "--connections", str(ns.connections),
            "--warm-rounds", str(ns.warm_rounds), "--records-per-batch",
            str(ns.records_per_batch))


def one_run(tree: Path, python: str, shape: str, requests: int, connections: int, partitions: int, batches: int,
            warm_rounds: int, valgrind: bool = True, keep: str | None = None,
            records_per_batch: int = RECORDS_PER_BATCH) -> tuple[float | None, float, float]:
    """(instructions per fetch or None without valgrind, wall µs, CPU µs per fetch of the child)."""
    ns = argparse.Namespace(partitions=partitions, batches=batches, requests=requests, connections=connections,
                            warm_rounds=warm_rounds, records_per_batch=records_per_batch)
    from bench.heartbeat_instructions import count_child

    total, words = count_child(tree, python, HERE, _child_args(ns, shape), valgrind=valgrind, keep=keep)
    fed, wall, cpu = int(words[0]), float(words[1]), float(words[2])
    return (None if total is None else total / fed), wall, cpu


_STRACE_LINE = re.compile(r"^\d+\s+(?:<\.\.\. )?([a-z_0-9]+)[( ]")


def syscalls_per_fetch(tree: Path, python: str, shape: str, ns: argparse.Namespace) -> dict[str, float]:
    """System calls (every thread's, by name) between the child's "ready" and "done" lines, per fetch: the child
    run under ``strace -f``; the markers are its own writes of those lines to stdout."""
    from bench.heartbeat_instructions import count_child

    with tempfile.TemporaryDirectory(prefix="groupcoord-strace-") as folder:
        trace = os.path.join(folder, "trace")
        _, words = count_child(tree, python, HERE, _child_args(ns, shape), valgrind=False,
                               wrapper=("strace", "-f", "-qq", "-s", "16", "-o", trace))
        counts: collections.Counter[str] = collections.Counter()
        inside = False
        with open(trace, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if 'write(1, "ready"' in line:
                    inside = True
                    continue
                if 'write(1, "done"' in line:
                    break
                if inside and "resumed>" not in line:  # a call interrupted and resumed is one call
                    found = _STRACE_LINE.match(line)
                    if found:
                        counts[found.group(1)] += 1
    fed = int(words[0])
    return {name: n / fed for name, n in counts.most_common()}


def main() -> None:
    from bench import heartbeat_instructions

    heartbeat_bench = vars(heartbeat_instructions)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default=",".join(SHAPES), help=f"fetch shapes measured, each in every run {SHAPES}")
    parser.add_argument("--partitions", type=int, default=11)
    parser.add_argument("--batches", type=int, default=2000, help="batches per partition")
    parser.add_argument("--records-per-batch", type=int, default=RECORDS_PER_BATCH,
                        help="records of 70 bytes in each batch (1: TestGroupETL's batches of ~100 bytes)")
    parser.add_argument("--requests", type=int, default=64, help="fetches measured (whole rounds of connections)")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--warm-rounds", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of this tree")
    parser.add_argument("--ab", type=Path, default=None, help="another tree, measured alternately with this one")
    parser.add_argument("--ab-python", default=None, help="that tree's interpreter (default: its .venv's)")
    parser.add_argument("--no-valgrind", action="store_true", help="no counts, only the child's µs (a smoke run)")
    parser.add_argument("--syscalls", action="store_true", help="system calls per fetch (strace -f), not instructions")
    parser.add_argument("--keep-dumps", default=None, help="a folder to keep each run's dump in (callgrind_annotate)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.child:
        if ns.shape not in SHAPES:
            raise SystemExit(f"--shape {ns.shape}: one of {SHAPES} in the child")
        child_main(ns)
        return
    shapes = [s for s in ns.shape.split(",") if s]
    if not shapes or any(s not in SHAPES for s in shapes):
        raise SystemExit(f"--shape: a comma-separated list of {SHAPES}")
    sides = heartbeat_bench["sides_of"](ns, TREE)
    results: dict[tuple[str, str], list[float]] = {(name, s): [] for name, _, _ in sides for s in shapes}
    for run in range(max(1, ns.runs)):
        for shape in shapes:
            for name, tree, python in sides:
                stamp = f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})"
                if ns.syscalls:
                    calls = syscalls_per_fetch(tree, python, shape, ns)
                    total = sum(calls.values())
                    listed = ", ".join(f"{k} {v:.1f}" for k, v in calls.items() if v >= 0.05)
                    print(f"{name} {shape} run {run + 1}: {total:.1f} system calls per fetch ({listed}) {stamp}",
                          flush=True)
                    results[(name, shape)].append(total)
                    continue
                per, wall, cpu = one_run(tree, python, shape, ns.requests, ns.connections, ns.partitions, ns.batches,
                                         ns.warm_rounds, valgrind=not ns.no_valgrind,
                                         keep=heartbeat_bench["kept_dump"](ns, name, shape, run + 1),
                                         records_per_batch=ns.records_per_batch)
                count = "" if per is None else \
                    f"{per:,.0f} instructions per fetch ({per / ns.partitions:,.0f} per partition read); "
                print(f"{name} {shape} run {run + 1}: {count}{wall:.1f} µs wall, {cpu:.1f} µs CPU per fetch"
                      f"{' (under valgrind)' if per is not None else ''}; {ns.partitions} partitions, "
                      f"{ns.connections} connections {stamp}", flush=True)
                if per is not None:
                    results[(name, shape)].append(per)
    unit = " system calls" if ns.syscalls else ""
    for shape in shapes:
        if all(results[(name, shape)] for name, _, _ in sides):
            summary = heartbeat_bench["median_summary"]({name: results[(name, shape)] for name, _, _ in sides}, unit)
            print(f"{shape}: {summary} (per fetch)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
