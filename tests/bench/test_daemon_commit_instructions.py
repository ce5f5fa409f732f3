"""bench.daemon_commit_instructions' parts that run without valgrind: the daemon under callgrind is waited for
until an idle window executes next to nothing (its warm-up imports would otherwise land in the measured
stretch), and the measured loads' fixed cost cancels in the difference."""

from __future__ import annotations

import pytest

import bench.daemon_commit_instructions as daemon_bench
import bench.group_instructions as group_instructions
from bench.group_instructions import CallgrindDaemon
from bench.servers import Started


def _daemon(counts: list[int]) -> CallgrindDaemon:
    daemon = CallgrindDaemon(Started("127.0.0.1:1", 0.0, 1), "/nonexistent/callgrind.out")
    seen = iter(counts)
    daemon.measure = lambda work, keep=None: (next(seen), None)  # type: ignore[method-assign]
    return daemon


def test_settle_waits_for_the_first_idle_window(monkeypatch):
    monkeypatch.setattr(group_instructions, "SETTLE_WINDOW_S", 0.0)
    daemon = _daemon([160_000_000, 20_000_000, 2_700_000, 55_000, 10_000_000])
    assert daemon.settle() == 4


def test_settle_gives_up_past_its_bound(monkeypatch):
    monkeypatch.setattr(group_instructions, "SETTLE_WINDOW_S", 0.0)
    monkeypatch.setattr(group_instructions, "START_SECONDS", -1.0)
    with pytest.raises(RuntimeError, match="never settled"):
        _daemon([5_000_000, 5_000_000]).settle()


def test_the_figure_is_the_difference_of_the_two_loads(monkeypatch):
    """A fixed cost per load (the clients' set-up) cancels: 1,000 + 7 per commit, loads of 8 and 24 commits."""
    measured = iter([1_000 + 7 * 8, 1_000 + 7 * 24])

    class Daemon:
        bootstrap = "127.0.0.1:1"

        def settle(self) -> int:
            return 1

        def measure(self, work, keep=None):
            return next(measured), work()

    class Context:
        def __enter__(self):
            return Daemon()

        def __exit__(self, *exc):
            return False

    class Load:
        def __init__(self, count: int) -> None:
            self.requests = count

    monkeypatch.setattr(daemon_bench, "callgrind_daemon", lambda *args, **kwargs: Context())
    monkeypatch.setattr(daemon_bench, "run_load", lambda bootstrap, request, connections, pipeline, seconds, count,
                        **kwargs: Load(count))
    per, commits = daemon_bench.one_run("python", daemon_bench.TREE, "batch", 8, 2, 2)
    assert (per, commits) == (7.0, 16)
