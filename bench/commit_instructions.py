"""Instructions the broker executes per OffsetCommit at the socket's shape (valgrind callgrind's Ir count, every
thread): 64 connections x 8 pipelined standalone commits (v8, one partition, generation -1), each connection its
own group, answered once durable.

    python -m bench.commit_instructions                        # this tree, fsync=batch then never, 3 runs
    python -m bench.commit_instructions --fsync batch          # one policy
    python -m bench.commit_instructions --ab /work/main --ab-python /work/main/.venv/bin/python

Why instructions, why in process: as bench.heartbeat_instructions (whose parent side this reuses): the CPU time
per commit of the same command varies 2x between processes on the shared machine, the instructions executed for
the same work are nearly deterministic.

What a commit costs here is more than its read: its records are encoded and appended by the shard's writer, the
storage thread writes them (and, under fsync=batch, one ``syncfs`` per round makes them durable), the durable
release answers the commits and the connection writes the answers. Callgrind counts all the process's threads, so
the storage thread's Python (the writes, the syncfs call) is in the figure; the kernel's work is not.

How: a child process runs under ``valgrind --tool=callgrind`` with the tree to measure first on its path. It starts
an embedded broker with the fsync policy asked (its logs in a temporary directory), freezes the heap as the daemon
does, prepares one standalone committer per connection (``bench.hotpath_bench.setup_commit``: the topic created,
one commit made), gives each connection a transport whose ``write`` keeps what it is given and counts the bytes,
and runs warm-up rounds. A round is what the socket bench does at 64 x 8: every connection's ``data_received``
handed ``depth`` commit frames, connection after connection, then the loop runs until every connection has been
written all of its answers (the last write of the round resolves the future the round awaits: no polling, no
timer). The parent zeroes the child's counters before the measured rounds and dumps them after, and divides by
the commits fed. The child then checks that every commit was answered, each answer byte for byte the warm-up's,
which kio reads as a success for every partition (else the run fails: a broker answering errors is fast).

The harness's own Python is the write method (one call per write of the connection, a few lines) and the round's
loop: a few hundred instructions per write, the same on both sides of an A/B.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
FSYNCS = ("batch", "never")


# --------------------------------------------------------------------------- the child (under valgrind)


class AnswerSink:
    """The transport a connection writes its answers to: ``write`` keeps the data and counts the bytes still owed
    for the round; the round's last answer of the last connection tells ``finished``. The write buffer is always
    empty (the socket takes everything)."""

    def __init__(self, finished: Callable[[], None]) -> None:
        self.written: list[bytes] = []
        self.owed = 0
        self._keep = self.written.append
        self._finished = finished
        self.get_write_buffer_size = (0).__index__

    def write(self, data: Any) -> None:
        self._keep(bytes(data))
        self.owed -= len(data)
        if self.owed <= 0:
            self._finished()

    def writelines(self, parts: Any) -> None:
        self.write(b"".join(parts))

    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


def _split(data: bytes) -> list[bytes]:
    import struct

    frames, pos = [], 0
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        frames.append(data[pos:pos + 4 + size])
        pos += 4 + size
    return frames


def _checked_success(answer: bytes) -> None:
    """kio reads ``answer`` (a whole OffsetCommit v8 frame) as NONE for every partition, else the run stops."""
    from groupcoord.protocol.headers import parse_response_header
    from groupcoord.protocol.registry import response_reader

    _, pos = parse_response_header(answer[4:], 8, True)
    read = response_reader(8, 8)(answer[4:], pos)[0]
    codes = [int(p.error_code) for t in read.topics for p in t.partitions]
    if not codes or any(codes):
        raise SystemExit(f"the commit was not accepted: {read!r}")


async def _child(fsync: str, connections: int, depth: int, rounds: int, warm_rounds: int,
                 handshake: Callable[[str], None]) -> str:
    import asyncio

    from bench.hotpath_bench import connect, setup_commit  # the measured tree's (as bench.heartbeat_instructions)
    from groupcoord.coordinator.broker import Broker
    from groupcoord.coordinator.ops.cli import settle_heap

    async with Broker(fsync=fsync, metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        settle_heap()
        made = [connect(broker) for _ in range(connections)]
        frames = [await setup_commit(broker, conn, transport) for conn, transport in made]
        loop = asyncio.get_running_loop()
        state: dict[str, Any] = {"left": 0, "done": None}

        def finished() -> None:
            state["left"] -= 1
            if state["left"] == 0:
                state["done"].set_result(None)

        sinks = []
        feeds = []
        for (conn, _), frame in zip(made, frames):
            sink = AnswerSink(finished)
            conn.transport = sink  # type: ignore[assignment]
            sinks.append(sink)
            feeds.append((conn.data_received, frame * depth))

        async def feed(n: int, answer_size: int) -> None:
            for _ in range(n):
                state["left"] = connections
                state["done"] = loop.create_future()
                for sink in sinks:
                    sink.owed = depth * answer_size
                for data_received, chunk in feeds:
                    data_received(chunk)
                await state["done"]

        # The first warm-up round learns the answer's size (every commit's answer is the same bytes), polling:
        # set-up only, bounded.
        for sink in sinks:
            sink.owed = 1 << 60
        for data_received, chunk in feeds:
            data_received(chunk)
        for _ in range(30_000):
            if all(len(_split(b"".join(sink.written))) >= depth for sink in sinks):
                break
            await asyncio.sleep(0.001)
        else:
            raise SystemExit("the first commits were not all answered")
        answer = _split(sinks[0].written[0])[0]
        _checked_success(answer)
        for sink in sinks:
            got = _split(b"".join(sink.written))
            if len(got) != depth or any(a != answer for a in got):
                raise SystemExit(f"warm-up: {len(got)} answers, or not all {answer!r}")
            sink.written.clear()
        await feed(warm_rounds, len(answer))
        for sink in sinks:
            sink.written.clear()
        handshake("ready")  # the parent zeroes the counters
        started, cpu = time.perf_counter(), time.process_time()
        await feed(rounds, len(answer))
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        handshake("done")  # the parent dumps the counters

        fed = rounds * connections * depth
        answers = 0
        for sink in sinks:
            got = _split(b"".join(sink.written))
            if any(a != answer for a in got):
                raise SystemExit(f"an answer other than the accepted commit's {answer!r}")
            answers += len(got)
        if answers != fed:
            raise SystemExit(f"{answers} answers to {fed} commits")
        return f"ok {fed} {wall / fed * 1e6:.2f} {cpu / fed * 1e6:.2f}"


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
            valgrind: bool = True, keep: str | None = None) -> tuple[float | None, float, float]:
    """(instructions per commit or None without valgrind, wall µs, CPU µs per commit of the child)."""
    from bench.heartbeat_instructions import one_run as run_child

    return run_child(tree, python, requests, connections, depth, warm_rounds, valgrind=valgrind, keep=keep,
                     script=HERE, extra=("--fsync", fsync))


def main() -> None:
    heartbeat_bench = _heartbeat_bench()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    heartbeat_bench["add_run_arguments"](parser, "commit", warm_rounds=4)
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
    results: dict[tuple[str, str], list[float]] = {(name, f): [] for name, _, _ in sides for f in fsyncs}
    for run in range(max(1, ns.runs)):
        for fsync in fsyncs:
            for name, tree, python in sides:
                per, wall, cpu = one_run(tree, python, fsync, ns.requests, ns.connections, ns.depth, ns.warm_rounds,
                                         valgrind=not ns.no_valgrind,
                                         keep=heartbeat_bench["kept_dump"](ns, name, fsync, run + 1))
                count = "" if per is None else f"{per:,.0f} instructions per commit; "
                print(f"{name} fsync={fsync} run {run + 1}: {count}{wall:.2f} µs wall, {cpu:.2f} µs CPU per commit"
                      f"{' (under valgrind)' if per is not None else ''}; {ns.connections} connections x depth "
                      f"{ns.depth} ({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})",
                      flush=True)
                if per is not None:
                    results[(name, fsync)].append(per)
    for fsync in fsyncs:
        if all(results[(name, fsync)] for name, _, _ in sides):
            summary = heartbeat_bench["median_summary"]({name: results[(name, fsync)] for name, _, _ in sides})
            print(f"fsync={fsync}: {summary}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
