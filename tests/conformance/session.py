"""The vocabulary scenarios are written in: a broker session, group members, and recorded admin calls.

Every call that is part of a scenario's story records one observation; plumbing (finding the coordinator,
waiting until a pending join has reached the broker) records nothing, so transcripts do not depend on
how quickly a broker gets there.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from kio.schema.errors import ErrorCode

from tests.conformance import requests as rq
from tests.conformance.requests import Protocol
from tests.conformance.transcript import Transcript, error_name
from tests.conformance.wire import Connection

SETTLE_TIMEOUT_S = 20.0
POLL_INTERVAL_S = 0.05
RANGE = Protocol("range")
_COORDINATOR_NOT_READY = frozenset({ErrorCode.not_coordinator, ErrorCode.coordinator_load_in_progress,
                                    ErrorCode.coordinator_not_available})


class ScenarioError(AssertionError):
    """The broker never reached a state the scenario needs in order to continue."""


@dataclass
class Session:
    bootstrap: str
    transcript: Transcript = field(default_factory=Transcript)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    coordinator: str | None = None
    _admin: Connection | None = None
    _connections: list[Connection] = field(default_factory=list)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for connection in self._connections:
            await connection.close()

    async def connect(self, address: str | None = None) -> Connection:
        connection = await Connection.open(address or self.coordinator or self.bootstrap)
        self._connections.append(connection)
        return connection

    async def admin(self, request: Any) -> Any:
        if self._admin is None:
            self._admin = await self.connect()
        return await self._admin.send(request)

    def name(self, kind: str, label: str) -> str:
        """A run-unique broker-side name whose transcript alias is the scenario's label."""
        raw = f"conformance-{kind}-{label}-{self.run_id}"
        self.transcript.learn(raw, label)
        return raw

    async def group(self, label: str) -> str:
        group_id = self.name("group", label)
        await self._find_coordinator(group_id)
        return group_id

    async def _find_coordinator(self, group_id: str) -> None:
        """Retries while the coordinator loads, as every client does; only the final answer matters.

        Ready means FindCoordinator names a broker and that broker's DescribeGroups answers for the group,
        so the first recorded step never races the coordinator's start-up."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        bootstrap = await self.connect(self.bootstrap)
        while True:
            found = (await bootstrap.send(rq.find_coordinator(group_id))).coordinators[0]
            error = found.error_code
            if error == ErrorCode.none:
                self.coordinator = f"{found.host}:{found.port}"
                error = (await self.admin(rq.describe_groups(group_id))).groups[0].error_code
                if error not in _COORDINATOR_NOT_READY:
                    return
            elif not error.retriable:
                raise ScenarioError(f"FindCoordinator answered {error_name(error)}")
            if time.monotonic() > deadline:
                raise ScenarioError(f"the coordinator was not ready within {SETTLE_TIMEOUT_S} s: {error_name(error)}")
            await asyncio.sleep(0.1)

    async def member(self, label: str, group_id: str, instance_id: str | None = None) -> Member:
        return Member(label=label, group_id=group_id, session=self, connection=await self.connect(),
                      instance_id=instance_id)

    async def create_topic(self, label: str, partitions: int) -> str:
        topic = self.name("topic", label)
        response = await self.admin(rq.create_topic(topic, partitions))
        result = response.topics[0]
        self.transcript.record(f"CreateTopics {label}", error=error_name(result.error_code),
                               partitions=int(result.num_partitions))
        await self._wait_for_topic(topic, partitions)
        return topic

    async def _wait_for_topic(self, topic: str, partitions: int) -> None:
        """Waits, unrecorded, until the topic is in the broker's metadata with a leader for every partition.

        Kafka answers CreateTopics before its metadata cache has the topic, and an OffsetCommit that
        arrives in between gets UNKNOWN_TOPIC_OR_PARTITION (seen on a 2-core CI machine), so a scenario
        may only go on once every client would see the topic."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            described = (await self.admin(rq.metadata(topic))).topics[0]
            leaders = [p for p in described.partitions if p.leader_id >= 0]
            if described.error_code == ErrorCode.none and len(leaders) == partitions:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"topic {topic} never had leaders for its {partitions} partitions")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def describe(self, group_id: str, step: str | None = None) -> Any:
        described = (await self.admin(rq.describe_groups(group_id))).groups[0]
        t = self.transcript
        t.record(step or f"DescribeGroups {t.alias(group_id)}", error=error_name(described.error_code),
                 state=described.group_state, protocol_type=described.protocol_type,
                 protocol=described.protocol_data,
                 members=sorted(t.alias(m.member_id) for m in described.members))
        return described

    async def wait_for_members(self, group_id: str, count: int) -> None:
        """Waits, unrecorded, until joins sent in the background have reached the coordinator."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while True:
            described = (await self.admin(rq.describe_groups(group_id))).groups[0]
            if len(described.members) == count:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"group never reached {count} members (has {len(described.members)})")
            await asyncio.sleep(POLL_INTERVAL_S)

    async def wait_for_state(self, group_id: str, state: str) -> None:
        """Waits, unrecorded, for a timer-driven transition (a session or rebalance timeout)."""
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while (await self.admin(rq.describe_groups(group_id))).groups[0].group_state != state:
            if time.monotonic() > deadline:
                raise ScenarioError(f"group never reached state {state}")
            await asyncio.sleep(POLL_INTERVAL_S * 4)

    async def list_groups(self, step: str, states: tuple[str, ...] = ()) -> None:
        """Records only this session's groups: a shared broker holds other tests' groups too."""
        response = await self.admin(rq.list_groups(states))
        t = self.transcript
        ours = sorted((t.alias(g.group_id), g.protocol_type, g.group_state) for g in response.groups
                      if g.group_id.endswith(self.run_id))
        t.record(step, error=error_name(response.error_code), groups=[list(g) for g in ours])

    async def fetch_offsets(self, step: str, group_id: str, partitions: dict[str, tuple[int, ...]] | None,
                            **member: Any) -> None:
        """``member`` (member_id, member_epoch, version=9) names a KIP-848 member, as OffsetFetch v9 may."""
        response = await self.admin(rq.offset_fetch(group_id, partitions, **member))
        group = response.groups[0]
        t = self.transcript
        t.record(step, error=error_name(group.error_code), offsets=sorted(
            [t.alias(topic.name), int(p.partition_index), int(p.committed_offset), p.metadata,
             error_name(p.error_code)] for topic in group.topics for p in topic.partitions))

    async def commit_offsets(self, step: str, group_id: str, offsets: dict[tuple[str, int], int], *,
                             generation: int = -1, member_id: str = "", instance_id: str | None = None,
                             metadata: str | None = "", connection: Connection | None = None) -> None:
        request = rq.offset_commit(group_id, generation, member_id, offsets, instance_id=instance_id,
                                   metadata=metadata)
        response = await (connection.send(request) if connection else self.admin(request))
        t = self.transcript
        t.record(step, partitions=sorted([t.alias(topic.name), int(p.partition_index), error_name(p.error_code)]
                                         for topic in response.topics for p in topic.partitions))

    async def delete_groups(self, step: str, *group_ids: str) -> None:
        response = await self.admin(rq.delete_groups(*group_ids))
        t = self.transcript
        t.record(step, results=sorted([t.alias(r.group_id), error_name(r.error_code)] for r in response.results))

    async def delete_offsets(self, step: str, group_id: str, partitions: dict[str, tuple[int, ...]]) -> None:
        response = await self.admin(rq.offset_delete(group_id, partitions))
        t = self.transcript
        t.record(step, error=error_name(response.error_code), partitions=sorted(
            [t.alias(topic.name), int(p.partition_index), error_name(p.error_code)]
            for topic in response.topics for p in topic.partitions))

    async def leave(self, step: str, group_id: str, members: tuple[tuple[str, str | None], ...],
                    version: int | None = None) -> None:
        response = await self.admin(rq.leave_group(group_id, members, version))
        t = self.transcript
        t.record(step, error=error_name(response.error_code), members=[
            [t.alias(m.member_id), m.group_instance_id, error_name(m.error_code)] for m in response.members])


@dataclass
class Member:
    """One group member with its own connection, because a JoinGroup may park until the rebalance ends."""

    label: str
    group_id: str
    session: Session
    connection: Connection
    instance_id: str | None = None
    member_id: str = ""
    generation: int = -1
    protocol: str | None = None
    members: tuple[str, ...] = ()

    @property
    def transcript(self) -> Transcript:
        return self.session.transcript

    async def join_once(self, protocols: tuple[Protocol, ...] = (RANGE,), *, step: str | None = None,
                        **options: Any) -> Any:
        version, response = await self._send_join(protocols, **options)
        self._record_join(step or f"{self.label} JoinGroup v{version}", response)
        return response

    async def _send_join(self, protocols: tuple[Protocol, ...], *, member_id: str | None = None,
                         **options: Any) -> tuple[int, Any]:
        request = rq.join_group(self.group_id, self.member_id if member_id is None else member_id, protocols,
                                instance_id=self.instance_id, **options)
        response = await self.connection.send(request)
        self.transcript.learn(response.member_id, self.label)
        if response.member_id:
            self.member_id = response.member_id
        if response.error_code == ErrorCode.none:
            self.generation = int(response.generation_id)
            self.protocol = response.protocol_name
            self.members = tuple(m.member_id for m in response.members)
        return int(request.__version__), response

    def _record_join(self, step: str, response: Any) -> None:
        t = self.transcript
        facts: dict[str, Any] = {"error": error_name(response.error_code),
                                 "member_id_assigned": bool(response.member_id)}
        if response.error_code == ErrorCode.none:
            facts.update(generation=int(response.generation_id), protocol=response.protocol_name,
                         leader=t.alias(response.leader), members=sorted(t.alias(m.member_id)
                                                                         for m in response.members))
            if hasattr(response, "skip_assignment"):
                facts["skip_assignment"] = response.skip_assignment
        t.record(step, **facts)

    async def join(self, protocols: tuple[Protocol, ...] = (RANGE,), **options: Any) -> Any:
        """Joins as a client does: a dynamic member answered MEMBER_ID_REQUIRED joins again with its new id."""
        response = await self.join_once(protocols, **options)
        if response.error_code == ErrorCode.member_id_required:
            response = await self.join_once(protocols, **options)
        return response

    def join_in_background(self, protocols: tuple[Protocol, ...] = (RANGE,), **options: Any) -> asyncio.Task:
        """Sends a JoinGroup that will park; its answer is recorded only when the scenario collects it, so
        the transcript order never depends on which parked join the broker releases first."""
        return asyncio.ensure_future(self._send_join(protocols, **options))

    async def joined(self, pending: asyncio.Task, step: str | None = None) -> Any:
        version, response = await pending
        self._record_join(step or f"{self.label} JoinGroup v{version} (parked)", response)
        return response

    async def sync(self, assignments: dict[str, bytes] | None = None, *, step: str | None = None,
                   **overrides: Any) -> Any:
        response = await self._send_sync(assignments, **overrides)
        self._record_sync(step or f"{self.label} SyncGroup", response)
        return response

    def sync_in_background(self) -> asyncio.Task:
        """A follower's SyncGroup parks until the leader's arrives; recorded when collected, like joins."""
        return asyncio.ensure_future(self._send_sync(None))

    async def synced(self, pending: asyncio.Task, step: str | None = None) -> Any:
        response = await pending
        self._record_sync(step or f"{self.label} SyncGroup (parked)", response)
        return response

    async def _send_sync(self, assignments: dict[str, bytes] | None, *, generation: int | None = None,
                         member_id: str | None = None) -> Any:
        """The leader sends one assignment per member it was told about; followers send none."""
        if assignments is None:
            assignments = {m: rq.assignment({}) for m in self.members}
        return await self.connection.send(rq.sync_group(
            self.group_id, self.generation if generation is None else generation,
            self.member_id if member_id is None else member_id, assignments, instance_id=self.instance_id,
            protocol_name=self.protocol))

    def _record_sync(self, step: str, response: Any) -> None:
        self.transcript.record(step, error=error_name(response.error_code), protocol=response.protocol_name,
                               assignment=response.assignment.hex() if response.assignment else "")

    async def heartbeat(self, *, generation: int | None = None, member_id: str | None = None,
                        step: str | None = None) -> None:
        response = await self.connection.send(rq.heartbeat(
            self.group_id, self.generation if generation is None else generation,
            self.member_id if member_id is None else member_id, self.instance_id))
        self.transcript.record(step or f"{self.label} Heartbeat", error=error_name(response.error_code))

    async def commit(self, offsets: dict[tuple[str, int], int], *, generation: int | None = None,
                     member_id: str | None = None, step: str | None = None) -> None:
        await self.session.commit_offsets(
            step or f"{self.label} OffsetCommit", self.group_id, offsets,
            generation=self.generation if generation is None else generation,
            member_id=self.member_id if member_id is None else member_id, instance_id=self.instance_id,
            connection=self.connection)

    async def leave(self, step: str | None = None) -> None:
        await self.session.leave(step or f"{self.label} LeaveGroup", self.group_id,
                                 ((self.member_id, self.instance_id),))

    async def form_group(self, protocols: tuple[Protocol, ...] = (RANGE,)) -> None:
        """Join then sync, so the group is Stable with this member as its leader."""
        await self.join(protocols)
        await self.sync()
