"""A share-partition session: the data-plane session plus share-group members that fetch and acknowledge.

A member joins with ShareGroupHeartbeat and heartbeats (unrecorded) until its assignment arrives — Kafka
gives a share member its partitions only once the share coordinator has initialised their state, which it
does asynchronously. ShareFetch and ShareAcknowledge answers are recorded as a client relies on them: error
names, the acquired offset ranges with their delivery counts, the values of the acquired records (no
others: a batch may carry records another member holds), and the acknowledgement errors. The acquisition
lock duration is recorded; throttle times and error messages are not.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from tests.conformance.dataplane import requests as dq
from tests.conformance.dataplane.session import DataSession
from tests.conformance.session import POLL_INTERVAL_S, ScenarioError
from tests.conformance.share_partitions import requests as sq
from tests.conformance.transcript import error_name
from tests.conformance.wire import Connection

ASSIGNMENT_WAIT_S = 30.0
HEARTBEAT_POLL_S = 0.2
HEARTBEAT_EVERY_S = 1.0  # below any share session timeout a broker may run with (the reference: 6 s)


@dataclass
class ShareMember:
    label: str
    group_id: str
    topic: str
    connection: Connection
    member_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    member_epoch: int = 0
    session_epoch: int = 0
    partitions: tuple[int, ...] = ()
    heartbeats: asyncio.Task | None = None

    def next_session_epoch(self) -> int:
        epoch = self.session_epoch
        self.session_epoch = 1 if epoch >= 2**31 - 1 else epoch + 1
        return epoch


RETRIABLE_AFTER_RESTART = frozenset({ErrorCode.coordinator_load_in_progress, ErrorCode.coordinator_not_available,
                                     ErrorCode.not_coordinator, ErrorCode.not_leader_or_follower,
                                     ErrorCode.leader_not_available, ErrorCode.unknown_topic_or_partition})


@dataclass
class ShareSession(DataSession):
    members: dict[str, ShareMember] = field(default_factory=dict)
    # Stops the broker and starts it again on its data directory and port (a test's or the recorder's hook);
    # None where the broker cannot be restarted, and a scenario that needs it fails saying so.
    restart: Callable[[], Awaitable[None]] | None = None

    async def restart_broker(self, step: str, group_id: str, topic: str) -> None:
        """Every connection closes (members must have left: their heartbeats are not carried over), the broker
        restarts, and the session waits, unrecorded, until the group's coordinator and the topic's leader
        answer again: how long a broker takes to load is not the point."""
        if self.restart is None:
            raise ScenarioError("this scenario restarts the broker: run it with a restart hook")
        for member in self.members.values():
            await self._stop_heartbeats(member)
        for connection in self._connections:
            await connection.close()
        self._connections.clear()
        self._admin = None
        await self.restart()
        self.transcript.record(step)
        await self._find_coordinator(group_id)
        await self.wait_for_leaders(topic, 1)

    async def share_group(self, label: str, **configs: str) -> str:
        group_id = await self.group(label)  # its coordinator found (and loaded), unrecorded
        if configs:
            response = await self.admin(sq.set_group_configs(group_id, configs))
            self.transcript.record("group configs", errors=[error_name(r.error_code) for r in response.responses])
        return group_id

    async def join(self, label: str, group_id: str, topic: str, partitions: int = 1) -> ShareMember:
        """Joins and heartbeats, unrecorded, until the member holds ``partitions`` partitions of the topic."""
        member = ShareMember(label, group_id, topic, await self.connect())
        self.transcript.learn(member.member_id, label)
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        topics: tuple[str, ...] | None = (topic,)
        while True:
            response = await member.connection.send(sq.heartbeat(group_id, member.member_id, member.member_epoch, topics))
            if response.error_code != ErrorCode.none:
                raise ScenarioError(f"ShareGroupHeartbeat answered {error_name(response.error_code)}")
            member.member_epoch = int(response.member_epoch)
            topics = None
            if response.assignment is not None:
                member.partitions = tuple(sorted(p for tp in response.assignment.topic_partitions for p in tp.partitions))
            if len(member.partitions) >= partitions:
                break
            if time.monotonic() > deadline:
                raise ScenarioError(f"member {label} was not assigned {partitions} partitions")
            await asyncio.sleep(HEARTBEAT_POLL_S)
        self.transcript.record(f"{label} joins", assigned=list(member.partitions))
        self.members[label] = member
        member.heartbeats = asyncio.ensure_future(self._keep_alive(member, await self.connect()))
        return member

    async def _keep_alive(self, member: ShareMember, connection: Connection) -> None:
        """Heartbeats (unrecorded, on a connection of their own) while the member is in the group, as the
        client's background thread does: a scenario may wait longer than a share session lasts."""
        while True:
            await asyncio.sleep(HEARTBEAT_EVERY_S)
            response = await connection.send(sq.heartbeat(member.group_id, member.member_id, member.member_epoch, None))
            if response.error_code == ErrorCode.none:
                member.member_epoch = int(response.member_epoch)

    async def __aexit__(self, *exc_info: object) -> None:
        for member in self.members.values():
            await self._stop_heartbeats(member)
        await super().__aexit__(*exc_info)

    @staticmethod
    async def _stop_heartbeats(member: ShareMember) -> None:
        if member.heartbeats is not None:
            member.heartbeats.cancel()
            await asyncio.gather(member.heartbeats, return_exceptions=True)
            member.heartbeats = None

    async def close_connection(self, member: ShareMember) -> None:
        """The member's fetch connection closes (its heartbeats go on, on their own connection)."""
        await member.connection.close()
        self._connections.remove(member.connection)
        member.connection = await self.connect()
        member.session_epoch = 0
        self.transcript.record(f"{member.label}'s connection closes")

    async def leave(self, member: ShareMember) -> None:
        await self._stop_heartbeats(member)
        response = await member.connection.send(sq.heartbeat(member.group_id, member.member_id, -1, None))
        self.transcript.record(f"{member.label} leaves", error=error_name(response.error_code),
                               epoch=int(response.member_epoch))

    async def open_session(self, member: ShareMember) -> None:
        """The member's first ShareFetch (epoch 0): recorded without its partitions, which Kafka lists or not
        depending on whether the share partition finished loading in time."""
        response = await member.connection.send(sq.share_fetch(member.group_id, member.member_id,
                                                               member.next_session_epoch(), self.topic_ids[member.topic],
                                                               list(member.partitions), {}))
        self.transcript.record(f"{member.label} opens its share session", error=error_name(response.error_code))

    async def share_fetch(self, step: str, member: ShareMember, *, acks: sq.Acks | None = None, epoch: int | None = None,
                          partitions: list[int] | None = None, **options: Any) -> list:
        """Records the answer; returns the acquired [first, last, delivery count] ranges."""
        if epoch is None:
            epoch = member.next_session_epoch()
        wanted = list(member.partitions) if partitions is None else partitions
        response = await member.connection.send(sq.share_fetch(member.group_id, member.member_id, epoch,
                                                               self.topic_ids[member.topic], wanted, acks or {},
                                                               **options))
        return self._record_fetch(step, response)

    async def fetch_until(self, step: str, member: ShareMember, **options: Any) -> list:
        """ShareFetch (each a short long poll, unrecorded while it acquires nothing) until records are
        acquired, then records that answer: how soon an append becomes visible is not the point."""
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        while True:
            response = await member.connection.send(sq.share_fetch(
                member.group_id, member.member_id, member.next_session_epoch(), self.topic_ids[member.topic],
                list(member.partitions), {}, max_wait_ms=500, **options))
            if response.error_code != ErrorCode.none or any(p.acquired_records or p.error_code
                                                            for t in response.responses for p in t.partitions):
                return self._record_fetch(step, response)
            if time.monotonic() > deadline:
                raise ScenarioError(f"{member.label} acquired nothing within {ASSIGNMENT_WAIT_S} s")
            await asyncio.sleep(POLL_INTERVAL_S)

    def _record_fetch(self, step: str, response: Any) -> list:
        acquired = []
        parts = []
        for t in response.responses:
            for p in t.partitions:
                ranges = [[int(a.first_offset), int(a.last_offset), int(a.delivery_count)] for a in p.acquired_records]
                acquired.extend(ranges)
                held = {o for f, l, _c in ranges for o in range(f, l + 1)}
                values = [[offset, value] for offset, _k, value, _ts in dq.read_records(p.records) if offset in held]
                parts.append([self.topic_label(t.topic_id), int(p.partition_index), error_name(p.error_code),
                              error_name(p.acknowledge_error_code), ranges, values])
        ok = response.error_code == ErrorCode.none
        self.transcript.record(step, error=error_name(response.error_code),
                               lock_ms=int(response.acquisition_lock_timeout.total_seconds() * 1000) if ok else None,
                               partitions=sorted(parts))
        return acquired

    async def acknowledge(self, step: str, member: ShareMember, acks: sq.Acks, *, epoch: int | None = None,
                          renew: bool = False) -> None:
        if epoch is None:
            epoch = member.next_session_epoch()
        response = await member.connection.send(sq.share_acknowledge(member.group_id, member.member_id, epoch,
                                                                     self.topic_ids[member.topic], acks, renew=renew))
        self.transcript.record(step, error=error_name(response.error_code), partitions=sorted(
            [self.topic_label(t.topic_id), int(p.partition_index), error_name(p.error_code)]
            for t in response.responses for p in t.partitions))

    async def produce_values(self, topic: str, *values: str, partition: int = 0) -> None:
        await self.produce("produce", {(topic, partition): dq.batch([v.encode() for v in values])})

    async def describe_offsets(self, step: str, group_id: str, topic: str | None, partitions: list[int], *,
                               settle: bool = False) -> None:
        """With ``settle`` (after a restart), retried unrecorded while a coordinator or the partition loads."""
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        while True:
            response = await self.admin(sq.describe_offsets(group_id, topic, partitions))
            errors = {g.error_code for g in response.groups} | {p.error_code for g in response.groups
                                                                for t in g.topics for p in t.partitions}
            if not settle or not errors & RETRIABLE_AFTER_RESTART or time.monotonic() > deadline:
                break
            await asyncio.sleep(POLL_INTERVAL_S)
        t = self.transcript
        t.record(step, groups=[[error_name(g.error_code), sorted(
            [t.alias(topic.topic_name), int(p.partition_index), error_name(p.error_code), int(p.start_offset),
             int(p.lag)] for topic in g.topics for p in topic.partitions)] for g in response.groups])

    async def alter_offsets(self, step: str, group_id: str, topic: str, offsets: dict[int, int]) -> None:
        response = await self.admin(sq.alter_offsets(group_id, topic, offsets))
        t = self.transcript
        t.record(step, error=error_name(response.error_code), topics=sorted(
            [t.alias(r.topic_name), int(p.partition_index), error_name(p.error_code)]
            for r in response.responses for p in r.partitions))

    async def delete_offsets(self, step: str, group_id: str, *topics: str) -> None:
        response = await self.admin(sq.delete_offsets(group_id, *topics))
        t = self.transcript
        t.record(step, error=error_name(response.error_code), topics=sorted(
            [t.alias(r.topic_name), error_name(r.error_code)] for r in response.responses))
