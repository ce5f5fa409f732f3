"""The vocabulary of KIP-848 scenarios: consumer-protocol members speaking ConsumerGroupHeartbeat.

Member ids are client-generated (ConsumerGroupHeartbeat v1), so each is run-unique and recorded by its
label; topic ids differ per broker, so assignments are recorded by topic label. Where Kafka's assignor may
pick other partitions than groupcoord's while following the same rules (the uniform assignor), a scenario
records partition counts instead of partition numbers.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

from tests.conformance import requests as rq
from tests.conformance.session import Session
from tests.conformance.transcript import error_name
from tests.conformance.wire import Connection

REBALANCE_TIMEOUT_MS = 30000
TOPIC_SETTLE_S = 1.0


async def topic_with_id(s: Session, label: str, partitions: int, topic_labels: dict) -> tuple[str, uuid.UUID]:
    topic = await s.create_topic(label, partitions)
    # Kafka's group coordinator learns of a new topic from its metadata image a little after the broker's
    # metadata cache does (CreateTopics -> Metadata already shows it): an assignment computed in between
    # would leave the topic out. Nothing in the protocol shows that moment, so the story waits a while.
    await asyncio.sleep(TOPIC_SETTLE_S)
    described = (await s.admin(rq.metadata(topic))).topics[0]
    topic_labels[described.topic_id] = label
    return topic, described.topic_id


def message(s: Session, text: str | None) -> str | None:
    """An error message with every run-unique name in it replaced by its label."""
    if text is None:
        return None
    for raw, alias in sorted(s.transcript.aliases.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(raw, f"<{alias}>")
    return text.replace(s.run_id, "<run>")


def _assignment(labels: dict, topic_partitions, exact: bool) -> list:
    out = []
    for tp in topic_partitions:
        parts = sorted(int(p) for p in tp.partitions)
        out.append([labels.get(tp.topic_id, "<unrecognised>"), parts if exact else len(parts)])
    return sorted(out)


@dataclass
class ConsumerMember:
    label: str
    group_id: str
    session: Session
    connection: Connection
    topic_labels: dict
    member_id: str = ""
    epoch: int = 0
    owned: dict = field(default_factory=dict)  # topic id -> partitions, as the last answer assigned them

    @classmethod
    async def create(cls, s: Session, label: str, group_id: str, topic_labels: dict) -> "ConsumerMember":
        member = cls(label, group_id, s, await s.connect(), topic_labels)
        member.member_id = s.name("member", label)
        return member

    @classmethod
    async def create_all(cls, s: Session, group_id: str, topic_labels: dict, *labels: str) -> list["ConsumerMember"]:
        """The members of a story, each on its own connection, in the order named."""
        return [await cls.create(s, label, group_id, topic_labels) for label in labels]

    async def send(self, step: str, epoch: int, *, exact: bool = True, **fields: Any) -> Any:
        request = rq.consumer_group_heartbeat(self.group_id, fields.pop("member_id", self.member_id), epoch, **fields)
        response = await self.connection.send(request)
        t = self.session.transcript
        facts: dict[str, Any] = {"error": error_name(response.error_code), "message": message(self.session, response.error_message)}
        if response.error_code == 0:
            if response.member_id and response.member_id != self.member_id and not self.member_id:
                t.learn(response.member_id, self.label)
            facts.update(member=t.alias(response.member_id), epoch=int(response.member_epoch),
                         heartbeat_interval_ms=int(response.heartbeat_interval.total_seconds() * 1000),
                         assignment=None if response.assignment is None else
                         _assignment(self.topic_labels, response.assignment.topic_partitions, exact))
            if response.member_epoch >= 0:
                self.epoch = int(response.member_epoch)
            if response.assignment is not None:
                self.owned = {tp.topic_id: tuple(sorted(tp.partitions)) for tp in response.assignment.topic_partitions}
        t.record(step, **facts)
        return response

    async def join(self, topics: tuple[str, ...], *, step: str | None = None, exact: bool = True, **fields: Any) -> Any:
        return await self.send(step or f"{self.label} joins", 0, exact=exact, topics=topics, owned=(),
                               rebalance_timeout_ms=REBALANCE_TIMEOUT_MS, **fields)

    async def heartbeat(self, *, step: str | None = None, exact: bool = True, epoch: int | None = None,
                        ack: bool = False) -> Any:
        """A plain heartbeat; ``ack`` reports the partitions the last answer assigned (a revocation done)."""
        owned = tuple(self.owned.items()) if ack else None
        return await self.send(step or f"{self.label} heartbeats", self.epoch if epoch is None else epoch,
                               exact=exact, owned=owned)

    async def leave(self, step: str | None = None) -> Any:
        return await self.send(step or f"{self.label} leaves", -1)


async def describe_consumer_group(s: Session, step: str, group_id: str, topic_labels: dict, exact: bool = True) -> None:
    described = (await s.admin(rq.consumer_group_describe(group_id))).groups[0]
    t = s.transcript
    facts: dict[str, Any] = {"error": error_name(described.error_code), "message": message(s, described.error_message)}
    if described.error_code == 0:
        facts.update(state=described.group_state, group_epoch=int(described.group_epoch),
                     assignment_epoch=int(described.assignment_epoch), assignor=described.assignor_name,
                     members=sorted([t.alias(m.member_id), int(m.member_epoch),
                                     sorted(t.alias(n) for n in m.subscribed_topic_names),
                                     message(s, m.subscribed_topic_regex),
                                     _assignment(topic_labels, m.assignment.topic_partitions, exact),
                                     _assignment(topic_labels, m.target_assignment.topic_partitions, exact),
                                     int(m.member_type)] for m in described.members))
    t.record(step, **facts)


async def list_groups_typed(s: Session, step: str, types: tuple[str, ...], states: tuple[str, ...] = ()) -> None:
    response = await s.admin(rq.list_groups(states, types, version=5))
    t = s.transcript
    ours = sorted([t.alias(g.group_id), g.protocol_type, g.group_state, g.group_type] for g in response.groups
                  if g.group_id.endswith(s.run_id))
    t.record(step, error=error_name(response.error_code), groups=ours)
