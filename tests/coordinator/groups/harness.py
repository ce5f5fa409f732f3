"""A deterministic driver for one GroupShard: fake clock, fake topic catalog, a durable log kept as a list.

Each request gets a ``Ticket``; its answer appears once the shard releases it (at
once, or when a parked JoinGroup/SyncGroup completes). Time only moves through
``advance``, which fires every timer at its own deadline, in order.
"""

from __future__ import annotations

import functools
import itertools
import uuid
from dataclasses import dataclass, field

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.groups.lazy_requests import ConsumerGroupHeartbeat
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.requests import CommitPartition, Heartbeat, JoinGroup, OffsetCommit, SyncGroup
from groupcoord.coordinator.groups.lazy_requests import LeaveGroup, LeavingMember, OffsetDelete, OffsetFetch
from groupcoord.coordinator.groups.shard import GroupShard
from groupcoord.protocol.consumer_protocol import Subscription, encode_subscription
from groupcoord.protocol.errors import ErrorCode
from groupcoord.coordinator.groups.offsets_records import decode_record, encode_key, encode_value


def subscription(*topics: str) -> bytes:
    return encode_subscription(Subscription(topics=tuple(topics)))


@dataclass(frozen=True)
class FakeTopic:
    name: str
    topic_id: uuid.UUID
    partitions: int


@functools.lru_cache(maxsize=None)
def topic_id(name: str) -> uuid.UUID:
    """Fake topics have ids derived from their names, so tests can name them."""
    return uuid.uuid5(uuid.NAMESPACE_DNS, name)


class FakeTopics:
    def __init__(self, **partitions: int) -> None:
        self.partitions = dict(partitions)

    def partition_count(self, topic: str) -> int | None:
        return self.partitions.get(topic)

    def get(self, name: str) -> FakeTopic | None:
        count = self.partitions.get(name)
        return None if count is None else FakeTopic(name, topic_id(name), count)

    def by_id(self, tid: uuid.UUID) -> FakeTopic | None:
        return next((self.get(n) for n in self.partitions if topic_id(n) == tid), None)

    def names(self) -> list[str]:
        return sorted(self.partitions)


@dataclass
class Ticket:
    harness: "Harness"
    token: int

    @property
    def done(self) -> bool:
        return self.token in self.harness.replies

    @property
    def response(self) -> dict:
        assert self.done, "request is still parked"
        return self.harness.replies[self.token]

    @property
    def error(self) -> ErrorCode:
        return self.response["error_code"]


@dataclass
class Recorder:
    events: list[tuple] = field(default_factory=list)

    def on_state_change(self, group_id, old, new, reason):
        self.events.append(("state", group_id, old, new))

    def on_member_expired(self, group_id, member_id, reason):
        self.events.append(("expired", group_id, member_id))

    def on_rebalance(self, group_id, generation, duration_s, reason):
        self.events.append(("rebalance", group_id, generation))


class Harness:
    def __init__(self, topics: FakeTopics | None = None, **config) -> None:
        # The KIP-848 scenarios here describe Kafka as the conformance goldens were recorded from it: the
        # target assignment computed in the heartbeat that bumps the group epoch (interval 0); a scenario
        # about assignment batching sets the interval itself.
        defaults = dict(group_initial_rebalance_delay_ms=3000, group_consumer_assignment_interval_ms=0)
        defaults.update(config)
        self.config = BrokerConfig(**defaults)
        self.clock = ManualClock()
        self.topics = topics or FakeTopics(orders=3, payments=2)
        self.observer = Recorder()
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self.log: list[tuple[bytes, bytes | None]] = []  # the durable __consumer_offsets partition, encoded
        self.replies: dict[int, dict] = {}
        self.writes_held: list | None = None
        self.shard = self.new_shard()
        self.shard.finish_load(self.now)

    def new_shard(self) -> GroupShard:
        return GroupShard(
            7, self.config, topics=self.topics, observer=self.observer, member_id_factory=lambda p: f"{p}-{next(self._ids)}"
        )

    @property
    def now(self) -> int:
        return self.clock.wall_ms()

    def _apply(self, fx: Effects) -> None:
        for key, value in fx.records:
            self.log.append((encode_key(key), encode_value(value)))
        for token, response in fx.replies:
            assert token not in self.replies, f"request {token} answered twice"
            self.replies[token] = response
        if fx.after is not None:
            if self.writes_held is not None:
                self.writes_held.extend(fx.after)
            else:
                self._run_after_write(fx.after, None)

    def hold_writes(self) -> None:
        """From here on a write is not durable until ``make_durable``: what waits for it (``Effects.after_write``)
        waits too. (By default every write is durable as it is made.)"""
        self.writes_held = []

    def make_durable(self, error: ErrorCode | None = None) -> None:
        """The held writes become durable, in order (or, with ``error``, are not within the write timeout), and
        writes are durable as they are made again."""
        held, self.writes_held = self.writes_held or [], None
        self._run_after_write(held, error)

    def _run_after_write(self, operations: list, error: ErrorCode | None) -> None:
        """What the runtime does once writes are durable (or timed out): each operation waiting on them, in order."""
        for operation in operations:
            self._apply(self.shard.after_write(operation, self.now, error))

    def _ticket(self) -> Ticket:
        return Ticket(self, next(self._tokens))

    # ---------------------------------------------------------------- requests

    def join(self, group: str, member_id: str = "", *, client_id: str = "client", instance: str | None = None,
             protocols=None, protocol_type: str = "consumer", session: int = 10_000, rebalance: int = 30_000,
             version: int = 9, reason: str | None = None) -> Ticket:
        t = self._ticket()
        req = JoinGroup(
            group_id=group, member_id=member_id, protocol_type=protocol_type,
            protocols=tuple(protocols) if protocols is not None else (("range", subscription("orders")),),
            session_timeout_ms=session, rebalance_timeout_ms=rebalance, group_instance_id=instance,
            client_id=client_id, client_host="/127.0.0.1", reason=reason, version=version,
        )
        self._apply(self.shard.handle_join(req, t.token, self.now))
        return t

    def join_new(self, group: str, client_id: str = "client", **kw) -> Ticket:
        """The two-step join of a new dynamic member (v4+): get an id, then join with it; static members join at once."""
        first = self.join(group, client_id=client_id, **kw)
        if kw.get("instance") is not None:
            return first
        assert first.error == ErrorCode.member_id_required, first.response
        return self.join(group, first.response["member_id"], client_id=client_id, **kw)

    def sync(self, group: str, member_id: str, generation: int, assignments=(), *, instance: str | None = None,
             protocol_type: str | None = None, protocol_name: str | None = None) -> Ticket:
        t = self._ticket()
        req = SyncGroup(group, generation, member_id, tuple(assignments), instance, protocol_type, protocol_name)
        self._apply(self.shard.handle_sync(req, t.token, self.now))
        return t

    def heartbeat(self, group: str, member_id: str, generation: int, instance: str | None = None) -> ErrorCode:
        t = self._ticket()
        self._apply(self.shard.handle_heartbeat(Heartbeat(group, generation, member_id, instance), t.token, self.now))
        return t.error

    def leave(self, group: str, *members: LeavingMember | str, version: int = 5) -> dict:
        t = self._ticket()
        identities = tuple(m if isinstance(m, LeavingMember) else LeavingMember(m) for m in members)
        self._apply(self.shard.handle_leave(LeaveGroup(group, identities, version), t.token, self.now))
        return t.response

    def commit(self, group: str, offsets: dict[tuple[str, int], int], *, generation: int = -1, member_id: str = "",
               instance: str | None = None, metadata: str = "", retention_ms: int = -1, version: int = 8) -> dict[tuple[str, int], ErrorCode]:
        t = self._ticket()
        by_topic: dict[str, list[CommitPartition]] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(CommitPartition(partition, offset, 5, metadata))
        req = OffsetCommit(group, tuple((k, tuple(v)) for k, v in by_topic.items()), generation, member_id, instance, retention_ms, version)
        self._apply(self.shard.handle_offset_commit(req, t.token, self.now))
        return {(topic["name"], p["partition_index"]): p["error_code"] for topic in t.response["topics"] for p in topic["partitions"]}

    def fetch(self, group: str, topics=None) -> dict:
        return self.shard.fetch_offsets(OffsetFetch(group, topics))

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        return self.shard.committed_offsets(group)

    def offset_delete(self, group: str, topics) -> dict:
        t = self._ticket()
        self._apply(self.shard.handle_offset_delete(OffsetDelete(group, tuple(topics)), t.token, self.now))
        return t.response

    def delete_group(self, group: str) -> ErrorCode:
        t = self._ticket()
        self._apply(self.shard.handle_delete_group(group, t.token, self.now))
        return t.error

    def state(self, group: str) -> str:
        return self.shard.describe_group(group)["group_state"]

    def group(self, group: str):
        return self.shard.groups[group]

    # ---------------------------------------------------------------- KIP-848 consumer groups

    def cg(self, group: str, member_id: str, epoch: int, *, topics=None, regex=None, owned=None, rebalance: int = -1,
           assignor: str | None = None, instance: str | None = None, version: int = 1) -> dict:
        """One ConsumerGroupHeartbeat; ``owned`` is {topic name: partitions}."""
        t = self._ticket()
        req = ConsumerGroupHeartbeat(
            group_id=group, member_id=member_id, member_epoch=epoch, instance_id=instance,
            rebalance_timeout_ms=rebalance, subscribed_topic_names=None if topics is None else tuple(topics),
            subscribed_topic_regex=regex, server_assignor=assignor,
            topic_partitions=None if owned is None else tuple((topic_id(n), tuple(ps)) for n, ps in owned.items()),
            client_id="client", client_host="/127.0.0.1", version=version,
        )
        self._apply(self.shard.handle_consumer_group_heartbeat(req, t.token, self.now))
        return t.response

    def cg_join(self, group: str, member_id: str, topics=("orders",), rebalance: int = 30_000, **kw) -> dict:
        return self.cg(group, member_id, 0, topics=topics, owned={}, rebalance=rebalance, **kw)

    def cg_group(self, group: str):
        return self.shard.consumer_groups[group]

    # ---------------------------------------------------------------- time and restarts

    def advance(self, ms: int) -> None:
        target = self.now + ms
        while (deadline := self.shard.next_deadline()) is not None and deadline <= target:
            self.clock.advance(max(deadline - self.now, 0))
            self._apply(self.shard.tick(self.now))
        self.clock.advance(target - self.now)

    def advance_until(self, condition, step_ms: int | None = None, limit_ms: int = 600_000) -> None:
        step = step_ms or max(self.config.group_initial_rebalance_delay_ms, 1)
        waited = 0
        while not condition():
            assert waited < limit_ms, "condition not reached in time"
            self.advance(step)
            waited += step

    def restart(self, log: list[tuple[bytes, bytes | None]] | None = None) -> GroupShard:
        """A new shard loaded from the durable log only (records decoded from bytes, as at start-up)."""
        self.shard = self.new_shard()
        self.shard.begin_load()
        for key_bytes, value_bytes in (self.log if log is None else log):
            self.shard.replay(*decode_record(key_bytes, value_bytes), self.now)
        self.shard.finish_load(self.now)
        return self.shard

    # ---------------------------------------------------------------- a whole rebalance

    def form_group(self, group: str, *clients: str, static: bool = False, **kw) -> dict[str, str]:
        """Join the given clients (new members), let the initial delay pass, sync with a trivial assignment.

        Static members get group.instance.id ``instance-<client>``. Returns client id -> member id.
        """
        tickets = {c: self.join_new(group, client_id=c, instance=f"instance-{c}" if static else None, **kw) for c in clients}
        self.advance_until(lambda: all(t.done for t in tickets.values()))
        ids = {c: t.response["member_id"] for c, t in tickets.items()}
        self.complete_sync(group, tickets)
        return ids

    def complete_sync(self, group: str, joins: dict[str, Ticket]) -> dict[str, Ticket]:
        responses = {c: t.response for c, t in joins.items()}
        assert all(r["error_code"] == ErrorCode.none for r in responses.values()), responses
        generation = next(iter(responses.values()))["generation_id"]
        leader = next(r for r in responses.values() if r["members"])
        assignment = [(m["member_id"], f"assignment-of-{m['member_id']}".encode()) for m in leader["members"]]
        syncs = {}
        for c, r in responses.items():
            is_leader = r["member_id"] == r["leader"]
            syncs[c] = self.sync(group, r["member_id"], generation, assignment if is_leader else ())
        return syncs
