"""bench.heartbeat_instructions runs its child end to end (without valgrind: a few seconds): every heartbeat fed
is answered, and answered NONE, or the child fails the run."""

from __future__ import annotations

import sys

from bench.heartbeat_instructions import TREE, one_run


def test_a_small_run_answers_every_heartbeat():
    per, wall, cpu = one_run(TREE, sys.executable, requests=32, connections=4, depth=4, warm_rounds=1, valgrind=False)
    assert per is None  # no count without valgrind
    assert wall > 0 and cpu >= 0
