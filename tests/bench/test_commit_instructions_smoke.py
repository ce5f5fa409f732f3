"""bench.commit_instructions runs its child end to end (without valgrind: a few seconds), under both fsync
policies: every commit fed is answered, each answer the accepted commit's (kio reads it as NONE), or the child
fails the run."""

from __future__ import annotations

import sys

import pytest

from bench.commit_instructions import TREE, one_run


@pytest.mark.parametrize("fsync", ["batch", "never"])
def test_a_small_run_answers_every_commit(fsync):
    per, wall, cpu = one_run(TREE, sys.executable, fsync, requests=32, connections=4, depth=4, warm_rounds=1,
                             valgrind=False)
    assert per is None  # no count without valgrind
    assert wall > 0 and cpu >= 0
