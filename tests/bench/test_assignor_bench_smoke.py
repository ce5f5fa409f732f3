"""The assignor bench runs and shows the incremental property it measures: one member joining a 1,000-member
group changes the targets of only a couple of members (the joiner and whoever gave it a partition)."""

from __future__ import annotations

import re

from bench.assignor_bench import measure


def test_one_join_into_a_large_group_moves_only_a_few_targets():
    line = measure(members=1000, partitions=1000, runs=3)
    found = re.search(r"\(([\d,]+) members' targets change\)", line)
    assert found, line
    assert 1 <= int(found[1].replace(",", "")) <= 2, line
