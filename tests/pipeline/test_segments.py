"""Pointing the pipeline at a data dir, at partition dirs or at files finds exactly the live segments."""

import pytest

from groupcoord.pipeline.segments import MAX_SPLIT_BYTES, NoSegmentsError, SegmentFile, discover_segments, pack_segments


def _touch(path, size=0):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def test_a_broker_data_dir_yields_every_offsets_segment_in_log_order(tmp_path):
    _touch(tmp_path / "__consumer_offsets-1" / "00000000000000000100.log", 5)
    _touch(tmp_path / "__consumer_offsets-1" / "00000000000000000000.log", 3)
    _touch(tmp_path / "__consumer_offsets-0" / "00000000000000000000.log")
    _touch(tmp_path / "orders-0" / "00000000000000000000.log")  # a data topic: not ours
    found = discover_segments(str(tmp_path))
    assert [(s.offsets_partition, s.base_offset, s.size_bytes) for s in found] == [(0, 0, 0), (1, 0, 3), (1, 100, 5)]


def test_compaction_and_deletion_leftovers_are_not_read(tmp_path):
    partition = tmp_path / "__consumer_offsets-4"
    _touch(partition / "00000000000000000000.log")
    _touch(partition / "00000000000000000000.log.cleaned")
    _touch(partition / "00000000000000000050.log.swap")
    _touch(partition / "00000000000000000070.log.deleted")
    _touch(partition / "00000000000000000000.index")
    _touch(tmp_path / "__consumer_offsets-5.abc123-delete" / "00000000000000000000.log")
    assert [s.name for s in discover_segments(str(tmp_path))] == ["00000000000000000000.log"]


def test_comma_separated_partition_dirs_and_a_list_are_the_same_request(tmp_path):
    a = _touch(tmp_path / "__consumer_offsets-2" / "00000000000000000000.log").parent
    b = _touch(tmp_path / "__consumer_offsets-9" / "00000000000000000000.log").parent
    assert discover_segments(f"{a},{b}") == discover_segments([str(a), str(b)])
    assert [s.offsets_partition for s in discover_segments([f"{a}", f"{a},{b}"])] == [2, 9]


def test_a_directory_without_offsets_partitions_is_an_error_not_an_empty_answer(tmp_path):
    _touch(tmp_path / "orders-0" / "00000000000000000000.log")
    with pytest.raises(NoSegmentsError, match="__consumer_offsets"):
        discover_segments(str(tmp_path))
    with pytest.raises(NoSegmentsError, match="does not exist"):
        discover_segments(str(tmp_path / "missing"))


def _segment(partition, base, size):
    return SegmentFile(partition, base, f"/d/__consumer_offsets-{partition}/{base:020d}.log", size)


def test_a_brokers_fifty_mostly_empty_partitions_are_a_few_tasks_not_fifty():
    MiB = 2**20
    segments = [_segment(p, 0, 0) for p in range(50)] + [_segment(p, b, 1000 + p) for p in range(0, 50, 5)
                                                         for b in (0, 90, 200)]
    groups = pack_segments(segments, parallelism=2)
    packed = [s for group in groups for s in group]
    assert sorted(packed) == sorted(s for s in segments if s.size_bytes)  # every non-empty segment, once
    assert len(groups) <= 5 and all(group == sorted(group) for group in groups)  # ~2 per core, in log order
    # a big log still spreads over every core: twice as many groups as cores, none above the cap
    big = [_segment(p, b, 40 * MiB) for p in range(10) for b in range(4)]
    groups = pack_segments(big, parallelism=2)
    assert len(groups) >= 4 and sorted(s for g in groups for s in g) == sorted(big)
    assert all(sum(s.size_bytes for s in g) <= MAX_SPLIT_BYTES for g in groups)
    assert pack_segments([_segment(0, 0, 0)], parallelism=2) == []
