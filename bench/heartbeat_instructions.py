"""Instructions the broker executes per Heartbeat at the socket's shape (valgrind callgrind's Ir count): 64
connections x 8 pipelined heartbeats, ~8 frames per ``data_received``, each connection its own group.

    python -m bench.heartbeat_instructions                       # this tree, 3 runs
    python -m bench.heartbeat_instructions --ab /work/main       # alternating: that tree, this tree, x3
    python -m bench.heartbeat_instructions --ab /work/main --ab-python /work/main/.venv/bin/python

Why instructions: on the shared 2-core development machine the CPU time per heartbeat of the same command
varies 2x between processes (bench.hotpath_bench's µs, bench.server_cpu's), so a change worth 10 % cannot be
told from noise; the instructions executed for the same work are nearly deterministic. Why in process: the
cost the issue asks about is the broker's Python per frame and per read (the socket's kernel share is small
and not the code's), and the per-``data_received`` fixed cost only shows at the socket's shape, not with one
deep connection.

How: a child process runs under ``valgrind --tool=callgrind`` with the tree to measure first on its path. It
starts an embedded broker (fsync=never, as bench.hotpath_bench), freezes the heap as the daemon does
(``settle_heap``), forms one group of one member per connection (JoinGroup, SyncGroup: each connection its own
group, so the groups spread over the shards as the socket bench's do), hands each connection a transport whose
``write`` is a C call (a list's append: the harness adds next to nothing to the count, as uvloop's transport
adds no Python), and feeds warm-up rounds. Then, as bench.group_instructions does for the daemon, this process
zeroes the child's counters (``callgrind_control -z``), lets it feed the measured rounds (each connection's
``data_received`` given ``depth`` heartbeat frames, connection after connection), dumps the counters
(``callgrind_control -d``) and divides by the heartbeats fed. The child then checks that every heartbeat was
answered, and answered NONE (a run where the lane fell back to the handler would measure something else).
The figure covers everything a read costs in Python and C (frame split, lanes, group look-ups, timers, metrics
observation, the write call, the cyclic collector), not the event loop's own turn or the kernel.

A/B: ``--ab OTHER_TREE`` alternates runs of that tree (with ``--ab-python``, its own virtualenv's interpreter,
which imports that tree's ``groupcoord``) and of this one. The child is this file's code run with the measured
tree's ``bench`` package (its ``hotpath_bench`` forms the groups), so the harness is the same on both sides.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Awaitable, Callable

HERE = Path(__file__).resolve()
TREE = HERE.parent.parent  # this worktree
START_SECONDS = 600.0  # the child's start-up and group forming under valgrind, on a loaded machine


# --------------------------------------------------------------------------- the child (under valgrind)


class SinkTransport:
    """What KafkaConnection calls on its transport while serving heartbeats, each a C call: ``write`` appends
    to a list (checked after the measurement), the write buffer is always empty."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.write = self.written.append
        self.get_write_buffer_size = (0).__index__

    def pause_reading(self) -> None: ...
    def resume_reading(self) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


async def _child(connections: int, depth: int, rounds: int, warm_rounds: int, handshake: Callable[[str], None]) -> str:
    import struct

    from bench.hotpath_bench import connect, setup_heartbeat  # the measured tree's (see the module's docstring)
    from groupcoord.coordinator.broker import Broker
    from groupcoord.coordinator.ops.cli import settle_heap

    async with Broker(fsync="never", metrics_port=0, group_initial_rebalance_delay_ms=0) as broker:
        settle_heap()
        made = [connect(broker) for _ in range(connections)]
        frames = [await setup_heartbeat(broker, conn, transport) for conn, transport in made]
        sinks = []
        feeds = []
        for (conn, _), frame in zip(made, frames):
            sink = SinkTransport()
            conn.transport = sink  # type: ignore[assignment]
            sinks.append(sink)
            feeds.append((conn.data_received, frame * depth))

        def feed(n: int) -> None:
            for _ in range(n):
                for data_received, chunk in feeds:
                    data_received(chunk)

        feed(warm_rounds)
        for sink in sinks:
            sink.written.clear()
        handshake("ready")  # the parent zeroes the counters
        started, cpu = time.perf_counter(), time.process_time()
        feed(rounds)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        handshake("done")  # the parent dumps the counters

        answers = 0
        for sink in sinks:
            data = b"".join(sink.written)
            pos = 0
            while pos < len(data):
                (size,) = struct.unpack_from(">i", data, pos)
                frame = data[pos + 4:pos + 4 + size]
                # Heartbeat v4's answer: correlation id, header tags, throttle time, error code, tags
                if size != 12 or frame[4:] != b"\x00\x00\x00\x00\x00\x00\x00\x00":
                    raise SystemExit(f"an answer other than NONE: {frame!r}")
                answers += 1
                pos += 4 + size
        fed = rounds * connections * depth
        if answers != fed:
            raise SystemExit(f"{answers} answers to {fed} heartbeats")
        return f"ok {fed} {wall / fed * 1e6:.2f} {cpu / fed * 1e6:.2f}"


def run_child(child: Callable[[Callable[[str], None]], Awaitable[str]]) -> None:
    """The child side every instruction bench shares: warning-level logs, one event loop as the daemon makes
    it, and `handshake` (a line to the parent, then wait for its "go") for the coroutine to call around the
    measured stretch; the coroutine's result line is printed for the parent."""
    from groupcoord.coordinator.broker import new_event_loop
    from groupcoord.coordinator.ops.logging import configure_logging

    configure_logging("warning", "json")

    def handshake(line: str) -> None:
        print(line, flush=True)
        if sys.stdin.readline() != "go\n":
            raise SystemExit("the parent went away")

    loop = new_event_loop()
    try:
        print(loop.run_until_complete(child(handshake)), flush=True)
    finally:
        loop.close()


def child_main(ns: argparse.Namespace) -> None:
    rounds = max(1, ns.requests // (ns.connections * ns.depth))
    run_child(lambda handshake: _child(ns.connections, ns.depth, rounds, ns.warm_rounds, handshake))


# --------------------------------------------------------------------------- the parent


def _expect(proc: subprocess.Popen[str], word: str) -> str:
    line = proc.stdout.readline() if proc.stdout is not None else ""
    if not line.startswith(word):
        proc.kill()
        rest = proc.stdout.read() if proc.stdout is not None else ""
        raise RuntimeError(f"child said {line!r} (expected {word!r}); then {rest[-2000:]!r}")
    return line.strip()


def one_run(tree: Path, python: str, requests: int, connections: int, depth: int, warm_rounds: int,
            valgrind: bool = True, keep: str | None = None, script: Path = HERE,
            extra: tuple[str, ...] = ()) -> tuple[float | None, float, float]:
    """(instructions per heartbeat or None without valgrind, wall µs, CPU µs per heartbeat of the child).
    ``keep``: a path to copy the measured dump to (for ``callgrind_annotate``). ``script`` and ``extra``: another
    bench's child run the same way, with its own arguments (bench.commit_instructions: per OffsetCommit)."""
    args = ("--requests", str(requests), "--connections", str(connections), "--depth", str(depth),
            "--warm-rounds", str(warm_rounds), *extra)
    total, (fed, wall, cpu) = count_child(tree, python, script, args, valgrind=valgrind, keep=keep)
    return (None if total is None else total / int(fed)), float(wall), float(cpu)


def count_child(tree: Path, python: str, script: Path, args: tuple[str, ...], valgrind: bool = True,
                keep: str | None = None, timeout_s: float = START_SECONDS,
                wrapper: tuple[str, ...] = ()) -> tuple[int | None, list[str]]:
    """Run ``script``'s child (``--child`` plus ``args``, ``tree`` first on its path) under callgrind and count
    what it does between its "ready" and its "done": (the instructions, or None without valgrind; the words of
    its "ok" line after "ok"). The one parent side of every in-process instruction bench (heartbeat, commit,
    replay, fetch): the child's handshake is ``run_child``'s. ``wrapper``: a command the child runs under instead
    of valgrind (bench.fetch_instructions' ``strace -f``, which reads its trace between the same lines)."""
    child = [python, "-c", f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')", "--child", *args]
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # the same dict layouts run to run
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryDirectory(prefix="groupcoord-callgrind-") as dumps:
        prefix = os.path.join(dumps, "callgrind.out")
        cmd = [*wrapper, *child]
        if valgrind and wrapper:
            raise ValueError("a child runs under valgrind or under a wrapper, not both")
        if valgrind:
            if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
                raise SystemExit("valgrind (with callgrind_control) is not installed")
            cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={prefix}.%p", "--dump-instr=no", *child]
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL if valgrind else None, text=True)
        assert proc.stdin is not None
        try:
            _expect(proc, "ready")
            if valgrind:
                subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            _expect(proc, "done")
            if valgrind:
                subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
            proc.stdin.write("go\n")
            proc.stdin.flush()
            words = _expect(proc, "ok").split()[1:]
            proc.wait(timeout=timeout_s)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if not valgrind:
            return None, words
        from .group_instructions import asked_dump

        return asked_dump(prefix, proc.pid, 1, keep), words


def kept_dump(ns: argparse.Namespace, *name: object) -> str | None:
    """Where ``--keep-dumps`` keeps one run's dump (``callgrind.<name parts joined by dots>``), or None."""
    if ns.keep_dumps is None:
        return None
    os.makedirs(ns.keep_dumps, exist_ok=True)
    return os.path.join(ns.keep_dumps, ".".join(("callgrind", *map(str, name))))


def median_summary(results: dict[str, list[float]], unit: str = "") -> str:
    """One line of each side's median (min, max) and, for two sides, the second's median over the first's: how
    every instruction bench ends."""
    figures = {name: sorted(xs) for name, xs in results.items() if xs}
    line = "; ".join(f"{name}: median {xs[len(xs) // 2]:,.0f}{unit} (min {xs[0]:,.0f}, max {xs[-1]:,.0f})"
                     for name, xs in figures.items())
    if len(figures) == 2:
        (a, xa), (b, xb) = figures.items()
        line += f"; {b} / {a} = {xb[len(xb) // 2] / xa[len(xa) // 2]:.3f} (medians)"
    return line


def add_run_arguments(parser: argparse.ArgumentParser, request: str, warm_rounds: int) -> None:
    """The options every instruction bench takes (bench.commit_instructions too): the load's shape, the runs,
    the trees alternated, the child's flag."""
    parser.add_argument("--requests", type=int, default=8192, help=f"{request}s measured (whole rounds of connections x depth)")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--depth", type=int, default=8, help=f"{request} frames per data_received")
    parser.add_argument("--warm-rounds", type=int, default=warm_rounds)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--python", default=sys.executable, help="the interpreter of this tree")
    parser.add_argument("--ab", type=Path, default=None, help="another tree, measured alternately with this one")
    parser.add_argument("--ab-python", default=None, help="that tree's interpreter (default: its .venv's)")
    parser.add_argument("--no-valgrind", action="store_true", help="no counts, only the child's µs (a smoke run)")
    parser.add_argument("--keep-dumps", default=None, help="a folder to keep each run's dump in (callgrind_annotate)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)


def sides_of(ns: argparse.Namespace, tree: Path = TREE) -> list[tuple[str, Path, str]]:
    """(name, tree, interpreter) of each tree measured, the --ab one first."""
    sides: list[tuple[str, Path, str]] = []
    if ns.ab is not None:
        other = ns.ab.resolve()
        sides.append((other.name, other, ns.ab_python or str(other / ".venv" / "bin" / "python")))
    sides.append((tree.name, tree, ns.python))
    return sides


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_run_arguments(parser, "heartbeat", warm_rounds=8)
    ns = parser.parse_args()
    if ns.child:
        child_main(ns)
        return
    sides = sides_of(ns)
    results: dict[str, list[float]] = {name: [] for name, _, _ in sides}
    for run in range(max(1, ns.runs)):
        for name, tree, python in sides:
            per, wall, cpu = one_run(tree, python, ns.requests, ns.connections, ns.depth, ns.warm_rounds,
                                     valgrind=not ns.no_valgrind, keep=kept_dump(ns, name, run + 1))
            count = "" if per is None else f"{per:,.0f} instructions per heartbeat; "
            print(f"{name} run {run + 1}: {count}{wall:.2f} µs wall, {cpu:.2f} µs CPU per heartbeat"
                  f"{' (under valgrind)' if per is not None else ''}; {ns.connections} connections x depth {ns.depth} "
                  f"({time.strftime('%H:%M:%S', time.gmtime())} UTC, load {os.getloadavg()[0]:.2f})", flush=True)
            if per is not None:
                results[name].append(per)
    if len(sides) == 2 and all(results.values()):
        (a, ra), (b, rb) = results.items()
        ma, mb = min(ra), min(rb)
        print(f"{a}: {', '.join(f'{x:,.0f}' for x in ra)}; {b}: {', '.join(f'{x:,.0f}' for x in rb)}; "
              f"{b} / {a} = {mb / ma:.3f} (min of each)")


if __name__ == "__main__":
    sys.exit(main())
