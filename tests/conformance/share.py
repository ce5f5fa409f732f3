"""The vocabulary of KIP-932 share-group scenarios: members speaking ShareGroupHeartbeat.

A share member's partitions arrive only once the share coordinator has initialised their state, which
Kafka does asynchronously after the heartbeat that found them: ``until_assigned`` heartbeats (unrecorded)
until the assignment shows up, then records that answer. Kafka's simple assignor walks Java hash maps, so
with several members a scenario records partition counts (never which partitions a member holds) and
whether two members hold the same partition.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from tests.conformance import requests as rq
from tests.conformance.consumer import _assignment, message
from tests.conformance.session import Session
from tests.conformance.transcript import error_name
from tests.conformance.wire import Connection

ASSIGNMENT_WAIT_S = 20.0


def member_id(s: Session, label: str) -> str:
    """A run-unique member id within Kafka's limit for share members (KafkaApis.isMemberIdValid: 1-36 chars;
    the Java client sends a 22-character Uuid)."""
    raw = f"{label}-{s.run_id}"
    s.transcript.learn(raw, label)
    return raw


@dataclass
class ShareMember:
    label: str
    group_id: str
    session: Session
    connection: Connection
    topic_labels: dict
    member_id: str = ""
    epoch: int = 0
    assigned: dict = field(default_factory=dict)  # topic id -> partitions, as the last answer had them
    topics: tuple[str, ...] = ()  # what the member subscribes to

    @classmethod
    async def create(cls, s: Session, label: str, group_id: str, topic_labels: dict) -> "ShareMember":
        member = cls(label, group_id, s, await s.connect(), topic_labels)
        member.member_id = member_id(s, label)
        return member

    async def send(self, step: str | None, epoch: int, *, exact: bool | None = True, record: bool = True,
                   **fields: Any) -> Any:
        """``exact``: True records the partitions, False their count per topic, None only whether the member
        holds any (members sharing partitions: which member holds two is Kafka's hash order)."""
        if fields.get("topics"):
            self.topics = tuple(fields["topics"])
        request = rq.share_group_heartbeat(self.group_id, fields.pop("member_id", self.member_id), epoch, **fields)
        response = await self.connection.send(request)
        t = self.session.transcript
        facts: dict[str, Any] = {"error": error_name(response.error_code),
                                 "message": message(self.session, response.error_message)}
        if response.error_code == 0:
            facts.update(member=t.alias(response.member_id) if response.member_id else None,
                         epoch=int(response.member_epoch),
                         heartbeat_interval_ms=int(response.heartbeat_interval.total_seconds() * 1000),
                         assignment=None if response.assignment is None else
                         bool(response.assignment.topic_partitions) if exact is None else
                         _assignment(self.topic_labels, response.assignment.topic_partitions, exact))
            if response.member_epoch >= 0:
                self.epoch = int(response.member_epoch)
            if response.assignment is not None:
                self.assigned = {tp.topic_id: tuple(sorted(tp.partitions)) for tp in response.assignment.topic_partitions}
        if record:
            t.record(step or f"{self.label} heartbeats", **facts)
        return response

    async def join(self, topics: tuple[str, ...], *, step: str | None = None, exact: bool = True) -> Any:
        return await self.send(step or f"{self.label} joins", 0, exact=exact, topics=topics)

    async def heartbeat(self, *, step: str | None = None, exact: bool = True, epoch: int | None = None, **fields) -> Any:
        return await self.send(step, self.epoch if epoch is None else epoch, exact=exact, **fields)

    async def leave(self, step: str | None = None) -> Any:
        return await self.send(step or f"{self.label} leaves", -1)

    async def until_assigned(self, want, *, step: str | None = None, exact: bool = True) -> Any:
        """Heartbeats until ``want(assigned)`` holds (the share-partition state got initialised and the
        group's assignment settled), recording only the answer that shows it."""
        deadline = time.monotonic() + ASSIGNMENT_WAIT_S
        while True:
            response = await self.send(None, self.epoch, record=False)
            if response.error_code == 0 and want(self.partition_count()):
                break
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.3)
        # The recorded answer: a full heartbeat (subscription resent), so the assignment is always shown.
        return await self.send(step or f"{self.label} has its partitions", self.epoch, exact=exact, topics=self.topics)

    def partition_count(self) -> int:
        return sum(len(ps) for ps in self.assigned.values())


async def describe_share_group(s: Session, step: str, group_id: str, topic_labels: dict, exact: bool | None = True) -> Any:
    described = (await s.admin(rq.share_group_describe(group_id))).groups[0]
    t = s.transcript
    facts: dict[str, Any] = {"error": error_name(described.error_code), "message": message(s, described.error_message)}
    if described.error_code == 0:
        facts.update(state=described.group_state, group_epoch=int(described.group_epoch),
                     assignment_epoch=int(described.assignment_epoch), assignor=described.assignor_name,
                     members=sorted([t.alias(m.member_id), int(m.member_epoch),
                                     sorted(t.alias(n) for n in m.subscribed_topic_names), m.client_id,
                                     bool(m.assignment.topic_partitions) if exact is None else
                                     _assignment(topic_labels, m.assignment.topic_partitions, exact)]
                                    for m in described.members))
        if exact is None:
            counts = sorted(sum(len(tp.partitions) for tp in m.assignment.topic_partitions) for m in described.members)
            facts["partition_counts"] = counts
        if not exact:
            held = [(tp.topic_id, p) for m in described.members for tp in m.assignment.topic_partitions
                    for p in tp.partitions]
            facts["partitions_held_twice"] = len(held) - len(set(held))
    t.record(step, **facts)
    return described
