"""The share coordinator's shard and codec: records as Kafka 4.3 lays them out, ShareUpdate records between
ShareSnapshots every share.coordinator.snapshot.update.records.per.snapshot writes, replay giving the same
state, epochs fenced, tombstones on delete."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from groupcoord.coordinator.share import records
from groupcoord.coordinator.share.records import (
    SNAPSHOT_KEY_TYPE,
    UPDATE_KEY_TYPE,
    ShareKey,
    ShareSnapshotValue,
    ShareUpdateValue,
    StateBatch,
)
from groupcoord.coordinator.share.shard import ShareStateShard, WriteData
from groupcoord.coordinator.share.state_batches import combine
from groupcoord.protocol.errors import ErrorCode

TOPIC = uuid.UUID("12345678-1234-5678-1234-567812345678")
SP = ("g", TOPIC, 3)


def shard(per_snapshot: int = 3) -> ShareStateShard:
    s = ShareStateShard(0, SimpleNamespace(share_coordinator_snapshot_update_records_per_snapshot=per_snapshot))
    s.finish_load(0)
    return s


def test_keys_and_values_round_trip_in_kafkas_layout():
    key = ShareKey(SNAPSHOT_KEY_TYPE, "g", TOPIC, 3)
    raw = records.encode_key(key)
    assert raw == b"\x00\x00" + b"\x00\x01g" + TOPIC.bytes + b"\x00\x00\x00\x03"
    snap = ShareSnapshotValue(1, 2, 3, 40, 1000, 2000, (StateBatch(41, 45, 2, 1), StateBatch(46, 46, 0, 3)), 5)
    assert records.decode_record(raw, records.encode_value(snap)) == (key, snap)
    upd_key = ShareKey(UPDATE_KEY_TYPE, "g", TOPIC, 3)
    upd = ShareUpdateValue(1, 0, -1, (StateBatch(47, 47, 4, 5),))
    assert records.decode_record(records.encode_key(upd_key), records.encode_value(upd)) == (upd_key, upd)
    assert records.decode_record(raw, None) == (key, None)
    # version 0, flexible: SnapshotEpoch int32 first, then the epochs and offsets
    assert records.encode_value(snap)[:6] == b"\x00\x00\x00\x00\x00\x01"


def test_combining_keeps_the_newer_state_and_drops_what_is_below_the_start():
    old = (StateBatch(10, 19, 0, 1),)
    new = (StateBatch(12, 13, 2, 1), StateBatch(18, 25, 4, 2))
    assert combine(old, new, 11) == (StateBatch(11, 11, 0, 1), StateBatch(12, 13, 2, 1), StateBatch(14, 17, 0, 1),
                                      StateBatch(18, 25, 4, 2))
    assert combine((StateBatch(0, 4, 2, 1),), (StateBatch(5, 9, 2, 1),), 0) == (StateBatch(0, 9, 2, 1),)


def test_writes_are_updates_between_snapshots_and_replay_gives_the_same_state():
    s = shard(per_snapshot=2)
    assert s.initialize(SP, 0, -1, "t", 0).records[0][0].kind == SNAPSHOT_KEY_TYPE
    kinds = []
    written = []
    for i in range(5):
        fx = s.write(SP, WriteData(0, 0, 10 + i, (StateBatch(10 + i, 10 + i, 2, 1), StateBatch(20, 20, 0, i + 1))),
                     "t", i)
        assert fx.replies == [("t", {"error_code": ErrorCode.none})]
        kinds.append(fx.records[0][0].kind)
        written.extend(fx.records)
    assert kinds == [UPDATE_KEY_TYPE, UPDATE_KEY_TYPE, SNAPSHOT_KEY_TYPE, UPDATE_KEY_TYPE, UPDATE_KEY_TYPE]
    live = s.read(SP, 0)
    assert live["start_offset"] == 14
    assert live["state_batches"] == (StateBatch(14, 14, 2, 1), StateBatch(20, 20, 0, 5))
    replayed = shard(per_snapshot=2)
    replayed.begin_load()
    for key, value in [(ShareKey(SNAPSHOT_KEY_TYPE, *SP), ShareSnapshotValue(0, 0, -1, -1, 0, 0, ()))] + written:
        replayed.replay(*records.decode_record(records.encode_key(key), records.encode_value(value)), 0)
    replayed.finish_load(0)
    assert replayed.read(SP, 0) == live


def test_epochs_are_fenced_and_unknown_state_is_not_readable():
    s = shard()
    assert s.read(SP, 0)["error_code"] == ErrorCode.invalid_request
    assert s.read_summary(SP)["start_offset"] == -1
    s.initialize(SP, 5, 100, "t", 0)
    assert s.initialize(SP, 4, 0, "t", 0).replies[0][1]["error_code"] == ErrorCode.fenced_state_epoch
    assert s.write(SP, WriteData(4, 0, 101, ()), "t", 0).replies[0][1]["error_code"] == ErrorCode.fenced_state_epoch
    s.write(SP, WriteData(5, 3, 101, ()), "t", 0)
    assert s.write(SP, WriteData(5, 2, 102, ()), "t", 0).replies[0][1]["error_code"] == ErrorCode.fenced_leader_epoch
    summary = s.read_summary(SP)
    assert (summary["start_offset"], summary["state_epoch"], summary["leader_epoch"]) == (101, 5, 3)


def test_delete_writes_tombstones_for_both_record_kinds():
    s = shard()
    s.initialize(SP, 0, 7, "t", 0)
    fx = s.delete(SP, "t", 0)
    assert [(k.kind, v) for k, v in fx.records] == [(SNAPSHOT_KEY_TYPE, None), (UPDATE_KEY_TYPE, None)]
    assert s.read(SP, 0)["error_code"] == ErrorCode.invalid_request
    assert s.delete(SP, "t", 0).records == []


def test_a_partition_that_does_not_exist_is_unknown():
    s = ShareStateShard(0, SimpleNamespace(), partition_exists=lambda _t, p: p < 2)
    s.finish_load(0)
    assert s.initialize(SP, 0, 0, "t", 0).replies[0][1]["error_code"] == ErrorCode.unknown_topic_or_partition
