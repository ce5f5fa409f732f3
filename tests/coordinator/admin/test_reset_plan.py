"""Planning an offsets reset: each --to-* option, clamping into the log, and partition selection."""

from __future__ import annotations

import datetime

import pytest

from groupcoord.coordinator.admin.client import AdminError
from groupcoord.coordinator.admin.model import PartitionOffsets
from groupcoord.coordinator.admin.reset_plan import (
    PlannedReset,
    ResetSpec,
    ResetStrategy,
    parse_datetime_ms,
    parse_topic_arg,
    plan_reset,
    select_partitions,
)

# partition 0: log holds 10..100, committed at 40; partition 1: log 0..5, never committed
STATE = {
    ("orders", 0): PartitionOffsets(earliest=10, latest=100, current=40, at_timestamp=55),
    ("orders", 1): PartitionOffsets(earliest=0, latest=5, current=None, at_timestamp=None),
}


def new_offsets(spec: ResetSpec, state=STATE) -> dict:
    return {(p.topic, p.partition): p.new_offset for p in plan_reset(spec, state)}


def test_to_earliest_and_to_latest_use_the_log_bounds():
    assert new_offsets(ResetSpec(ResetStrategy.TO_EARLIEST)) == {("orders", 0): 10, ("orders", 1): 0}
    assert new_offsets(ResetSpec(ResetStrategy.TO_LATEST)) == {("orders", 0): 100, ("orders", 1): 5}


def test_to_datetime_uses_the_offset_for_the_time_or_the_log_end_when_nothing_is_that_recent():
    assert new_offsets(ResetSpec(ResetStrategy.TO_DATETIME, 1_700_000_000_000)) == {("orders", 0): 55, ("orders", 1): 5}


def test_to_offset_is_clamped_into_the_log():
    assert new_offsets(ResetSpec(ResetStrategy.TO_OFFSET, 3)) == {("orders", 0): 10, ("orders", 1): 3}
    assert new_offsets(ResetSpec(ResetStrategy.TO_OFFSET, 1000)) == {("orders", 0): 100, ("orders", 1): 5}


def test_shift_by_moves_from_the_committed_offset_and_clamps():
    only_committed = {("orders", 0): STATE[("orders", 0)]}
    assert new_offsets(ResetSpec(ResetStrategy.SHIFT_BY, -5), only_committed) == {("orders", 0): 35}
    assert new_offsets(ResetSpec(ResetStrategy.SHIFT_BY, -500), only_committed) == {("orders", 0): 10}
    assert new_offsets(ResetSpec(ResetStrategy.SHIFT_BY, 500), only_committed) == {("orders", 0): 100}


def test_shift_by_refuses_a_partition_without_a_committed_offset():
    with pytest.raises(AdminError, match="orders-1 since there is no current committed offset"):
        plan_reset(ResetSpec(ResetStrategy.SHIFT_BY, 1), STATE)


def test_from_file_resets_exactly_the_partitions_in_the_file_clamped():
    spec = ResetSpec(ResetStrategy.FROM_FILE, file_offsets={("orders", 0): 70, ("orders", 1): 9})
    assert plan_reset(spec, STATE) == [
        PlannedReset("orders", 0, 40, 70),
        PlannedReset("orders", 1, None, 5),
    ]
    with pytest.raises(AdminError, match="partition orders-7 does not exist"):
        plan_reset(ResetSpec(ResetStrategy.FROM_FILE, file_offsets={("orders", 7): 1}), STATE)


def test_plan_keeps_the_current_offset_for_the_dry_run_display():
    plan = plan_reset(ResetSpec(ResetStrategy.TO_LATEST), STATE)
    assert [(p.current_offset, p.new_offset) for p in plan] == [(40, 100), (None, 5)]


def test_topic_arguments_select_partitions_like_kafka():
    topics = {"orders": [0, 1, 2], "audit": [0]}
    assert parse_topic_arg("orders:0,2") == ("orders", (0, 2))
    assert select_partitions(["orders:0,2", "audit"], False, topics, []) == [("audit", 0), ("orders", 0), ("orders", 2)]
    assert select_partitions([], True, topics, [("audit", 0), ("orders", 1)]) == [("audit", 0), ("orders", 1)]
    with pytest.raises(AdminError, match="topic 'nope' does not exist"):
        select_partitions(["nope"], False, topics, [])
    with pytest.raises(AdminError, match="partition orders-9 does not exist"):
        select_partitions(["orders:9"], False, topics, [])
    with pytest.raises(AdminError, match="bad partition list"):
        parse_topic_arg("orders:x")


def test_datetimes_with_a_zone_are_exact_and_without_one_are_local_time():
    assert parse_datetime_ms("2024-01-31T12:00:00.000Z") == 1_706_702_400_000
    assert parse_datetime_ms("2024-01-31T13:00:00+01:00") == 1_706_702_400_000
    local = datetime.datetime(2024, 1, 31, 12, 0).astimezone()
    assert parse_datetime_ms("2024-01-31T12:00:00") == int(local.timestamp() * 1000)
    with pytest.raises(AdminError, match="bad --to-datetime"):
        parse_datetime_ms("yesterday")
