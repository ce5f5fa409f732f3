"""Which rows `groups describe` shows, following kafka-consumer-groups --describe."""

from __future__ import annotations

from groupcoord.coordinator.admin.lag import lag_rows
from groupcoord.coordinator.admin.model import CommittedOffset, GroupDescription, MemberDescription


def group(*members: MemberDescription) -> GroupDescription:
    return GroupDescription("g", "Stable" if members else "Empty", "consumer", "range", members)


def test_assigned_partitions_show_their_consumer_and_lag():
    g = group(MemberDescription("m1", None, "c1", "/h1", (("t", 0),)))
    (row,) = lag_rows(g, {("t", 0): CommittedOffset("t", 0, 3)}, {("t", 0): 8})
    assert (row.current_offset, row.log_end_offset, row.lag, row.consumer_id) == (3, 8, 5, "m1")


def test_an_assigned_partition_without_a_commit_has_no_lag():
    g = group(MemberDescription("m1", None, "c1", "/h1", (("t", 1),)))
    (row,) = lag_rows(g, {}, {("t", 1): 8})
    assert (row.current_offset, row.lag, row.consumer_id) == (None, None, "m1")


def test_committed_partitions_nobody_owns_show_without_a_consumer():
    rows = lag_rows(group(), {("t", 1): CommittedOffset("t", 1, 2), ("t", 0): CommittedOffset("t", 0, 5)},
                    {("t", 0): 5, ("t", 1): 9})
    assert [(r.partition, r.lag, r.consumer_id) for r in rows] == [(0, 0, None), (1, 7, None)]


def test_a_member_without_partitions_gets_a_row_without_a_partition():
    g = group(MemberDescription("m2", None, "c2", "/h2", ()), MemberDescription("m1", None, "c1", "/h1", (("t", 0),)))
    rows = lag_rows(g, {}, {("t", 0): 1})
    assert [(r.topic, r.partition, r.consumer_id) for r in rows] == [("t", 0, "m1"), (None, None, "m2")]
