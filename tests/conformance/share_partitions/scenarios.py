"""Share-partition scenarios (KIP-932): members of a share group acquiring, acknowledging, releasing and
rejecting records, locks expiring, the delivery-count limit, share-session epochs, and the share-group
offsets admin — each a short story told through the raw protocol.

Every group reads from the earliest offset (``share.auto.offset.reset=earliest``): Kafka initialises a share
partition asynchronously, so with the default (latest) whether records produced right after the first fetch
are delivered depends on timing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import wraps

from tests.conformance.share_partitions.requests import ACCEPT, REJECT, RELEASE, RENEW
from tests.conformance.share_partitions.session import ShareSession
from tests.conformance.transactions.session import TxnSession
from tests.conformance.transcript import Observation

EARLIEST = "share.auto.offset.reset"
LOCK_MS = 3_000  # the group's share.record.lock.duration.ms where a lock must expire: both brokers run with
# group.share.min.record.lock.duration.ms=1000 (tests/support/share_configs.py; Kafka's default minimum is 15 s)


Restart = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[..., Awaitable[list[Observation]]]  # (bootstrap, restart=None) -> transcript


SCENARIOS: dict[str, Scenario] = {}
# Scenarios that restart the broker mid-story: run with a hook that restarts it on its data directory and port
# (tests/conformance/share_partitions/test_share_restart_conformance.py), never by the plain suite.
RESTART_SCENARIOS: dict[str, Scenario] = {}


def scenario(story: Callable[[ShareSession], Awaitable[None]], session_class: type = ShareSession,
             registry: dict[str, Scenario] = SCENARIOS) -> Callable[..., Awaitable[list[Observation]]]:
    @wraps(story)
    async def run(bootstrap: str, restart: Restart | None = None) -> list[Observation]:
        async with session_class(bootstrap, restart=restart) as session:
            await story(session)
            return session.transcript.steps

    registry[story.__name__] = Scenario(story.__name__, run)
    return run


@dataclass
class ShareTxnSession(ShareSession, TxnSession):
    """Share members beside a transactional producer."""


async def _one_member(s: ShareSession, values: int, **configs: str):
    topic = await s.topic("jobs", 1)
    group = await s.share_group("workers", **{EARLIEST: "earliest", **configs})
    a = await s.join("A", group, topic)
    await s.open_session(a)
    await s.produce_values(topic, *(f"job-{i}" for i in range(values)))
    return topic, group, a


@scenario
async def share_fetch_acquires_and_acknowledges(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 5)
    await s.fetch_until("A acquires", a)
    await s.acknowledge("A accepts all", a, {0: [(0, 4, (ACCEPT,))]})
    await s.share_fetch("nothing left", a, max_wait_ms=100)
    await s.describe_offsets("start moved past the accepted", group, topic, [0])


@scenario
async def piggybacked_acknowledgements(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 4)
    await s.fetch_until("A acquires two", a, max_records=2)
    await s.share_fetch("A accepts on its next fetch and acquires the rest", a, acks={0: [(0, 1, (ACCEPT,))]},
                        max_records=10, max_wait_ms=1000)
    await s.describe_offsets("offsets", group, topic, [0])


@scenario
async def release_redelivers(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 3)
    await s.fetch_until("A acquires", a)
    await s.acknowledge("A releases 1, accepts 0 and 2", a, {0: [(0, 0, (ACCEPT,)), (1, 1, (RELEASE,)),
                                                                 (2, 2, (ACCEPT,))]})
    await s.fetch_until("1 is delivered again", a)
    await s.describe_offsets("offsets", group, topic, [0])


@scenario
async def reject_archives(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 3)
    await s.fetch_until("A acquires", a)
    await s.acknowledge("A rejects 1", a, {0: [(0, 2, (ACCEPT, REJECT, ACCEPT))]})
    await s.share_fetch("nothing is delivered again", a, max_wait_ms=100)
    await s.describe_offsets("all finished", group, topic, [0])


@scenario
async def delivery_count_limit_archives(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 1)
    for attempt in range(1, 6):
        await s.fetch_until(f"delivery {attempt}", a)
        await s.acknowledge(f"release {attempt}", a, {0: [(0, 0, (RELEASE,))]})
    await s.share_fetch("archived after the fifth delivery", a, max_wait_ms=100)
    await s.describe_offsets("finished", group, topic, [0])


@scenario
async def two_members_never_hold_the_same_record(s: ShareSession) -> None:
    topic = await s.topic("jobs", 1)
    group = await s.share_group("workers", **{EARLIEST: "earliest"})
    a = await s.join("A", group, topic)
    b = await s.join("B", group, topic)
    await s.open_session(a)
    await s.open_session(b)
    await s.produce_values(topic, *(f"job-{i}" for i in range(3)))  # two batches: max_records is applied
    await s.produce_values(topic, *(f"job-{i}" for i in range(3, 6)))  # at batch boundaries
    await s.fetch_until("A acquires three", a, max_records=3)
    await s.fetch_until("B acquires the other three", b, max_records=10)
    await s.share_fetch("A finds nothing free", a, max_wait_ms=100)
    await s.acknowledge("A cannot acknowledge what B holds", a, {0: [(3, 3, (ACCEPT,))]})
    await s.acknowledge("B releases its records", b, {0: [(3, 5, (RELEASE,))]})
    await s.fetch_until("A acquires them", a, max_records=10)


@scenario
async def share_session_epochs(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 2)
    await s.share_fetch("a wrong epoch", a, epoch=7)
    await s.fetch_until("A acquires", a)
    await s.share_fetch("acknowledgements in an opening fetch", a, epoch=0, acks={0: [(0, 0, (ACCEPT,))]})
    await s.acknowledge("ShareAcknowledge cannot open a session", a, {0: [(0, 0, (ACCEPT,))]}, epoch=0)
    a.session_epoch = 0
    await s.open_session(a)
    await s.acknowledge("acknowledging records never delivered", a, {0: [(5, 6, (ACCEPT,))]})
    await s.acknowledge("A still holds its records after reopening its session", a, {0: [(0, 1, (ACCEPT,))]})
    await s.share_fetch("A closes its session", a, epoch=-1)
    await s.share_fetch("after the close", a, epoch=2)


@scenario
async def renew_extends_the_lock(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 1)
    await s.fetch_until("A acquires", a)
    await s.acknowledge("A renews its lock", a, {0: [(0, 0, (RENEW,))]}, renew=True)
    await s.acknowledge("then accepts", a, {0: [(0, 0, (ACCEPT,))]})
    await s.describe_offsets("finished", group, topic, [0])


@scenario
async def lock_timeout_redelivers(s: ShareSession) -> None:
    topic = await s.topic("jobs", 1)
    group = await s.share_group("workers", **{EARLIEST: "earliest", "share.record.lock.duration.ms": str(LOCK_MS)})
    a = await s.join("A", group, topic)
    b = await s.join("B", group, topic)
    await s.open_session(a)
    await s.open_session(b)
    await s.produce_values(topic, "job-0", "job-1")
    await s.fetch_until("A acquires and never acknowledges", a)
    await s.share_fetch("B finds nothing free", b, max_wait_ms=100)
    await asyncio.sleep(LOCK_MS / 1000 + 1.0)
    await s.fetch_until("B acquires after A's lock expired", b)
    await s.acknowledge("A's acknowledgement comes too late", a, {0: [(0, 1, (ACCEPT,))]})
    await s.acknowledge("B accepts", b, {0: [(0, 1, (ACCEPT,))]})


@scenario
async def share_group_offsets_admin(s: ShareSession) -> None:
    topic, group, a = await _one_member(s, 6)
    await s.fetch_until("A acquires", a, max_records=2)
    await s.acknowledge("A accepts 0 and 1", a, {0: [(0, 1, (ACCEPT,))]})
    await s.describe_offsets("described", group, topic, [0])
    await s.describe_offsets("all the group's share partitions", group, None, [])
    await s.alter_offsets("alter while A is a member", group, topic, {0: 4})
    await s.delete_offsets("delete while A is a member", group, topic)
    await s.leave(a)
    await s.alter_offsets("alter the empty group", group, topic, {0: 4, 5: 0})
    await s.describe_offsets("after the alter", group, topic, [0])
    await s.delete_offsets("delete the empty group's offsets", group, topic, s.name("topic", "nope"))
    await s.describe_offsets("after the delete", group, topic, [0])
    await s.delete_offsets("an unknown group", s.name("group", "ghost"), topic)


@scenario
async def closing_the_connection_releases_what_it_held(s: ShareSession) -> None:
    """Kafka 4.1+ ties a share session to its connection: closing it releases the member's records at once
    (the locks here last a minute, longer than the scenario waits)."""
    topic, group, a = await _one_member(s, 2, **{"share.record.lock.duration.ms": "60000"})
    b = await s.join("B", group, topic)
    await s.fetch_until("A acquires", a)
    await s.open_session(b)
    await s.close_connection(a)
    await s.fetch_until("B acquires them at once", b)


async def read_committed_skips_aborted_transactions(s: ShareTxnSession) -> None:
    """share.isolation.level=read_committed: what an aborted transaction wrote is never delivered, and nothing
    past the last stable offset is."""
    topic = await s.topic("jobs", 1)
    group = await s.share_group("workers", **{EARLIEST: "earliest", "share.isolation.level": "read_committed"})
    a = await s.join("A", group, topic)
    await s.open_session(a)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn", p, {topic: (0,)})
    await s.produce_txn("produce in a transaction", p, topic, 0, "aborted-0", "aborted-1")
    await s.end("EndTxn abort", p, False)
    await s.wait_for_state(p, "CompleteAbort")
    await s.add_partitions("AddPartitionsToTxn again", p, {topic: (0,)})
    await s.produce_txn("produce in the next transaction", p, topic, 0, "committed-3")
    await s.share_fetch("nothing while it is open", a, max_wait_ms=100)
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.produce_values(topic, "plain-5")
    await s.fetch_until("A acquires the committed and the plain records", a)
    await s.describe_offsets("offsets", group, topic, [0])


scenario(read_committed_skips_aborted_transactions, ShareTxnSession)


async def a_restart_keeps_the_share_state(s: ShareSession) -> None:
    """The share-partition state is durable (__share_group_state): after the broker restarts, what was accepted
    or rejected is never delivered again, the released records come back with their delivery counts kept, and
    the start offset is where it was."""
    topic, group, a = await _one_member(s, 6)
    await s.fetch_until("A acquires", a)
    await s.acknowledge("A accepts 0, 1 and 5, releases 2 and 4, rejects 3", a,
                        {0: [(0, 5, (ACCEPT, ACCEPT, RELEASE, REJECT, RELEASE, ACCEPT))]})
    await s.leave(a)
    await s.describe_offsets("before the restart", group, topic, [0])
    await s.restart_broker("the broker restarts", group, topic)
    await s.describe_offsets("after the restart", group, topic, [0], settle=True)
    b = await s.join("B", group, topic)  # its first ShareFetch opens its session (and may acquire at once)
    await s.fetch_until("B acquires the released records, their delivery counts kept", b)
    await s.acknowledge("B accepts them", b, {0: [(2, 2, (ACCEPT,)), (4, 4, (ACCEPT,))]})
    await s.share_fetch("nothing is left", b, max_wait_ms=100)
    await s.describe_offsets("every record finished", group, topic, [0])


scenario(a_restart_keeps_the_share_state, registry=RESTART_SCENARIOS)
