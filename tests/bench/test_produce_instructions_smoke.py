"""bench.produce_instructions runs its child end to end (without valgrind: a few seconds), under both fsync
policies: every Produce fed is answered, every partition NONE with its base offsets following each other 20
apart (kio reads the answers), or the child fails the run."""

from __future__ import annotations

import sys

import pytest

from bench.produce_instructions import TREE, one_run


@pytest.mark.parametrize("fsync", ["batch", "never"])
def test_a_small_run_answers_every_produce(fsync):
    request, append, wall, cpu = one_run(TREE, sys.executable, fsync, requests=24, connections=4, depth=2,
                                         warm_rounds=1, valgrind=False)
    assert request is None and append is None  # no count without valgrind
    assert wall > 0 and cpu >= 0
