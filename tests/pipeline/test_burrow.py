"""Burrow's rules, as `watch` applies them to each group partition's window of commits."""

from groupcoord.pipeline.burrow import Commit, GroupStatus, PartitionStatus, PartitionTrack, group_status, partition_status

S = 1000


def window(*entries):
    return [Commit(t * S, offset, lag) for t, offset, lag in entries]


def test_a_consumer_that_caught_up_at_any_point_is_ok():
    assert partition_status(window((0, 10, 5), (10, 20, 0), (20, 25, 9)), now_ms=25 * S) is PartitionStatus.OK


def test_offsets_going_backwards_with_lag_is_a_rewind():
    assert partition_status(window((0, 50, 5), (10, 40, 9)), now_ms=12 * S) is PartitionStatus.REWIND


def test_no_commit_for_longer_than_the_window_spans_is_a_stop():
    assert partition_status(window((0, 10, 5), (10, 20, 3)), now_ms=21 * S) is PartitionStatus.STOP
    assert partition_status(window((0, 10, 5), (10, 20, 3)), now_ms=19 * S) is not PartitionStatus.STOP


def test_commits_that_never_move_the_offset_are_a_stall():
    assert partition_status(window((0, 10, 5), (10, 10, 6), (20, 10, 8)), now_ms=21 * S) is PartitionStatus.STALL


def test_lag_that_never_goes_down_is_a_warning():
    assert partition_status(window((0, 10, 5), (10, 20, 6), (20, 30, 6)), now_ms=21 * S) is PartitionStatus.WARN
    assert partition_status(window((0, 10, 5), (10, 20, 7), (20, 30, 4)), now_ms=21 * S) is PartitionStatus.OK


def test_unknown_lag_is_never_judged():
    assert partition_status(window((0, 10, None), (10, 10, None)), now_ms=100 * S) is PartitionStatus.OK


def test_group_status_is_the_worst_partition():
    assert group_status([PartitionStatus.OK, PartitionStatus.WARN]) is GroupStatus.WARN
    assert group_status([PartitionStatus.WARN, PartitionStatus.STALL]) is GroupStatus.ERR
    assert group_status([PartitionStatus.OK]) is GroupStatus.OK


def test_a_track_keeps_the_last_commits_and_gives_them_the_lag_seen_next():
    track = PartitionTrack(window_size=3)
    for n in range(5):
        track.commit(n * S, 10 * n, -1, "")
    track.observe_log_end(100)
    assert [c.offset for c in track.window] == [20, 30, 40]
    assert [c.lag for c in track.window] == [80, 70, 60]
    track.commit(5 * S, 50, -1, "")
    track.observe_log_end(200)  # only the new commit learns the new end
    assert [c.lag for c in track.window] == [70, 60, 150]
    assert (track.commits, track.first_commit_ms, track.last_commit_ms, track.offset) == (6, 0, 5 * S, 50)
