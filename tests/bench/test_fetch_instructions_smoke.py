"""bench.fetch_instructions runs its child end to end (without valgrind: a few seconds), in both shapes: every fetch
fed is answered with records for every partition (kio reads the warm-up's answer), each measured answer the size of
the warm-up's, or the child fails the run; and the system-call count reads the child's strace between its markers."""

from __future__ import annotations

import argparse
import shutil
import sys

import pytest

from bench.fetch_instructions import TREE, one_run, syscalls_per_fetch


@pytest.mark.parametrize("shape", ["tail", "middle"])
def test_a_small_run_answers_every_fetch(shape):
    per, wall, cpu = one_run(TREE, sys.executable, shape, requests=8, connections=2, partitions=3, batches=120,
                             warm_rounds=1, valgrind=False)
    assert per is None  # no count without valgrind
    assert wall > 0 and cpu >= 0


@pytest.mark.skipif(shutil.which("strace") is None,
                    reason="strace is not installed (Debian: apt install strace); only bench.fetch_instructions' "
                           "--syscalls count needs it, the instruction counts run without it")
def test_the_system_calls_of_a_fetch_are_counted_between_the_markers():
    ns = argparse.Namespace(partitions=3, batches=120, requests=8, connections=2, warm_rounds=1, records_per_batch=20)
    calls = syscalls_per_fetch(TREE, sys.executable, "tail", ns)
    # every partition is read from its segment file, each fetch: from the page cache on the loop (preadv2 with
    # RWF_NOWAIT, fetch.LOOP_READ_REACH) or on a thread (pread64)
    assert calls.get("pread64", 0) + calls.get("preadv2", 0) >= ns.partitions
    assert "execve" not in calls  # the start-up is outside the markers
