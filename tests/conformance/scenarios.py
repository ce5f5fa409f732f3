"""Classic consumer-group scenarios, each a short story told to a broker through the raw protocol.

Every scenario is `async def scenario(bootstrap) -> list[Observation]`; run against Apache Kafka its
transcript is the expected behaviour, run against groupcoord it is the behaviour under test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import wraps

from tests.conformance import requests as rq
from tests.conformance.consumer import ConsumerMember, describe_consumer_group, list_groups_typed, topic_with_id
from tests.conformance.requests import Api, Protocol
from tests.conformance.session import RANGE, Member, Session
from tests.conformance.share import ShareMember, describe_share_group, member_id as share_member_id
from tests.conformance.share_partitions.requests import set_group_configs
from tests.conformance.transcript import Observation, error_name

ROUNDROBIN = Protocol("roundrobin")
STICKY = Protocol("sticky")
GROUP_MIN_SESSION_TIMEOUT_MS = 6000
GROUP_MAX_SESSION_TIMEOUT_MS = 1800000
GHOST_MEMBER = "ghost-member-never-joined"
OFFSET_METADATA_MAX_BYTES = 4096
COORDINATION = (Api.FIND_COORDINATOR, Api.DESCRIBE_GROUPS)


@dataclass(frozen=True)
class Scenario:
    name: str
    apis: tuple[Api, ...]
    run: Callable[[str], Awaitable[list[Observation]]]


SCENARIOS: dict[str, Scenario] = {}


def scenario(*apis: Api) -> Callable[[Callable[[Session], Awaitable[None]]], Callable[[str], Awaitable[list]]]:
    """Registers a story written against a Session as a scenario run against a bootstrap address."""

    def register(story: Callable[[Session], Awaitable[None]]) -> Callable[[str], Awaitable[list[Observation]]]:
        @wraps(story)
        async def run(bootstrap: str) -> list[Observation]:
            async with Session(bootstrap) as session:
                await story(session)
                return session.transcript.steps

        SCENARIOS[story.__name__] = Scenario(story.__name__, tuple(dict.fromkeys(COORDINATION + apis)), run)
        return run

    return register


async def _second_member_joins(s: Session, group: str) -> tuple[Member, Member]:
    """A forms the group alone; B joins, which starts a rebalance that A completes by rejoining. Both are
    then members of generation 2, before any SyncGroup."""
    a, b = await s.member("A", group), await s.member("B", group)
    await a.form_group()
    await b.join_once()
    pending_b = b.join_in_background()
    await s.wait_for_members(group, 2)
    await a.join(step="A JoinGroup again")
    await b.joined(pending_b)
    return a, b


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP)
async def member_id_required_then_join(s: Session) -> None:
    """A v4+ dynamic member is first handed its member id, then joins with it (KIP-394)."""
    group = await s.group("payments")
    a = await s.member("A", group)
    await a.join_once(version=4)
    # No DescribeGroups here: Kafka's answer between the two joins is a race inside Kafka itself. Its
    # coordinator creates the group in memory but DescribeGroups reads the last committed snapshot, so the
    # same run against the same broker says Empty one time and Dead the next. groupcoord says Empty.
    await a.join_once(version=4)
    await s.describe(group, "DescribeGroups payments after the join")
    await a.sync()
    await s.describe(group, "DescribeGroups payments after the sync")


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def single_member_join_sync_heartbeat(s: Session) -> None:
    group = await s.group("billing")
    a = await s.member("A", group)
    await a.join()
    await a.sync({a.member_id: b"\x00\x00\x00\x00\x00\x00\x00\x00"})
    await a.heartbeat()
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def protocol_vote_between_three_members(s: Session) -> None:
    """The protocol is the candidate every member supports that most members prefer."""
    group = await s.group("search")
    a, b, c = [await s.member(label, group) for label in "ABC"]
    await a.form_group((RANGE, ROUNDROBIN))
    await b.join_once((ROUNDROBIN, RANGE))
    pending_b = b.join_in_background((ROUNDROBIN, RANGE))
    await s.wait_for_members(group, 2)
    await c.join_once((STICKY, ROUNDROBIN, RANGE))
    pending_c = c.join_in_background((STICKY, ROUNDROBIN, RANGE))
    await s.wait_for_members(group, 3)
    await a.heartbeat(step="A Heartbeat while B and C wait")
    await a.join((RANGE, ROUNDROBIN), step="A JoinGroup again")
    await b.joined(pending_b)
    await c.joined(pending_c)
    await a.sync()
    await b.sync()
    await c.sync()
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP)
async def inconsistent_group_protocol(s: Session) -> None:
    group = await s.group("ledger")
    a, b = await s.member("A", group), await s.member("B", group)
    await b.join_once((), step="B JoinGroup with no protocols into an empty group")
    await a.form_group((RANGE,))
    await b.join_once((ROUNDROBIN,), step="B JoinGroup with only roundrobin")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP)
async def protocol_type_mismatch(s: Session) -> None:
    group = await s.group("inventory")
    a, b = await s.member("A", group), await s.member("B", group)
    await a.form_group()
    await b.join_once(protocol_type="connect", step="B JoinGroup as a connect worker")
    await s.describe(group)


@scenario(Api.JOIN_GROUP)
async def invalid_session_timeout(s: Session) -> None:
    group = await s.group("shipping")
    a = await s.member("A", group)
    await a.join_once(session_timeout_ms=GROUP_MIN_SESSION_TIMEOUT_MS - 1, step="A JoinGroup below the minimum")
    await a.join_once(session_timeout_ms=GROUP_MAX_SESSION_TIMEOUT_MS + 1, step="A JoinGroup above the maximum")
    await a.join_once(session_timeout_ms=GROUP_MIN_SESSION_TIMEOUT_MS - 1, version=4,
                      step="A JoinGroup v4 below the minimum")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def heartbeat_errors(s: Session) -> None:
    group = await s.group("alerts")
    a, b = await s.member("A", group), await s.member("B", group)
    await a.heartbeat(step="A Heartbeat before the group exists")
    await a.form_group()
    await a.heartbeat(member_id=GHOST_MEMBER, step="Heartbeat from an unknown member")
    await a.heartbeat(generation=a.generation + 6, step="A Heartbeat with a wrong generation")
    await b.join_once()
    pending_b = b.join_in_background()
    await s.wait_for_members(group, 2)
    await a.heartbeat(step="A Heartbeat during the rebalance")
    await a.join(step="A JoinGroup again")
    await b.joined(pending_b)
    await a.heartbeat(step="A Heartbeat before its SyncGroup")
    await a.sync()
    await b.sync()
    await b.heartbeat(step="B Heartbeat in the new generation")


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP)
async def sync_group_errors(s: Session) -> None:
    group = await s.group("reports")
    a = await s.member("A", group)
    await a.join()
    await a.sync(generation=a.generation + 1, step="A SyncGroup with the next generation")
    await a.sync(member_id=GHOST_MEMBER, step="SyncGroup from an unknown member")
    await a.sync(step="A SyncGroup")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.LEAVE_GROUP)
async def last_member_leaves(s: Session) -> None:
    group = await s.group("audit")
    a = await s.member("A", group)
    await a.form_group()
    await a.leave()
    await s.describe(group, "DescribeGroups audit right after the leave")
    await a.heartbeat(step="A Heartbeat after leaving")


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.LEAVE_GROUP)
async def batch_leave_with_unknown_member(s: Session) -> None:
    group = await s.group("fraud")
    a, b = await _second_member_joins(s, group)
    await a.sync()
    await b.sync()
    await s.leave("LeaveGroup v3 of A and an unknown member", group,
                  ((a.member_id, None), (GHOST_MEMBER, None)), version=3)
    await s.describe(group, "DescribeGroups fraud after A left")
    await b.join(step="B JoinGroup again")
    await b.sync()
    await s.describe(group, "DescribeGroups fraud with B alone")


@scenario(Api.CREATE_TOPICS, Api.OFFSET_COMMIT, Api.OFFSET_FETCH, Api.LIST_GROUPS)
async def standalone_offset_commit(s: Session) -> None:
    """A group with no members (generation -1, empty member id) may still commit, as simple consumers do."""
    orders = await s.create_topic("orders", 3)
    group = await s.group("simple")
    await s.commit_offsets("OffsetCommit standalone", group, {(orders, 0): 10, (orders, 1): 20})
    await s.fetch_offsets("OffsetFetch all topics", group, None)
    await s.fetch_offsets("OffsetFetch partitions 0-2", group, {orders: (0, 1, 2)})
    await s.describe(group)
    await s.list_groups("ListGroups")


@scenario(Api.CREATE_TOPICS, Api.JOIN_GROUP, Api.SYNC_GROUP, Api.OFFSET_COMMIT, Api.OFFSET_FETCH)
async def offset_commit_generations(s: Session) -> None:
    orders = await s.create_topic("orders", 1)
    group = await s.group("stream")
    a, b = await s.member("A", group), await s.member("B", group)
    await a.form_group(((Protocol("range", (orders,))),))
    await a.commit({(orders, 0): 5}, step="A OffsetCommit in generation 1")
    await a.commit({(orders, 0): 6}, member_id=GHOST_MEMBER, step="OffsetCommit from an unknown member")
    await b.join_once()
    pending_b = b.join_in_background()
    await s.wait_for_members(group, 2)
    await a.commit({(orders, 0): 7}, step="A OffsetCommit during the rebalance")
    stale = a.generation
    await a.join(((Protocol("range", (orders,))),), step="A JoinGroup again")
    await b.joined(pending_b)
    await a.commit({(orders, 0): 8}, step="A OffsetCommit before SyncGroup")
    await a.sync()
    await a.commit({(orders, 0): 9}, generation=stale, step="A OffsetCommit with the stale generation")
    await a.commit({(orders, 0): 10}, step="A OffsetCommit in generation 2")
    await s.fetch_offsets("OffsetFetch stream", group, {orders: (0,)})


@scenario(Api.CREATE_TOPICS, Api.OFFSET_COMMIT, Api.OFFSET_FETCH)
async def offset_commit_unknown_topic(s: Session) -> None:
    orders = await s.create_topic("orders", 2)
    missing = s.name("topic", "missing")
    group = await s.group("mixed")
    await s.commit_offsets("OffsetCommit to a known and an unknown topic", group,
                           {(orders, 0): 3, (orders, 1): 4, (missing, 0): 5})
    await s.commit_offsets("OffsetCommit to a partition the topic lacks", group, {(orders, 7): 1})
    await s.fetch_offsets("OffsetFetch mixed", group, None)


@scenario(Api.OFFSET_FETCH)
async def offset_fetch_unknown_group(s: Session) -> None:
    group = await s.group("nobody")
    await s.fetch_offsets("OffsetFetch all topics of an unknown group", group, None)
    await s.fetch_offsets("OffsetFetch partitions of an unknown group", group, {s.name("topic", "orders"): (0, 1)})


@scenario()
async def describe_unknown_group(s: Session) -> None:
    group = await s.group("phantom")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.OFFSET_COMMIT, Api.LIST_GROUPS, Api.CREATE_TOPICS)
async def list_groups_by_state(s: Session) -> None:
    orders = await s.create_topic("orders", 1)
    active, simple = await s.group("active"), await s.group("simple")
    a = await s.member("A", active)
    await a.form_group()
    await s.commit_offsets("OffsetCommit standalone", simple, {(orders, 0): 1})
    await s.list_groups("ListGroups")
    await s.list_groups("ListGroups Empty only", ("Empty",))
    await s.list_groups("ListGroups Stable and Dead", ("Stable", "Dead"))


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.LEAVE_GROUP, Api.OFFSET_COMMIT, Api.OFFSET_FETCH,
          Api.DELETE_GROUPS, Api.CREATE_TOPICS)
async def delete_groups(s: Session) -> None:
    orders = await s.create_topic("orders", 1)
    group, unknown = await s.group("retired"), s.name("group", "unknown")
    a = await s.member("A", group)
    await a.form_group()
    await a.commit({(orders, 0): 42})
    await s.delete_groups("DeleteGroups of a group with a member and an unknown group", group, unknown)
    await a.leave()
    await s.delete_groups("DeleteGroups of the emptied group", group)
    await s.describe(group, "DescribeGroups retired after deletion")
    await s.fetch_offsets("OffsetFetch retired after deletion", group, {orders: (0,)})
    await s.delete_groups("DeleteGroups of the deleted group", group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT, Api.OFFSET_COMMIT, Api.CREATE_TOPICS)
async def static_member_rejoins_with_new_id(s: Session) -> None:
    """A restarted static member takes over its instance id; the old member id is fenced (KIP-345)."""
    orders = await s.create_topic("orders", 1)
    group = await s.group("static")
    first = await s.member("A", group, instance_id="instance-a")
    await first.join()
    await first.sync({first.member_id: b"\x00\x00\x00\x00\x00\x00\x00\x01"})
    restarted = await s.member("A-restarted", group, instance_id="instance-a")
    await restarted.join(step="A-restarted JoinGroup with the same instance id")
    await first.heartbeat(step="A Heartbeat with the replaced member id")
    await first.commit({(orders, 0): 1}, step="A OffsetCommit with the replaced member id")
    await restarted.heartbeat(step="A-restarted Heartbeat")
    await restarted.sync(step="A-restarted SyncGroup")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.OFFSET_COMMIT, Api.OFFSET_DELETE, Api.OFFSET_FETCH,
          Api.CREATE_TOPICS)
async def offset_delete_of_subscribed_topic(s: Session) -> None:
    orders, refunds = await s.create_topic("orders", 1), await s.create_topic("refunds", 1)
    group = await s.group("checkout")
    a = await s.member("A", group)
    await a.form_group((Protocol("range", (orders,)),))
    await a.commit({(orders, 0): 11, (refunds, 0): 12})
    await s.delete_offsets("OffsetDelete of both topics", group, {orders: (0,), refunds: (0,)})
    await s.fetch_offsets("OffsetFetch checkout", group, {orders: (0,), refunds: (0,)})
    await s.delete_offsets("OffsetDelete in an unknown group", s.name("group", "unknown"), {orders: (0,)})


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP)
async def join_group_errors(s: Session) -> None:
    group = await s.group("orders")
    a, ghost = await s.member("A", group), await s.member("ghost", group)
    await ghost.join_once(member_id=GHOST_MEMBER, step="JoinGroup of an unknown member id into a new group")
    await a.form_group()
    await ghost.join_once(member_id=GHOST_MEMBER, step="JoinGroup of an unknown member id into a stable group")
    nameless = await s.member("N", "")
    await nameless.join_once(step="JoinGroup with an empty group id")
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def follower_sync_waits_for_the_leader(s: Session) -> None:
    """A follower's SyncGroup is answered only once the leader has sent the assignment for it."""
    group = await s.group("pricing")
    a, b = await _second_member_joins(s, group)
    pending_sync = b.sync_in_background()
    await s.describe(group, "DescribeGroups pricing while B's SyncGroup waits")
    await a.sync({a.member_id: rq.assignment({"pricing-topic": (0, 2)}),
                  b.member_id: rq.assignment({"pricing-topic": (1, 3)})})
    await b.synced(pending_sync)
    await b.heartbeat()
    await s.describe(group)


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def members_rejoin_a_stable_group(s: Session) -> None:
    """An unchanged follower rejoins without a rebalance; a changed subscription starts one."""
    group = await s.group("catalog")
    a, b = await _second_member_joins(s, group)
    await a.sync()
    await b.sync()
    await b.join(step="B JoinGroup again, unchanged")
    await s.describe(group, "DescribeGroups catalog after the unchanged rejoin")
    pending_b = b.join_in_background((Protocol("range", ("new-topic",)),))
    await s.wait_for_state(group, "PreparingRebalance")
    await a.heartbeat(step="A Heartbeat after B changed its subscription")
    await a.join(step="A JoinGroup for the new generation")
    await b.joined(pending_b, "B JoinGroup with a new subscription (parked)")


@scenario(Api.OFFSET_COMMIT, Api.OFFSET_FETCH, Api.CREATE_TOPICS)
async def offset_metadata_size_limit(s: Session) -> None:
    """offset.metadata.max.bytes (4096) bounds the metadata string stored with a commit."""
    orders = await s.create_topic("orders", 1)
    group = await s.group("notes")
    await s.commit_offsets("OffsetCommit with 4096 bytes of metadata", group, {(orders, 0): 1},
                           metadata="m" * OFFSET_METADATA_MAX_BYTES)
    await s.commit_offsets("OffsetCommit with 4097 bytes of metadata", group, {(orders, 0): 2},
                           metadata="m" * (OFFSET_METADATA_MAX_BYTES + 1))
    await s.commit_offsets("OffsetCommit with null metadata", group, {(orders, 0): 3}, metadata=None)
    await s.fetch_offsets("OffsetFetch notes", group, {orders: (0,)})


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def silent_member_expires(s: Session) -> None:
    """A member that stops heartbeating is removed after its session timeout; the group falls Empty."""
    group = await s.group("telemetry")
    a = await s.member("A", group)
    await a.form_group()
    await s.wait_for_state(group, "Empty")
    await s.describe(group, "DescribeGroups telemetry after the session timeout")
    await a.heartbeat(step="A Heartbeat after expiring")
    await a.join(step="A JoinGroup again with its old member id")


@scenario(Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT)
async def rebalance_timeout_drops_the_laggard(s: Session) -> None:
    """Members that do not rejoin within the rebalance timeout are dropped from the new generation."""
    group = await s.group("ingest")
    a, b, c = [await s.member(label, group) for label in "ABC"]
    short = {"rebalance_timeout_ms": 3000}
    await a.join(**short)
    await a.sync()
    await b.join_once(**short)
    pending_b = b.join_in_background(**short)
    await s.wait_for_members(group, 2)
    await a.join(step="A JoinGroup again", **short)
    await b.joined(pending_b)
    await a.sync()
    await b.sync()
    await c.join_once(**short)
    pending_c = c.join_in_background(**short)
    await s.wait_for_members(group, 3)
    await a.join(step="A JoinGroup again while B stays away", **short)
    await c.joined(pending_c)
    await b.heartbeat(step="B Heartbeat after the rebalance finished without it")
    await s.describe(group)


# ---------------------------------------------------------------------------------------------- KIP-848

CONSUMER_APIS = (Api.CONSUMER_GROUP_HEARTBEAT, Api.CONSUMER_GROUP_DESCRIBE, Api.CREATE_TOPICS, Api.METADATA)


@scenario(*CONSUMER_APIS)
async def consumer_group_heartbeat_validation(s: Session) -> None:
    """Requests refused before they reach a group, each with Kafka's code and message."""
    labels: dict = {}
    topic, topic_id = await topic_with_id(s, "cg-orders", 2, labels)
    group = await s.group("cg-validation")
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.send("join without a rebalance timeout", 0, topics=(topic,), owned=())
    await a.send("join without topic partitions", 0, topics=(topic,), rebalance_timeout_ms=30000)
    await a.send("join owning partitions", 0, topics=(topic,), rebalance_timeout_ms=30000, owned=((topic_id, (0,)),))
    await a.send("join without a subscription", 0, owned=(), rebalance_timeout_ms=30000)
    await a.send("join with an empty member id (v1)", 0, member_id="", topics=(topic,), owned=(), rebalance_timeout_ms=30000)
    await a.send("join with a blank instance id", 0, topics=(topic,), owned=(), rebalance_timeout_ms=30000, instance_id=" ")
    await a.send("join with an unknown assignor", 0, topics=(topic,), owned=(), rebalance_timeout_ms=30000, assignor="sticky")
    await a.send("static leave without an instance id", -2)
    await a.send("epoch -3", -3)
    await a.send("heartbeat of a group that does not exist", 5)
    await a.send("leave of a group that does not exist", -1)
    await describe_consumer_group_step(s, "ConsumerGroupDescribe of a group that does not exist", group, labels)


async def describe_consumer_group_step(s: Session, step: str, group: str, labels: dict, exact: bool = True) -> None:
    await describe_consumer_group(s, step, group, labels, exact)


@scenario(*CONSUMER_APIS)
async def consumer_group_v0_generates_the_member_id(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-v0", 2, labels)
    group = await s.group("cg-v0")
    a = await ConsumerMember.create(s, "A", group, labels)
    a.member_id = ""
    response = await a.send("A joins with v0 and no member id", 0, topics=(topic,), owned=(), rebalance_timeout_ms=30000,
                            version=0)
    a.member_id = response.member_id
    s.transcript.record("the generated member id", length=len(response.member_id))
    await a.send("A heartbeats with its generated id", a.epoch, version=0)
    await a.send("A leaves", -1, version=0)


@scenario(*CONSUMER_APIS, Api.LIST_GROUPS, Api.DELETE_GROUPS, Api.OFFSET_COMMIT)
async def consumer_group_members_share_and_leave(s: Session) -> None:
    """Two members split a topic: the second gets partitions only once the first has revoked them. Then
    fencing, unknown members, the other group APIs on a consumer group, and the leaves."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-share", 4, labels)
    group = await s.group("cg-share")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await a.join((topic,))
    await describe_consumer_group_step(s, "ConsumerGroupDescribe with A", group, labels)
    await b.join((topic,))
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after B joined", group, labels, exact=False)
    await list_groups_typed(s, "ListGroups v5 consumer while reconciling", ("consumer",))
    await a.heartbeat(step="A is told what to keep", exact=False)
    await b.heartbeat(step="B waits for the partitions", exact=False)
    await a.heartbeat(step="A reports it revoked", ack=True, exact=False)
    await b.heartbeat(step="B gets the released partitions", exact=False)
    await describe_consumer_group_step(s, "ConsumerGroupDescribe once stable", group, labels, exact=False)
    await a.heartbeat(step="A with a future epoch", epoch=a.epoch + 5)
    await a.send("a member that never joined", a.epoch, member_id=s.name("member", "ghost"))
    await s.commit_offsets("OffsetCommit with A's epoch", group, {(topic, 0): 5}, generation=a.epoch, member_id=a.member_id)
    await s.commit_offsets("OffsetCommit with a future epoch", group, {(topic, 0): 6}, generation=a.epoch + 1,
                           member_id=a.member_id)
    await s.commit_offsets("OffsetCommit as an admin", group, {(topic, 0): 7})
    await s.fetch_offsets("OffsetFetch of the consumer group", group, {topic: (0,)})
    await s.describe(group, "DescribeGroups v5 of a consumer group")
    await list_groups_typed(s, "ListGroups v5 classic", ("classic",))
    await list_groups_typed(s, "ListGroups v5 consumer", ("consumer",))
    await list_groups_typed(s, "ListGroups v5 stable", (), ("Stable",))
    await s.delete_groups("DeleteGroups while members remain", group)
    await b.leave()
    await a.heartbeat(step="A after B left", exact=False)
    await a.leave()
    await describe_consumer_group_step(s, "ConsumerGroupDescribe when empty", group, labels)
    await a.heartbeat(step="A after it left")
    await s.delete_groups("DeleteGroups of the empty group", group)


@scenario(*CONSUMER_APIS, Api.JOIN_GROUP, Api.SYNC_GROUP)
async def consumer_group_heartbeat_on_a_classic_group(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-classic", 2, labels)
    group = await s.group("cg-classic")
    classic = await s.member("C", group)
    await classic.form_group()
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.join((topic,), step="A joins a classic group with a member")
    await a.send("A heartbeats a classic group", 3)
    await describe_consumer_group_step(s, "ConsumerGroupDescribe of a classic group", group, labels)


@scenario(*CONSUMER_APIS)
async def consumer_group_range_assignor(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-range", 4, labels)
    group = await s.group("cg-range")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await a.join((topic,), assignor="range")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe with the range assignor", group, labels)
    await b.join((topic,), assignor="range")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe with two members", group, labels)
    await a.heartbeat(step="A is told what to keep")
    await a.heartbeat(step="A reports it revoked", ack=True)
    await b.heartbeat(step="B gets its range")
    await b.leave()
    await a.heartbeat(step="A after B left")
    await a.leave()


@scenario(*CONSUMER_APIS, Api.OFFSET_COMMIT)
async def consumer_group_commit_with_the_previous_epoch(s: Session) -> None:
    """A member that moved to a new epoch commits with the one before (its commit raced the heartbeat)."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-previous", 2, labels)
    group = await s.group("cg-previous")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await a.join((topic,))
    await b.join((topic,))
    await a.heartbeat(step="A is told what to keep", exact=False)
    await a.heartbeat(step="A reports it revoked", ack=True, exact=False)
    kept = next(iter(a.owned.values()))[0]
    await s.commit_offsets("OffsetCommit of a kept partition with the previous epoch", group, {(topic, kept): 5},
                           generation=a.epoch - 1, member_id=a.member_id)
    await s.commit_offsets("OffsetCommit of a kept partition with the current epoch", group, {(topic, kept): 6},
                           generation=a.epoch, member_id=a.member_id)
    await b.leave()
    await a.leave()


@scenario(*CONSUMER_APIS)
async def consumer_group_static_member_rejoins(s: Session) -> None:
    """A static member leaves with epoch -2 and its instance comes back under a new member id."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-static", 2, labels)
    group = await s.group("cg-static")
    a, a2 = await ConsumerMember.create_all(s, group, labels, "A", "A2")
    instance = "instance-a"
    await a.join((topic,), instance_id=instance)
    await a2.join((topic,), instance_id=instance, step="A2 joins with A's instance id while A is there")
    await a2.send("A2 heartbeats with A's instance id", 2, instance_id=instance)
    await a.send("A heartbeats with an unknown instance id", a.epoch, instance_id="instance-unknown")
    await a.send("A leaves temporarily", -2, instance_id=instance)
    await describe_consumer_group_step(s, "ConsumerGroupDescribe while A is away", group, labels)
    await a2.join((topic,), instance_id=instance, step="A2 takes A's place")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after A2 took A's place", group, labels)
    await a.send("A heartbeats after it was replaced", a.epoch, instance_id=instance)
    await a2.send("A2 leaves for good", -1, instance_id=instance)
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after A2 left", group, labels)


@scenario(*CONSUMER_APIS)
async def consumer_group_member_changes_its_subscription(s: Session) -> None:
    """A member drops a topic from its subscription, then subscribes to it again."""
    labels: dict = {}
    first, _ = await topic_with_id(s, "cg-first", 2, labels)
    second, _ = await topic_with_id(s, "cg-second", 2, labels)
    group = await s.group("cg-subscription")
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.join((first, second))
    await a.send("A drops the second topic", a.epoch, topics=(first,))
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after the change", group, labels)
    await a.heartbeat(step="A heartbeats")
    await a.send("A subscribes to both again, reporting what it owns", a.epoch, topics=(first, second),
                 owned=tuple(a.owned.items()))
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after subscribing again", group, labels)
    await a.leave()


@scenario(*CONSUMER_APIS, Api.OFFSET_COMMIT, Api.OFFSET_FETCH)
async def consumer_group_offset_fetch_with_member_epoch(s: Session) -> None:
    """OffsetFetch v9 names the member and its epoch; the coordinator checks them against the consumer group."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-fetch", 1, labels)
    group = await s.group("cg-fetch")
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.join((topic,))
    await s.commit_offsets("A commits", group, {(topic, 0): 11}, generation=a.epoch, member_id=a.member_id)
    parts = {topic: (0,)}
    await s.fetch_offsets("OffsetFetch v9 as A", group, parts, member_id=a.member_id, member_epoch=a.epoch, version=9)
    await s.fetch_offsets("OffsetFetch v9 with a stale epoch", group, parts, member_id=a.member_id,
                          member_epoch=a.epoch - 1, version=9)
    await s.fetch_offsets("OffsetFetch v9 with a future epoch", group, parts, member_id=a.member_id,
                          member_epoch=a.epoch + 1, version=9)
    await s.fetch_offsets("OffsetFetch v9 of an unknown member", group, parts, member_id=s.name("member", "ghost"),
                          member_epoch=a.epoch, version=9)
    await s.fetch_offsets("OffsetFetch v9 without a member", group, parts, version=9)
    await a.leave()


@scenario(*CONSUMER_APIS, Api.OFFSET_COMMIT, Api.OFFSET_DELETE, Api.OFFSET_FETCH)
async def consumer_group_offset_delete(s: Session) -> None:
    """OffsetDelete on a consumer group with a member: refused for the subscribed topic only."""
    labels: dict = {}
    subscribed, _ = await topic_with_id(s, "cg-subscribed", 1, labels)
    other, _ = await topic_with_id(s, "cg-other", 1, labels)
    group = await s.group("cg-offset-delete")
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.join((subscribed,))
    await s.commit_offsets("A commits both topics", group, {(subscribed, 0): 3, (other, 0): 4}, generation=a.epoch,
                           member_id=a.member_id)
    await s.delete_offsets("OffsetDelete of both topics", group, {subscribed: (0,), other: (0,)})
    await s.fetch_offsets("OffsetFetch after the delete", group, None)
    await a.leave()
    await s.delete_offsets("OffsetDelete once the group is empty", group, {subscribed: (0,)})
    await s.fetch_offsets("OffsetFetch at the end", group, None)


@scenario(*CONSUMER_APIS)
async def consumer_group_regex_subscription(s: Session) -> None:
    """A member subscribes with a regular expression instead of topic names."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-regex", 2, labels)
    group = await s.group("cg-regex")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await b.send("B joins with an invalid regex", 0, regex="[", owned=(), rebalance_timeout_ms=30000)
    await a.send("A joins with a regex", 0, regex=topic.replace("cg-regex", "cg-reg.x"), owned=(),
                 rebalance_timeout_ms=30000)
    # No ConsumerGroupDescribe here: Kafka resolves the regex on a background thread, so whether the group
    # epoch was already bumped when a describe arrives is a race inside Kafka itself.
    await a.leave()


@scenario(*CONSUMER_APIS, Api.JOIN_GROUP, Api.SYNC_GROUP, Api.HEARTBEAT, Api.LEAVE_GROUP)
async def classic_apis_on_a_consumer_group(s: Session) -> None:
    """Classic-protocol requests naming a consumer group and its consumer-protocol members."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-classic-apis", 1, labels)
    group = await s.group("cg-classic-apis")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await a.join((topic,))
    await b.join((topic,), instance_id="instance-b")
    classic = await s.member("C", group)
    classic.member_id, classic.generation = a.member_id, a.epoch
    await classic.heartbeat(step="classic Heartbeat as A")
    await classic.sync({}, step="classic SyncGroup as A")
    ghost = s.name("member", "ghost")
    await classic.heartbeat(step="classic Heartbeat as an unknown member", member_id=ghost)
    await classic.sync({}, step="classic SyncGroup as an unknown member", member_id=ghost)
    await s.leave("LeaveGroup of A and of an unknown member", group,
                  ((a.member_id, None), (s.name("member", "ghost"), None)))
    await s.leave("LeaveGroup of B's instance with a wrong member id", group, ((a.member_id, "instance-b"),))
    await s.leave("LeaveGroup of B's instance by an admin", group, (("", "instance-b"),))
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after the leaves", group, labels)
    await a.leave()
    empty = await s.member("D", group)
    await empty.join(step="D JoinGroup into the empty consumer group")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe after D joined", group, labels)
    await s.describe(group, "DescribeGroups after D joined")


@scenario(*CONSUMER_APIS, Api.JOIN_GROUP)
async def classic_join_into_a_consumer_group_with_members(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-mixed", 1, labels)
    group = await s.group("cg-mixed")
    a = await ConsumerMember.create(s, "A", group, labels)
    await a.join((topic,))
    classic = await s.member("C", group)
    await classic.join_once(step="C JoinGroup v9 into the consumer group")


@scenario(*CONSUMER_APIS)
async def consumer_group_rebalance_timeout_fences_a_member(s: Session) -> None:
    """A member told to revoke partitions that keeps them past its rebalance timeout is fenced from the group."""
    import asyncio

    labels: dict = {}
    topic, _ = await topic_with_id(s, "cg-slow", 2, labels)
    group = await s.group("cg-slow")
    a, b = await ConsumerMember.create_all(s, group, labels, "A", "B")
    await a.send("A joins with a 2 s rebalance timeout", 0, topics=(topic,), owned=(), rebalance_timeout_ms=2000)
    await b.join((topic,))
    await a.heartbeat(step="A is told to revoke one partition", exact=False)
    await a.send("A heartbeats still owning both", a.epoch, owned=((next(iter(a.owned)), (0, 1)),), exact=False)
    await asyncio.sleep(3.5)  # past A's rebalance timeout; B's session (45 s) is not at risk
    await a.heartbeat(step="A after its rebalance timeout")
    await b.heartbeat(step="B then gets every partition")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe at the end", group, labels)
    await b.leave()


# ---------------------------------------------------------------------------------------------- KIP-932

SHARE_APIS = (Api.SHARE_GROUP_HEARTBEAT, Api.SHARE_GROUP_DESCRIBE, Api.CREATE_TOPICS, Api.METADATA)


def _at_least(n: int):
    return lambda count: count >= n


@scenario(*SHARE_APIS)
async def share_group_heartbeat_validation(s: Session) -> None:
    """Requests refused before they reach a group, and the errors of a group that does not exist."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-orders", 2, labels)
    group = await s.group("sg-validation")
    a = await ShareMember.create(s, "A", group, labels)
    await a.send("join with an empty member id", 0, member_id="", topics=(topic,))
    await a.send("join without a subscription", 0)
    await a.send("join with an empty subscription", 0, topics=())
    await a.send("join with a blank rack", 0, topics=(topic,), rack_id=" ")
    await a.send("epoch -2", -2)
    await a.send("heartbeat of a group that does not exist", 5)
    await a.send("leave of a group that does not exist", -1)
    await describe_share_group(s, "ShareGroupDescribe of a group that does not exist", group, labels)


@scenario(*SHARE_APIS, Api.LIST_GROUPS, Api.DELETE_GROUPS)
async def share_group_join_and_leave(s: Session) -> None:
    """One member: joins with nothing (the share-partition state is not initialised yet), gets every
    partition once it is, leaves; the empty group is listed and deleted."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-solo", 3, labels)
    group = await s.group("sg-solo")
    a = await ShareMember.create(s, "A", group, labels)
    await a.join((topic,))
    await a.until_assigned(_at_least(3))
    await a.heartbeat(step="A heartbeats when nothing changed")
    await describe_share_group(s, "ShareGroupDescribe with A", group, labels)
    await list_groups_typed(s, "ListGroups v5 share", ("share",))
    await list_groups_typed(s, "ListGroups v5 consumer (no share group)", ("consumer",))
    await list_groups_typed(s, "ListGroups v5 stable", (), ("Stable",))
    await s.describe(group, "DescribeGroups v5 of a share group")
    await s.delete_groups("DeleteGroups while A is a member", group)
    await a.leave()
    await describe_share_group(s, "ShareGroupDescribe when empty", group, labels)
    await list_groups_typed(s, "ListGroups v5 empty", (), ("Empty",))
    await a.heartbeat(step="A after it left")
    await s.delete_groups("DeleteGroups of the empty share group", group)
    await describe_share_group(s, "ShareGroupDescribe after the delete", group, labels)


@scenario(*SHARE_APIS)
async def share_group_two_members_split_partitions(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-pair", 4, labels)
    group = await s.group("sg-pair")
    a, b = [await ShareMember.create(s, label, group, labels) for label in ("A", "B")]
    await a.join((topic,))
    await a.until_assigned(_at_least(4))
    await b.join((topic,), exact=False)
    await b.until_assigned(_at_least(2), exact=False)
    await a.until_assigned(lambda n: n == 2, exact=False)
    await describe_share_group(s, "ShareGroupDescribe with two members", group, labels, exact=False)
    await b.leave()
    await a.until_assigned(_at_least(4), step="A after B left")
    await a.leave()


@scenario(*SHARE_APIS)
async def share_group_three_members(s: Session) -> None:
    """Three members on six partitions get two each; on two partitions they share them (Kafka's
    desiredSharing: each partition goes to ceil(members / partitions) members). The first member waits
    for its partitions, so the others join a group whose share-partition state exists."""
    labels: dict = {}
    six, _ = await topic_with_id(s, "sg-six", 6, labels)
    group = await s.group("sg-three")
    a, b, c = [await ShareMember.create(s, label, group, labels) for label in ("A", "B", "C")]
    await a.join((six,))
    await a.until_assigned(_at_least(6))
    for m in (b, c):
        await m.join((six,), exact=False)
    for m in (a, b, c):
        await m.until_assigned(lambda n: n == 2, exact=False)
    await describe_share_group(s, "ShareGroupDescribe, three members on six partitions", group, labels, exact=False)
    for m in (a, b, c):
        await m.leave()
    two, _ = await topic_with_id(s, "sg-two", 2, labels)
    shared = await s.group("sg-shared")
    d, e, f = [await ShareMember.create(s, label, shared, labels) for label in ("D", "E", "F")]
    await d.join((two,))
    await d.until_assigned(_at_least(2))
    for m in (e, f):
        await m.join((two,), exact=None)
    for m in (d, e, f):
        await m.until_assigned(_at_least(1), exact=None)
    await describe_share_group(s, "ShareGroupDescribe, three members sharing two partitions", shared, labels, exact=None)
    for m in (d, e, f):
        await m.leave()


@scenario(*SHARE_APIS)
async def share_group_subscription_change(s: Session) -> None:
    labels: dict = {}
    orders, _ = await topic_with_id(s, "sg-sub-orders", 2, labels)
    payments, _ = await topic_with_id(s, "sg-sub-payments", 3, labels)
    group = await s.group("sg-sub")
    a = await ShareMember.create(s, "A", group, labels)
    await a.join((orders,))
    await a.until_assigned(_at_least(2))
    await a.heartbeat(step="A subscribes to payments instead", topics=(payments,))
    await a.until_assigned(lambda n: n == 3, step="A has the payments partitions")
    await a.heartbeat(step="A subscribes to both", topics=(orders, payments))
    await a.until_assigned(lambda n: n == 5, step="A has both topics")
    await describe_share_group(s, "ShareGroupDescribe after the changes", group, labels)
    await a.leave()


@scenario(*SHARE_APIS)
async def share_group_epochs_and_unknown_members(s: Session) -> None:
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-epochs", 1, labels)
    group = await s.group("sg-epochs")
    a = await ShareMember.create(s, "A", group, labels)
    await a.join((topic,))
    await a.until_assigned(_at_least(1))
    await a.heartbeat(step="A with a future epoch", epoch=a.epoch + 5)
    await a.heartbeat(step="A with the previous epoch", epoch=a.epoch - 1)
    await a.heartbeat(step="A with an old epoch", epoch=1)
    await a.send("a member that never joined", a.epoch, member_id=share_member_id(s, "ghost"))
    await a.send("a member that never joined leaves", -1, member_id=share_member_id(s, "ghost"))
    await a.send("a member id longer than 36 characters", a.epoch, member_id="m" * 37)
    await a.send("A rejoins with epoch 0", 0, topics=(topic,))
    await a.leave()


@scenario(*SHARE_APIS, Api.CONSUMER_GROUP_HEARTBEAT, Api.CONSUMER_GROUP_DESCRIBE, Api.JOIN_GROUP, Api.HEARTBEAT,
          Api.SYNC_GROUP, Api.LEAVE_GROUP, Api.OFFSET_COMMIT, Api.OFFSET_FETCH, Api.LIST_GROUPS, Api.DELETE_GROUPS)
async def share_group_type_conflicts(s: Session) -> None:
    """A group id belongs to one group type: the other types' APIs refuse it with Kafka's errors."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-types", 2, labels)
    consumers = await s.group("sg-types-consumer")
    c = await ConsumerMember.create(s, "C", consumers, labels)
    await c.join((topic,))
    sharer = await ShareMember.create(s, "S", consumers, labels)
    await sharer.join((topic,), step="a share member joins a consumer group")
    await describe_share_group(s, "ShareGroupDescribe of a consumer group", consumers, labels)
    await c.leave()
    shared = await s.group("sg-types-share")
    a = await ShareMember.create(s, "A", shared, labels)
    await a.join((topic,))
    k = await ConsumerMember.create(s, "K", shared, labels)
    await k.join((topic,), step="a consumer member joins a share group")
    await describe_consumer_group_step(s, "ConsumerGroupDescribe of a share group", shared, labels)
    classic = await s.member("L", shared)
    await classic.join()
    await classic.heartbeat(generation=1, member_id="classic-member", step="Heartbeat to a share group")
    await classic.sync(generation=1, member_id="classic-member", step="SyncGroup to a share group")
    await s.leave("LeaveGroup from a share group", shared, (("classic-member", None),))
    await s.commit_offsets("OffsetCommit to a share group", shared, {(topic, 0): 5})
    await s.fetch_offsets("OffsetFetch of a share group", shared, {topic: (0,)})
    await s.describe(shared, "DescribeGroups v5 of a share group")
    await list_groups_typed(s, "ListGroups v5 share and consumer", ("share", "consumer"))
    await s.delete_groups("DeleteGroups of a share group with a member", shared)
    await a.leave()


@scenario(*SHARE_APIS, Api.INCREMENTAL_ALTER_CONFIGS)
async def share_group_session_timeout(s: Session) -> None:
    """A member that stops heartbeating is removed after the group's share.session.timeout.ms (2 s here, set
    through IncrementalAlterConfigs on GROUP with a 1 s share.heartbeat.interval.ms; both brokers run with
    group.share.min.session.timeout.ms=2000) and its partitions go to the one that stays."""
    labels: dict = {}
    topic, _ = await topic_with_id(s, "sg-expiry", 2, labels)
    group = await s.group("sg-expiry")
    configured = await s.admin(set_group_configs(group, {"share.session.timeout.ms": "2000",
                                                         "share.heartbeat.interval.ms": "1000"}))
    s.transcript.record("the group's share sessions last 2 s", errors=[error_name(r.error_code)
                                                                        for r in configured.responses])
    a, b = [await ShareMember.create(s, label, group, labels) for label in ("A", "B")]
    await a.join((topic,))
    await a.until_assigned(_at_least(2))
    await b.join((topic,), exact=False)
    await b.until_assigned(_at_least(1), exact=False)
    deadline = asyncio.get_running_loop().time() + 4.0
    while asyncio.get_running_loop().time() < deadline:  # A keeps its session; B goes silent
        await a.send(None, a.epoch, record=False)
        await asyncio.sleep(0.5)
    await describe_share_group(s, "ShareGroupDescribe after B's session ran out", group, labels, exact=False)
    await a.until_assigned(_at_least(2), step="A has every partition again")
    await b.heartbeat(step="B heartbeats after its session ran out")
    await a.leave()


@scenario(*SHARE_APIS)
async def share_group_topic_created_after_the_subscription(s: Session) -> None:
    """A member subscribed to a topic that does not exist yet has nothing; once the topic exists its
    share-partition state is initialised and the member gets it."""
    labels: dict = {}
    group = await s.group("sg-later")
    a = await ShareMember.create(s, "A", group, labels)
    missing = s.name("topic", "sg-later")
    await a.join((missing,))
    await a.heartbeat(step="A heartbeats while the topic is missing")
    await describe_share_group(s, "ShareGroupDescribe while the topic is missing", group, labels)
    await topic_with_id(s, "sg-later", 2, labels)
    await a.until_assigned(_at_least(2), step="A has the new topic's partitions")
    await a.leave()


@scenario(*SHARE_APIS, Api.DELETE_TOPICS)
async def share_group_subscribed_topic_deleted(s: Session) -> None:
    """A subscribed topic that is deleted leaves the member's assignment (the group epoch moves on)."""
    labels: dict = {}
    keep, _ = await topic_with_id(s, "sg-keep", 2, labels)
    drop, _ = await topic_with_id(s, "sg-drop", 2, labels)
    group = await s.group("sg-deleted-topic")
    a = await ShareMember.create(s, "A", group, labels)
    await a.join((keep, drop))
    await a.until_assigned(_at_least(4))
    response = await s.admin(rq.delete_topics(drop))
    s.transcript.record("DeleteTopics sg-drop", errors=[error_name(r.error_code) for r in response.responses])
    await asyncio.sleep(1.0)  # Kafka's coordinator learns of the deletion from its next metadata image
    await a.until_assigned(lambda n: n == 2, step="A after the topic was deleted")
    await describe_share_group(s, "ShareGroupDescribe after the topic was deleted", group, labels)
    await a.leave()


@scenario(*SHARE_APIS)
async def share_group_members_with_different_subscriptions(s: Session) -> None:
    """Heterogeneous subscriptions: each topic is shared out among the members subscribed to it."""
    labels: dict = {}
    both, _ = await topic_with_id(s, "sg-het-both", 4, labels)
    only_b, _ = await topic_with_id(s, "sg-het-b", 2, labels)
    group = await s.group("sg-het")
    a, b = [await ShareMember.create(s, label, group, labels) for label in ("A", "B")]
    await a.join((both,))
    await a.until_assigned(_at_least(4))
    await b.join((both, only_b), exact=False)
    await b.until_assigned(lambda n: n == 4, exact=False)
    await a.until_assigned(lambda n: n == 2, exact=False)
    await describe_share_group(s, "ShareGroupDescribe with different subscriptions", group, labels, exact=False)
    await a.leave()
    await b.until_assigned(lambda n: n == 6, step="B after A left")
    await b.leave()
