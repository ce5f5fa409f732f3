"""The target assignment of a consumer group and each member's way towards it (Kafka's steps 2 and 3)."""

from __future__ import annotations

from groupcoord.coordinator.groups.consumer import assignors, records
from groupcoord.coordinator.groups.consumer.fencing import arm_rebalance_timeout
from groupcoord.coordinator.groups.consumer.group import ConsumerGroup
from groupcoord.coordinator.groups.consumer.member import Assignment, ConsumerMember
from groupcoord.coordinator.groups.consumer.reconciliation import next_assignment, same_assignment_state
from groupcoord.coordinator.groups.consumer.subscriptions import preferred_assignor, subscribed_names, subscribed_topic_ids
from groupcoord.coordinator.groups.consumer.topics import resolve
from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState


def can_compute_next_target_assignment(assignment_timestamp: int, interval_ms: int, now: int) -> bool:
    """Kafka 4.3's canComputeNextTargetAssignment: at once when no computation is recorded (timestamp 0) or
    the interval is 0 (also Kafka's escape hatch for a wall clock that jumped back), else once the
    interval since the last computation has passed."""
    if assignment_timestamp == 0 or interval_ms == 0:
        return True
    return now >= assignment_timestamp + interval_ms


def maybe_update_target_assignment(state: ShardState, group: ConsumerGroup, epoch: int, fx: Effects, now: int) -> None:
    """Kafka 4.3's assignment batching (``group.consumer.assignment.interval.ms``, per group
    ``consumer.assignment.interval.ms``), as its maybeUpdateTargetAssignment does it: a heartbeat that finds
    the group epoch ahead of the target computes a new target only if the interval since the last one has
    passed; otherwise it changes nothing and its member reconciles towards the target the group has (the
    group stays Assigning). The first heartbeat of any member after the interval computes one target for
    every epoch bump in between — 1,000 joins within a second cost one assignor run, not 1,000.

    There is deliberately no timer: Kafka 4.3.1 schedules none for consumer groups (only streams groups'
    initial delay has one), so a group nobody heartbeats in stays Assigning, and a target computed early
    by a timer would show in ConsumerGroupDescribe and in the log where Kafka's does not. Kafka's
    ``group.consumer.assignor.offload.enable`` is not a broker setting in 4.3.1 (its getter returns the
    constant and nothing reads it), so the assignor runs in the heartbeat there too."""
    if group.assignment_epoch >= epoch:
        return
    if not can_compute_next_target_assignment(group.assignment_timestamp,
                                              state.consumer_assignment_interval_ms(group.group_id), now):
        return
    update_target_assignment(state, group, group.members, epoch, fx, now)


def update_target_assignment(state: ShardState, group: ConsumerGroup, members: dict[str, ConsumerMember], epoch: int,
                             fx: Effects, now: int) -> None:
    partitions: dict = {}
    resolved: dict[str, tuple | None] = {}  # each subscribed topic looked up once, however many members name it
    # Members of a group nearly always subscribe alike: each distinct subscription is resolved once, and
    # its members share one frozenset of topic ids (which also makes the assignor's "homogeneous" test cheap).
    by_subscription: dict[tuple, frozenset] = {}
    ids_in_order = sorted(members)
    last: tuple | None = None
    for member_id in ids_in_order:
        m = members[member_id]
        names, regex = m.subscribed_topic_names, m.subscribed_topic_regex
        if last is not None and names == last[0] and regex == last[1]:
            continue  # as the member before (nearly always): nothing to resolve or hash
        subscription = last = (names, regex)
        if subscription not in by_subscription:
            ids = set()
            for name in subscribed_names(state, m):
                found = resolved[name] if name in resolved else resolved.setdefault(name, resolve(state.topics, name))
                if found is not None:
                    ids.add(found[0])
                    partitions[found[0]] = found[1]
            by_subscription[subscription] = frozenset(ids)
    target = group.target
    assignor = preferred_assignor(state, members)
    if assignor == assignors.UNIFORM and len(by_subscription) == 1:
        # One subscription (the usual group): no per-member spec, and a member whose target stays within
        # its quota gets its very target object back, so that one join costs the members it moves.
        current = {mid: target[mid] for mid in ids_in_order if mid in target}
        new = assignors.uniform_homogeneous(ids_in_order, next(iter(by_subscription.values())), current, partitions)
    else:
        specs = [assignors.MemberSpec(m.member_id, by_subscription[(m.subscribed_topic_names, m.subscribed_topic_regex)],
                                      target.get(m.member_id, {}))
                 for m in (members[member_id] for member_id in ids_in_order)]
        new = assignors.assign(assignor, specs, partitions)
    for member_id in sorted(new):
        assignment = new[member_id]
        old = target.get(member_id)
        if old is not assignment and (old is None or old != assignment):
            emit(state, fx, records.target_assignment(group.group_id, member_id, assignment), now)
    # Kafka stamps the time the assignor finished; a shard operation has one ``now`` (the assignor's own
    # milliseconds would move the next allowed computation by as much).
    emit(state, fx, records.target_assignment_epoch(group.group_id, epoch, now), now)
    state.log.info("consumer group target assignment computed", group_id=group.group_id, epoch=epoch)


def reconcile(state: ShardState, group: ConsumerGroup, member: ConsumerMember, owned: Assignment | None, fx: Effects,
              now: int, subscription_changed: bool = False) -> None:
    """Kafka's maybeReconcile: write the member's new current assignment if it moved, and arm the rebalance timeout."""
    target_epoch = group.assignment_epoch
    if not subscription_changed and member.is_reconciled_to(target_epoch):
        return
    target = group.target.get(member.member_id, {})
    nxt = next_assignment(member, target_epoch, target, group.current_partition_epoch, owned,
                          subscribed_topic_ids(state, member), subscription_changed)
    if same_assignment_state(nxt, member):
        return
    emit(state, fx, records.current_assignment(group.group_id, nxt), now)
    arm_rebalance_timeout(state, group.group_id, nxt, now)
