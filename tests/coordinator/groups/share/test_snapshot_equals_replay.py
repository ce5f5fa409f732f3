"""Share groups loaded from a snapshot (the latest record of each key, what compaction keeps) plus the log
past it have exactly the state a full replay gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from tests.coordinator.groups.share.harness import FakeTopics, ShareHarness
from tests.coordinator.groups.test_snapshot_equals_replay import load_from_snapshot

GROUPS = ("s1", "s2")
MEMBERS = ("m1", "m2", "m3")

operation = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(GROUPS), st.sampled_from(MEMBERS), st.sampled_from(("orders", "payments"))),
    st.tuples(st.just("heartbeat"), st.sampled_from(GROUPS), st.sampled_from(MEMBERS)),
    st.tuples(st.just("leave"), st.sampled_from(GROUPS), st.sampled_from(MEMBERS)),
    st.tuples(st.just("delete"), st.sampled_from(GROUPS)),
    st.tuples(st.just("advance"), st.sampled_from((1_000, 50_000))),
)


def run(h: ShareHarness, op: tuple) -> None:
    kind, *args = op
    if kind == "join":
        group, member, topic = args
        h.sg_join(group, member, (topic,))
    elif kind in ("heartbeat", "leave"):
        group, member = args
        existing = h.shard.share_groups.get(group)
        if existing is not None and member in existing.members:
            h.sg(group, member, existing.members[member].member_epoch if kind == "heartbeat" else -1)
    elif kind == "delete":
        h.delete_group(args[0])
    else:
        h.advance(args[0])


def state_of(shard) -> dict:
    return {gid: (g.group_epoch, g.metadata_hash, g.assignment_epoch, g.state.value, dict(g.target),
                  None if g.partitions is None else (g.partitions.initializing, g.partitions.initialized,
                                                     g.partitions.deleting),
                  {mid: (m.member_epoch, m.previous_member_epoch, m.state, m.assigned, m.subscribed_topic_names,
                         m.client_id, m.rack_id) for mid, m in g.members.items()})
            for gid, g in shard.share_groups.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, min_size=3, max_size=30), cut_fraction=st.floats(0, 1))
def test_snapshot_plus_tail_equals_a_full_replay(ops, cut_fraction):
    h = ShareHarness(FakeTopics(orders=3, payments=2))
    for op in ops:
        run(h, op)
    live = state_of(h.shard)
    cut = int(len(h.log) * cut_fraction)
    from_snapshot = state_of(load_from_snapshot(h, cut))
    replayed = state_of(h.restart())
    assert from_snapshot == replayed == live
