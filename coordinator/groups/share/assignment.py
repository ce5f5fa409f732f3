"""Target assignment and reconciliation of a share group (Kafka's maybeUpdateTargetAssignment with the
ShareTargetAssignmentBuilder, and ShareGroupAssignmentBuilder).

Only initialised share partitions are assignable: a partition whose state the share coordinator does not
hold yet is not handed to anyone (Kafka 4.3's topicAssignablePartitionsMap).
"""

from __future__ import annotations

from groupcoord.coordinator.groups.replay import emit
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState
from groupcoord.coordinator.groups.share import assignor, records
from groupcoord.coordinator.groups.share.group import ShareGroup
from groupcoord.coordinator.groups.share.member import STABLE, Assignment, ShareMember
from groupcoord.coordinator.groups.share.topics import topic_ids


def update_target(state: ShardState, group: ShareGroup, group_epoch: int, updated: ShareMember, fx: Effects,
                  now: int) -> tuple[int, Assignment]:
    """(target epoch, the member's target): computed anew when the group epoch is ahead of the assignment's."""
    if group.assignment_epoch >= group_epoch:
        return group.assignment_epoch, group.target.get(updated.member_id, {})
    members = dict(group.members)
    members[updated.member_id] = updated
    subscriptions = {mid: topic_ids(state.topics, m.subscribed_topic_names) for mid, m in members.items()}
    assignable = {t: sorted(ps) for t, ps in group.initialized().items()}
    new_target = assignor.assign(subscriptions, group.target, assignable)
    gid = group.group_id
    for mid in members:
        target = new_target.get(mid, {})
        if mid not in group.target or group.target[mid] != target:
            emit(state, fx, records.target_assignment(gid, mid, target), now)
    emit(state, fx, records.target_assignment_epoch(gid, group_epoch, now), now)
    state.log.info("computed a new share group target assignment", group_id=gid, epoch=group_epoch,
                   members=len(members))
    return group_epoch, new_target.get(updated.member_id, {})


def reconcile(state: ShardState, member: ShareMember, target_epoch: int, target: Assignment,
              subscription_changed: bool) -> ShareMember:
    """Kafka's ShareGroupAssignmentBuilder: a share member moves to the target at once (nothing to revoke),
    keeping only partitions of topics it subscribes to."""
    if not subscription_changed and member.is_reconciled_to(target_epoch):
        return member
    subscribed = topic_ids(state.topics, member.subscribed_topic_names)
    filtered = {t: ps for t, ps in target.items() if t in subscribed}
    if target_epoch != member.member_epoch:
        return member.copy(state=STABLE, assigned=filtered, previous_member_epoch=member.member_epoch,
                           member_epoch=target_epoch)
    if subscription_changed:
        return member.copy(assigned=filtered)
    return member
