"""The union of a consumer group's subscriptions, kept as members come, change and go, is always what a walk
over every member gives: a join extends it (a burst of joins must not rebuild it once per member), a change
or a leave rebuilds it."""

from groupcoord.coordinator.groups.consumer.subscriptions import (
    group_subscription_metadata,
    group_subscription_metadata_cached,
)
from groupcoord.protocol.errors import ErrorCode
from tests.coordinator.groups.harness import FakeTopics, Harness


def union_matches_a_walk(h: Harness, group_id: str) -> bool:
    group = h.cg_group(group_id)
    cached = group_subscription_metadata_cached(h.shard.state, group)
    walked = group_subscription_metadata(h.shard.state, group.members)
    names = {t for m in group.members.values() for t in m.subscribed_topic_names}
    return cached == walked and group.subscription_cache[1] == names


def test_joins_changes_and_leaves_keep_the_subscription_union_exact():
    h = Harness(FakeTopics(orders=3, payments=2, refunds=1))
    steps = [("a", ("orders",)), ("b", ("orders",)), ("c", ("payments",)), ("d", ("orders", "refunds"))]
    epochs = {}
    for member, topics in steps:
        answer = h.cg_join("g", member, topics=topics)
        assert answer["error_code"] == ErrorCode.none
        epochs[member] = answer["member_epoch"]
        assert union_matches_a_walk(h, "g"), f"after {member} joined"
    version = h.cg_group("g").subscriptions_version
    assert h.cg("g", "b", epochs["b"])["error_code"] == ErrorCode.none  # a plain heartbeat changes nothing
    assert h.cg_group("g").subscriptions_version == version
    assert h.cg("g", "c", epochs["c"], topics=("refunds",))["error_code"] == ErrorCode.none
    assert union_matches_a_walk(h, "g"), "after c changed its subscription"
    assert set(h.cg_group("g").subscription_cache[1]) == {"orders", "refunds"}
    assert h.cg("g", "d", -1)["error_code"] == ErrorCode.none
    assert union_matches_a_walk(h, "g"), "after d left"
