"""bench.replay_bench's ``--mixed-ids``: the grown offsets log holds batches whose keys differ in length (several runs
of one shape each for protocol/record_shapes.py), the default one only batches of one key length, and either log
replays to every group's offsets (a small scale, in process: a few seconds)."""

from __future__ import annotations

import asyncio

import pytest

from bench.replay_bench import drop_snapshots, grow, group_name, load_once
from groupcoord.protocol.record_batch import decode_key_values, iter_batches


def test_group_names():
    assert {len(group_name(g)) for g in range(200)} == {len("replay-000000")}
    assert group_name(42) == "replay-000042" and group_name(42, True) == "replay-42"
    assert group_name(43, True) == "replay-43x" and len({len(group_name(g, True)) for g in range(200)}) > 5


def _key_lengths_per_batch(data) -> list[set[int]]:
    found = []
    for path in sorted(data.glob("__consumer_offsets-*/*.log")):
        buf = path.read_bytes()
        for pos, header in iter_batches(buf, verify=False):
            found.append({len(key) for _, key, _ in decode_key_values(buf, pos, header) if key is not None})
    return found


@pytest.mark.parametrize("mixed_ids", (False, True))
def test_grown_log_batches_and_replay(tmp_path, mixed_ids):
    groups, partitions = 120, 3
    assert asyncio.run(grow(tmp_path, groups, partitions, 1, mixed_ids)) == groups * partitions
    lengths = _key_lengths_per_batch(tmp_path)
    mixed_batches = sum(len(batch) > 1 for batch in lengths)
    assert mixed_batches > 0 if mixed_ids else mixed_batches == 0
    drop_snapshots(tmp_path)
    loaded = asyncio.run(load_once(tmp_path, groups, partitions, 1, mixed_ids))  # raises unless the last is served
    assert loaded["replayed"] >= groups * partitions and not loaded["from_snapshot"]
