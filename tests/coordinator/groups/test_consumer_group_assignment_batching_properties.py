"""Assignment batching under random histories (Hypothesis): members of a KIP-848 group join, heartbeat what they
were told, leave, and time passes, with group.consumer.assignment.interval.ms at 0, 1000 or 2500. After every
step: no partition has two owners; a target is computed only when Kafka's canComputeNextTargetAssignment allows
(no earlier target, interval 0, or the interval since the last one has passed); a heartbeat that leaves the
group epoch ahead of its target did so only because the interval had not passed. At the end, members that keep
heartbeating reach one Stable epoch with every partition owned exactly once — batching delays, never strands.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from groupcoord.coordinator.groups.consumer.group import ConsumerGroupState
from groupcoord.coordinator.groups.offsets_records import ConsumerGroupTargetAssignmentMetadataValue, decode_record
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness, topic_id

MEMBERS = ("m1", "m2", "m3", "m4")
PARTITIONS = 5
ORDERS = topic_id("orders")

operation = st.one_of(
    st.tuples(st.just("join"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("heartbeat"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("leave"), st.sampled_from(MEMBERS)),
    st.tuples(st.just("advance"), st.sampled_from((100, 400, 1_000))),
)


def told(h: Harness, member: str) -> dict[str, list[int]]:
    """What a client that processed every answer owns: the member's assignment as the coordinator holds it."""
    m = h.cg_group("g").members[member]
    return {"orders": sorted(m.assigned.get(ORDERS, ()))}


def targets_written(h: Harness, since: int) -> list[ConsumerGroupTargetAssignmentMetadataValue]:
    return [decode_record(k, v)[1] for k, v in h.log[since:] if k[:2] == b"\x00\x06" and v is not None]


def check_single_owner(h: Harness) -> None:
    group = h.shard.consumer_groups.get("g")
    if group is None:
        return
    owned = [(t, p) for m in group.members.values() for src in (m.assigned, m.pending_revocation)
             for t, ps in src.items() for p in ps]
    assert len(owned) == len(set(owned)), owned


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(interval=st.sampled_from((0, 1_000, 2_500)), ops=st.lists(operation, min_size=1, max_size=40))
def test_batching_only_delays_and_never_gives_a_partition_twice(interval, ops):
    h = Harness(FakeTopics(orders=PARTITIONS), group_consumer_assignment_interval_ms=interval)
    last_stamp = 0
    for kind, *args in ops:
        group = h.shard.consumer_groups.get("g")
        members = group.members if group is not None else {}
        before = len(h.log)
        stamp_before = group.assignment_timestamp if group is not None else 0
        if kind == "join" and args[0] not in members:
            assert h.cg_join("g", args[0])["error_code"] == ErrorCode.none
        elif kind == "heartbeat" and args[0] in members:
            answer = h.cg("g", args[0], members[args[0]].member_epoch, owned=told(h, args[0]))
            assert answer["error_code"] == ErrorCode.none
        elif kind == "leave" and args[0] in members:
            assert h.cg("g", args[0], -1)["error_code"] == ErrorCode.none
        elif kind == "advance":
            h.advance(args[0])
            assert targets_written(h, before) == []  # nothing computes on its own: no timer
            continue
        else:
            continue
        check_single_owner(h)
        written = targets_written(h, before)
        assert len(written) <= 1  # one computation per heartbeat at most
        for value in written:
            assert value.assignment_timestamp == h.now
            assert last_stamp == 0 or interval == 0 or h.now - last_stamp >= interval
            last_stamp = value.assignment_timestamp
        group = h.shard.consumer_groups.get("g")
        if kind != "leave" and group is not None and group.group_epoch > group.assignment_epoch:
            # deferred: only because the interval since the last computation had not passed
            assert interval > 0 and stamp_before != 0 and h.now < stamp_before + interval

    # Liveness: members that keep heartbeating what they were told settle, batching or not.
    group = h.shard.consumer_groups.get("g")
    if group is None or not group.members:
        return
    for _ in range(12):
        if group.state is ConsumerGroupState.STABLE:
            break
        h.advance(max(interval, 100))
        for _ in range(3):  # a revocation is acknowledged in the member's next heartbeat
            for member in sorted(group.members):
                h.cg("g", member, group.members[member].member_epoch, owned=told(h, member))
                check_single_owner(h)
    assert group.state is ConsumerGroupState.STABLE
    owned = sorted(p for m in group.members.values() for p in m.assigned.get(ORDERS, ()))
    assert owned == list(range(PARTITIONS))
