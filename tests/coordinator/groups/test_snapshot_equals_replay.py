"""A shard loaded from a snapshot plus the log past it has exactly the state a full replay gives (issue 17).

Hypothesis drives random histories through the real shard (classic groups forming, committing, leaving,
deleted; consumer-protocol groups joining and leaving; standalone commits, offset deletes, time passing),
cuts the log at a random offset, writes the snapshot of everything before the cut through the snapshot
codec, and compares the state loaded from snapshot + tail with the state a replay of the whole log gives.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.coordinator.groups.offsets_records import decode_record
from groupcoord.coordinator.groups.runtime.snapshot import LatestRecords, decode_snapshot, encode_snapshot
from tests.coordinator.groups.harness import Harness

GROUPS = ("a", "b", "c")
TOPICS = (("orders", 3), ("payments", 2))

operation = st.one_of(
    st.tuples(st.just("commit"), st.sampled_from(GROUPS), st.sampled_from(TOPICS), st.integers(0, 2),
              st.integers(0, 1000)),
    st.tuples(st.just("form"), st.sampled_from(GROUPS), st.integers(1, 3)),
    st.tuples(st.just("leave_all"), st.sampled_from(GROUPS)),
    st.tuples(st.just("delete"), st.sampled_from(GROUPS)),
    st.tuples(st.just("offset_delete"), st.sampled_from(GROUPS), st.sampled_from(TOPICS)),
    st.tuples(st.just("cg_join"), st.sampled_from(("cg1", "cg2")), st.sampled_from(("m1", "m2", "m3"))),
    st.tuples(st.just("cg_leave"), st.sampled_from(("cg1", "cg2")), st.sampled_from(("m1", "m2", "m3"))),
    st.tuples(st.just("advance"), st.sampled_from((1_000, 10_000, 60_000))),
)


def run(h: Harness, op: tuple) -> None:
    kind = op[0]
    if kind == "commit":
        _, group, (topic, count), partition, offset = op
        if group not in h.shard.consumer_groups:
            h.commit(group, {(topic, partition % count): offset})
    elif kind == "form":
        _, group, members = op
        if group not in h.shard.groups or not h.shard.groups[group].members:
            if group not in h.shard.consumer_groups:
                h.form_group(group, *(f"{group}-client-{i}" for i in range(members)))
    elif kind == "leave_all":
        group = h.shard.groups.get(op[1])
        if group is not None and group.members:
            h.leave(op[1], *list(group.members))
    elif kind == "delete":
        h.delete_group(op[1])
    elif kind == "offset_delete":
        _, group, (topic, count) = op
        h.offset_delete(group, [(topic, tuple(range(count)))])
    elif kind == "cg_join":
        _, group, member = op
        existing = h.shard.consumer_groups.get(group)
        if group not in h.shard.groups and (existing is None or member not in existing.members):
            h.cg_join(group, member)
    elif kind == "cg_leave":
        _, group, member = op
        existing = h.shard.consumer_groups.get(group)
        if existing is not None and member in existing.members:
            h.cg(group, member, -1)
    elif kind == "advance":
        h.advance(op[1])


HUSK = ("Empty", 0, None, None, None, (), {})


def state_of(shard) -> dict:
    """Everything a record can set. A classic group that holds nothing at all (no generation, member or
    offset: what remains after its only offsets were deleted) is left out: the tombstone that emptied it
    is all a compacted log keeps of it too, so Kafka's compaction forgets it as the snapshot does, and the
    retention pass deletes such a group anyway."""
    classic = {
        gid: (g.state.value, g.generation, g.protocol_type, g.protocol_name, g.leader_id,
              tuple((m.member_id, m.group_instance_id, m.client_id, m.assignment, m.session_timeout_ms)
                    for m in g.members.values()),
              dict(g.offsets))
        for gid, g in shard.groups.items()
    }
    classic = {gid: g for gid, g in classic.items() if g != HUSK}
    consumer = {
        gid: (g.group_epoch, g.assignment_epoch, g.state.value, dict(g.target), dict(g.partition_epochs),
              dict(g.offsets),
              {mid: (m.member_epoch, m.previous_member_epoch, m.state, m.assigned, m.pending_revocation,
                     m.subscribed_topic_names, m.rebalance_timeout_ms, m.client_id, m.server_assignor)
               for mid, m in g.members.items()})
        for gid, g in shard.consumer_groups.items()
    }
    return {"classic": classic, "consumer": consumer}


def load_from_snapshot(h: Harness, cut: int):
    latest = LatestRecords.empty()
    for offset, (key, value) in enumerate(h.log[:cut]):
        latest.add(offset, key, value)
    end, records = decode_snapshot(encode_snapshot(7, cut, latest.entries()), 7)
    assert end == cut
    shard = h.new_shard()
    shard.begin_load()
    for _offset, key, value in records:
        shard.replay(*decode_record(key, value), h.now)
    for key, value in h.log[cut:]:
        shard.replay(*decode_record(key, value), h.now)
    shard.finish_load(h.now)
    return shard


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=5, max_size=40), cut_fraction=st.floats(0, 1))
def test_snapshot_plus_tail_equals_a_full_replay(ops, cut_fraction):
    h = Harness()
    for op in ops:
        run(h, op)
    cut = int(len(h.log) * cut_fraction)
    from_snapshot = state_of(load_from_snapshot(h, cut))
    replayed = state_of(h.restart())
    assert from_snapshot == replayed


def test_the_snapshot_holds_only_the_latest_record_of_each_key():
    h = Harness()
    for offset in range(100):
        h.commit("a", {("orders", 0): offset})
    latest = LatestRecords.empty()
    for offset, (key, value) in enumerate(h.log):
        latest.add(offset, key, value)
    assert len(latest.records) == 1 and latest.end_offset == 100
    assert state_of(load_from_snapshot(h, len(h.log))) == state_of(h.restart())


def load_from_raw_bytes(h: Harness) -> tuple[object, int]:
    """The whole log through the load's fast path (GroupShard.replay_raw, what the runtime calls for plain
    records), the records it declines through the decoded path; and how many it took."""
    shard = h.new_shard()
    shard.begin_load()
    taken = 0
    for key, value in h.log:
        if shard.replay_raw(key, value, h.now):
            taken += 1
        else:
            shard.replay(*decode_record(key, value), h.now)
    shard.finish_load(h.now)
    return shard, taken


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=5, max_size=40))
def test_replay_from_raw_bytes_equals_the_decoded_replay(ops):
    h = Harness()
    for op in ops:
        run(h, op)
    shard, taken = load_from_raw_bytes(h)
    commits = sum(1 for key, value in h.log if value is not None and key[:2] in (b"\x00\x00", b"\x00\x01"))
    assert taken == commits  # every offset commit took the fast path; tombstones and the rest did not
    assert state_of(shard) == state_of(h.restart())


def load_by_plain_batches(h: Harness, cuts: list[int]) -> tuple[object, dict[bytes, bytes], int]:
    """The whole log through GroupShard.replay_plain_batch (what the runtime calls for each plain batch), cut
    into batches at ``cuts``, a keyless record (skipped) after every batch: the shard, its latest records, count."""
    shard = h.new_shard()
    shard.begin_load()
    records = [(offset, key, value) for offset, (key, value) in enumerate(h.log)]
    latest: dict[bytes, bytes] = {}
    count = 0
    bounds = sorted({0, len(records), *(c % (len(records) + 1) for c in cuts)})
    for lo, hi in zip(bounds, bounds[1:]):
        count += shard.replay_plain_batch(records[lo:hi] + [(hi, None, b"x")], 0, h.now, latest, decode_record)
    shard.finish_load(h.now)
    return shard, latest, count


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=5, max_size=40), cuts=st.lists(st.integers(0, 200), max_size=5),
       metadata=st.sampled_from(("", "m", "métadonnée")))
def test_replay_by_plain_batches_equals_the_decoded_replay(ops, cuts, metadata):
    h = Harness()
    h.commit("a", {("orders", 0): 7}, metadata=metadata)  # the one-unpack path, or (metadata) the general one
    for op in ops:
        run(h, op)
    shard, latest, count = load_by_plain_batches(h, cuts)
    expected = LatestRecords.empty()
    for offset, (key, value) in enumerate(h.log):
        expected.add(offset, key, value)
    assert count == len(h.log)
    assert latest == expected.records and list(latest) == list(expected.records)
    assert state_of(shard) == state_of(h.restart())


def _commit_key(version: int, group: str, topic: str, partition: int) -> bytes:
    g, t = group.encode(), topic.encode()
    return (version.to_bytes(2, "big") + len(g).to_bytes(2, "big") + g + len(t).to_bytes(2, "big") + t
            + partition.to_bytes(4, "big", signed=True))


# Values replay_plain_batch sees after a key whose group-and-topic prefix is known: its own shape (v3, no
# metadata, 24 bytes), the other 24-byte shapes (v0 with 4 bytes of metadata, v3 whose length field is not 0), the
# longer ones (v1, v3 with metadata) and tombstones.
_value = st.one_of(
    st.builds(lambda o, e, ts: (3).to_bytes(2, "big") + o.to_bytes(8, "big") + e.to_bytes(4, "big", signed=True)
              + b"\x00\x00" + ts.to_bytes(8, "big"), st.integers(0, 2**40), st.integers(-1, 9), st.integers(0, 2**41)),
    st.builds(lambda o, m, ts: (0).to_bytes(2, "big") + o.to_bytes(8, "big") + b"\x00\x04" + m + ts.to_bytes(8, "big"),
              st.integers(0, 2**40), st.sampled_from((b"abcd", b"ab\x00\x00", b"\x00\x00\x00\x00")), st.integers(0, 2**41)),
    st.builds(lambda o, m, ts: (3).to_bytes(2, "big") + o.to_bytes(8, "big") + b"\xff\xff\xff\xff"
              + len(m).to_bytes(2, "big") + m + ts.to_bytes(8, "big"),
              st.integers(0, 2**40), st.sampled_from((b"x", b"meta")), st.integers(0, 2**41)),
    st.builds(lambda o, ts, ex: (1).to_bytes(2, "big") + o.to_bytes(8, "big") + b"\x00\x00" + ts.to_bytes(8, "big")
              + ex.to_bytes(8, "big"), st.integers(0, 2**40), st.integers(0, 2**41), st.integers(0, 2**41)),
    st.none(),
)
_raw_record = st.tuples(st.sampled_from((0, 1)), st.sampled_from(("a", "bb")), st.sampled_from(("orders", "p")),
                        st.integers(0, 3), _value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(_raw_record, min_size=1, max_size=30), split=st.integers(0, 30))
def test_plain_batches_of_every_value_shape_equal_the_record_by_record_replay(records, split):
    """replay_plain_batch's one-unpack path is taken on a known key prefix and a 24-byte value; any other value
    after that prefix (another version, a metadata length, tombstones) goes the record-by-record way, and the
    state and latest records are what ``replay_raw``, else the decoded ``replay``, and ``pack_latest`` give."""
    from groupcoord.coordinator.groups.runtime.snapshot import pack_latest

    log = [(offset, _commit_key(v, g, t, p), value) for offset, (v, g, t, p, value) in enumerate(records)]
    h = Harness()
    expected_shard = h.new_shard()
    expected_shard.begin_load()
    expected_latest: dict[bytes, bytes] = {}
    for offset, key, value in log:
        if not expected_shard.replay_raw(key, value, h.now):
            expected_shard.replay(*decode_record(key, value), h.now)
        expected_latest.pop(key, None)
        expected_latest[key] = pack_latest(offset, value)
    expected_shard.finish_load(h.now)

    _assert_split_replay_is(h, log, split, expected_shard, expected_latest)


def _assert_split_replay_is(h: Harness, log: list, split: int, expected_shard: object,
                            expected_latest: dict[bytes, bytes]) -> object:
    """Replays ``log`` through ``replay_plain_batch`` in two batches cut at ``split`` and asserts the state and the
    latest records (and their order) are the expected ones; returns the shard."""
    shard = h.new_shard()
    shard.begin_load()
    latest: dict[bytes, bytes] = {}
    split = min(split, len(log))
    count = shard.replay_plain_batch(log[:split], 0, h.now, latest, decode_record)
    count += shard.replay_plain_batch(log[split:], 0, h.now, latest, decode_record)
    shard.finish_load(h.now)
    assert count == len(log)
    assert latest == expected_latest and list(latest) == list(expected_latest)
    assert state_of(shard) == state_of(expected_shard)
    return shard


def _replay_record_by_record(h: Harness, log: list) -> tuple[object, dict[bytes, bytes]]:
    """The shard and latest records that ``replay_raw``, else the decoded ``replay``, and ``pack_latest`` give."""
    from groupcoord.coordinator.groups.runtime.snapshot import pack_latest

    shard = h.new_shard()
    shard.begin_load()
    latest: dict[bytes, bytes] = {}
    for offset, key, value in log:
        if key is None:
            continue
        if not shard.replay_raw(key, value, h.now):
            shard.replay(*decode_record(key, value), h.now)
        latest.pop(key, None)
        latest[key] = pack_latest(offset, value)
    shard.finish_load(h.now)
    return shard, latest


def _v3(offset: int) -> bytes:
    return (3).to_bytes(2, "big") + offset.to_bytes(8, "big") + b"\xff\xff\xff\xff\x00\x00" + (5).to_bytes(8, "big")


_commit_to = st.tuples(st.sampled_from(("a", "cg1", "new")), st.sampled_from(("orders", "p")),
                       st.sampled_from((0, 1, 2, 2**31 - 1, -1)), st.integers(0, 2**40))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits=st.lists(_commit_to, min_size=1, max_size=30), split=st.integers(0, 40),
       tables=st.sampled_from(((10_000, 100_000), (1, 2))))
def test_plain_batches_share_partitions_and_find_consumer_groups(commits, split, tables):
    """The one-unpack path keys a commit by its topic's partition table (``GroupShard._new_replay_topics``) and
    looks consumer groups up only when the shard has some: with a consumer group in the log before the commits,
    and with tables small enough to be emptied as they fill, the state and latest records are the record-by-record
    replay's, and every stored offset is keyed by the shard's shared (topic, partition) tuple."""
    from unittest import mock

    from groupcoord.coordinator.groups import shard as shard_module

    h = Harness()
    h.cg_join("cg1", "m1")
    h.commit("a", {("orders", 0): 1})
    log = [(offset, key, value) for offset, (key, value) in enumerate(h.log)]
    log += [(len(log) + i, _commit_key(1, g, t, p), _v3(o)) for i, (g, t, p, o) in enumerate(commits)]
    expected_shard, expected_latest = _replay_record_by_record(h, log)

    with mock.patch.multiple(shard_module, REPLAY_TOPICS_CACHED=tables[0], REPLAY_PARTITIONS_CACHED=tables[1]):
        shard = _assert_split_replay_is(h, log, split, expected_shard, expected_latest)
    assert "cg1" in shard.consumer_groups and "cg1" not in shard.groups
    for group in (*shard.groups.values(), *shard.consumer_groups.values()):
        for tp in group.offsets:
            assert tp is shard.state.topic_partitions[tp]
