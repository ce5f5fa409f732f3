"""Transaction scenarios: what a transactional producer, a read_committed consumer and an operator observe,
told as short stories through the raw protocol (Transactions V1: EndTxn v4, AddPartitionsToTxn v3).

Every scenario is `async def scenario(bootstrap) -> list[Observation]`; run against Apache Kafka its
transcript is the expected behaviour, run against groupcoord it is the behaviour under test.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import wraps

from tests.conformance.transactions.session import TxnSession

# The reference broker and groupcoord's scenario broker both run with this abort-check interval (Kafka's
# default is 10 s), so that the timeout scenario takes seconds, not tens of seconds.
ABORT_CHECK_INTERVAL_MS = 500
SHORT_TIMEOUT_MS = 1000
MAX_TIMEOUT_MS = 900_000


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[str], Awaitable[list]]
    story: Callable[[TxnSession], Awaitable[None]]


SCENARIOS: dict[str, Scenario] = {}


def scenario(story: Callable[[TxnSession], Awaitable[None]]) -> Callable[[str], Awaitable[list]]:
    @wraps(story)
    async def run(bootstrap: str) -> list:
        async with TxnSession(bootstrap) as session:
            await story(session)
            return session.transcript.steps

    SCENARIOS[story.__name__] = Scenario(story.__name__, run, story)
    return run


@scenario
async def init_producer_id_bumps_the_epoch(s: TxnSession) -> None:
    """A new transactional id starts at epoch 0; every InitProducerId bumps it, keeping the producer id."""
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.describe_txn("DescribeTransactions P (new)", p)
    await s.init("InitProducerId P again", p)
    await s.describe_txn("DescribeTransactions P (second incarnation)", p)


@scenario
async def init_with_an_invalid_timeout(s: TxnSession) -> None:
    p = await s.producer("P")
    await s.init("InitProducerId timeout above transaction.max.timeout.ms", p, timeout_ms=MAX_TIMEOUT_MS + 1)
    await s.init("InitProducerId timeout 0", p, timeout_ms=0)
    await s.init("InitProducerId timeout at the maximum", p, timeout_ms=MAX_TIMEOUT_MS)
    await s.describe_txn("DescribeTransactions P", p)


@scenario
async def commit_then_read_committed(s: TxnSession) -> None:
    """A committed transaction over two partitions: read_committed sees the records and both markers."""
    topic = await s.topic("orders", 2)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn orders-0, orders-1", p, {topic: (0, 1)})
    await s.describe_txn("DescribeTransactions P ongoing", p)
    await s.produce_txn("Produce orders-0 in the transaction", p, topic, 0, "a", "b")
    await s.produce_txn("Produce orders-1 in the transaction", p, topic, 1, "c")
    await s.read("Fetch read_committed while open", {(topic, 0): 0, (topic, 1): 0})
    await s.read("Fetch read_uncommitted while open", {(topic, 0): 0}, committed=False)
    await s.latest("ListOffsets latest read_committed while open", topic, (0, 1))
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.describe_txn("DescribeTransactions P committed", p)
    await s.read("Fetch read_committed after the commit", {(topic, 0): 0, (topic, 1): 0})
    await s.latest("ListOffsets latest read_committed after the commit", topic, (0, 1))


@scenario
async def abort_then_read_committed(s: TxnSession) -> None:
    """An aborted transaction between two committed ones: read_committed skips it and names it."""
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    for outcome, values in (("commit", ("a1", "a2")), ("abort", ("b1", "b2", "b3")), ("commit", ("c1",))):
        await s.add_partitions(f"AddPartitionsToTxn for the {outcome}", p, {topic: (0,)})
        await s.produce_txn(f"Produce {'/'.join(values)}", p, topic, 0, *values)
        await s.end(f"EndTxn {outcome}", p, outcome == "commit")
        await s.wait_for_state(p, "CompleteCommit" if outcome == "commit" else "CompleteAbort")
    await s.read("Fetch read_committed", {(topic, 0): 0})
    await s.read("Fetch read_uncommitted", {(topic, 0): 0}, committed=False)
    await s.latest("ListOffsets latest read_committed", topic, (0,))


@scenario
async def end_txn_in_the_wrong_state(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.end("EndTxn commit with no transaction (Empty)", p, True)
    await s.end("EndTxn abort with no transaction (Empty)", p, False)
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.end("EndTxn commit again (a retry)", p, True)
    await s.end("EndTxn abort after the commit", p, False)
    await s.add_partitions("AddPartitionsToTxn orders-0 again", p, {topic: (0,)})
    await s.end("EndTxn abort", p, False)
    await s.wait_for_state(p, "CompleteAbort")
    await s.end("EndTxn commit after the abort", p, True)
    await s.end("EndTxn abort again (a retry)", p, False)


@scenario
async def unknown_transactional_ids_and_producer_ids(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    ghost = await s.producer("ghost")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn with a transactional id never initialised", p, {topic: (0,)},
                           transactional_id=ghost.transactional_id)
    await s.end("EndTxn with a transactional id never initialised", p, True, transactional_id=ghost.transactional_id)
    await s.add_partitions("AddPartitionsToTxn with another producer id", p, {topic: (0,)},
                           producer_id=p.producer_id + 1)
    await s.end("EndTxn with another producer id", p, True, producer_id=p.producer_id + 1)
    await s.describe_txn("DescribeTransactions of an unknown id", unknown=("never",))


@scenario
async def fencing_an_older_epoch(s: TxnSession) -> None:
    """A second InitProducerId fences the first incarnation: its epoch is refused everywhere."""
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P (first incarnation)", p)
    old_epoch = p.epoch
    await s.init("InitProducerId P (second incarnation)", p)
    await s.add_partitions("AddPartitionsToTxn with the old epoch", p, {topic: (0,)}, epoch=old_epoch)
    await s.end("EndTxn with the old epoch", p, True, epoch=old_epoch)
    await s.add_offsets("AddOffsetsToTxn with the old epoch", p, "some-group", epoch=old_epoch)
    group = await s.group("fenced-offsets")
    await s.add_offsets("AddOffsetsToTxn with the current epoch", p, group)
    await s.txn_offset_commit("TxnOffsetCommit with the old epoch", p, group, {(topic, 0): 1}, epoch=old_epoch)
    await s.add_partitions("AddPartitionsToTxn with the current epoch", p, {topic: (0,)})
    await s.produce_txn("Produce with the old epoch", p, topic, 0, "stale", epoch=old_epoch)
    await s.produce_txn("Produce with the current epoch", p, topic, 0, "fresh")
    await s.end("EndTxn commit with the current epoch", p, True)


@scenario
async def init_while_a_transaction_is_ongoing(s: TxnSession) -> None:
    """A new incarnation arrives mid-transaction: CONCURRENT_TRANSACTIONS while the old transaction is
    aborted with a bumped epoch, then its retry succeeds; the old incarnation is fenced."""
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P (first incarnation)", p)
    old_epoch = p.epoch
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.produce_txn("Produce x in the first transaction", p, topic, 0, "x")
    await s.init("InitProducerId P while the transaction is ongoing", p)
    await s.wait_for_state(p, "CompleteAbort")
    await s.describe_txn("DescribeTransactions P after the fencing abort", p)
    await s.init("InitProducerId P retried", p, retry_concurrent=True)
    await s.end("EndTxn from the first incarnation", p, True, epoch=old_epoch)
    await s.read("Fetch read_committed", {(topic, 0): 0})


@scenario
async def a_timed_out_transaction_is_aborted(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P with a 1 s transaction timeout", p, timeout_ms=SHORT_TIMEOUT_MS)
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.produce_txn("Produce late in the transaction", p, topic, 0, "late")
    await s.wait_for_state(p, "CompleteAbort", "PrepareAbort")
    await s.wait_for_state(p, "CompleteAbort")
    await s.describe_txn("DescribeTransactions P after the timeout", p)
    await s.end("EndTxn commit from the timed-out producer", p, True)
    await s.produce_txn("Produce from the timed-out producer", p, topic, 0, "later")
    await s.add_partitions("AddPartitionsToTxn from the timed-out producer", p, {topic: (0,)})
    await s.read("Fetch read_committed", {(topic, 0): 0})
    await s.init("InitProducerId P recovering with its producer id and epoch", p, recover=True)


@scenario
async def add_partitions_with_an_unknown_topic(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    missing = s.name("topic", "missing")
    await s.add_partitions("AddPartitionsToTxn orders-0, orders-5 and a missing topic", p,
                           {topic: (0, 5), missing: (0,)})
    await s.describe_txn("DescribeTransactions P (nothing was added)", p)


@scenario
async def add_offsets_to_an_unknown_group(s: TxnSession) -> None:
    """AddOffsetsToTxn needs no group to exist: the group's offsets partition joins the transaction."""
    await s.topic("orders", 1)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    group = s.name("group", "nobody-home")
    await s.add_offsets("AddOffsetsToTxn for a group that does not exist", p, group)
    await s.describe_txn("DescribeTransactions P", p)
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.describe_txn("DescribeTransactions P committed", p)


@scenario
async def txn_offset_commit_pending_then_committed(s: TxnSession) -> None:
    topic = await s.topic("orders", 2)
    group = await s.group("consume-transform-produce")
    await s.commit_offsets("OffsetCommit orders-1 outside any transaction", group, {(topic, 1): 3})
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_offsets("AddOffsetsToTxn", p, group)
    await s.txn_offset_commit("TxnOffsetCommit orders-0 at 10, orders-1 at 11", p, group, {(topic, 0): 10, (topic, 1): 11})
    partitions = {topic: (0, 1)}
    await s.fetch_offsets_stable("OffsetFetch require_stable while pending", group, partitions)
    await s.fetch_offsets_stable("OffsetFetch (not stable) while pending", group, partitions, require_stable=False)
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.wait_until_stable(group, partitions)
    await s.fetch_offsets_stable("OffsetFetch require_stable after the commit", group, partitions)


@scenario
async def txn_offset_commit_aborted(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    group = await s.group("consume-transform-produce")
    await s.commit_offsets("OffsetCommit orders-0 at 5", group, {(topic, 0): 5})
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_offsets("AddOffsetsToTxn", p, group)
    await s.txn_offset_commit("TxnOffsetCommit orders-0 at 9", p, group, {(topic, 0): 9})
    await s.fetch_offsets_stable("OffsetFetch require_stable while pending", group, {topic: (0,)})
    await s.end("EndTxn abort", p, False)
    await s.wait_for_state(p, "CompleteAbort")
    await s.wait_until_stable(group, {topic: (0,)})
    await s.fetch_offsets_stable("OffsetFetch require_stable after the abort", group, {topic: (0,)})


@scenario
async def txn_offset_commit_checks_the_group_generation(s: TxnSession) -> None:
    """TxnOffsetCommit v3+ carries the consumer's group metadata, checked as OffsetCommit's is."""
    topic = await s.topic("orders", 1)
    group = await s.group("cg")
    member = await s.member("A", group)
    await member.form_group()
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_offsets("AddOffsetsToTxn", p, group)
    offsets = {(topic, 0): 1}
    await s.txn_offset_commit("TxnOffsetCommit with the member's generation", p, group, offsets,
                              generation=member.generation, member_id=member.member_id)
    await s.txn_offset_commit("TxnOffsetCommit with a stale generation", p, group, offsets,
                              generation=member.generation + 1, member_id=member.member_id)
    await s.txn_offset_commit("TxnOffsetCommit with an unknown member", p, group, offsets,
                              generation=member.generation, member_id="ghost-member")
    await s.txn_offset_commit("TxnOffsetCommit with an instance id the group does not know", p, group, offsets,
                              generation=member.generation, member_id=member.member_id, instance_id="ghost-instance")
    await s.txn_offset_commit("TxnOffsetCommit without group metadata", p, group, offsets)
    other = s.name("group", "no-such-group")
    await s.txn_offset_commit("TxnOffsetCommit to an unknown group with a generation", p, other, offsets,
                              generation=1, member_id="m")
    await s.end("EndTxn abort", p, False)


@scenario
async def list_and_describe_transactions(s: TxnSession) -> None:
    topic = await s.topic("orders", 1)
    idle, busy = await s.producer("idle"), await s.producer("busy")
    await s.init("InitProducerId idle", idle)
    await s.init("InitProducerId busy", busy)
    await s.add_partitions("AddPartitionsToTxn busy orders-0", busy, {topic: (0,)})
    await s.list_txns("ListTransactions")
    await s.list_txns("ListTransactions state Ongoing", states=("Ongoing",))
    await s.list_txns("ListTransactions state Empty and an unknown state", states=("Empty", "Bogus"))
    await s.list_txns("ListTransactions of the busy producer id", producers=(busy,))
    await s.list_txns("ListTransactions running for over an hour", duration_ms=3_600_000)
    await s.describe_txn("DescribeTransactions idle and busy", idle, busy)
    await s.end("EndTxn abort busy", busy, False)


@scenario
async def verify_only_add_partitions(s: TxnSession) -> None:
    """The brokers' AddPartitionsToTxn v5 with verify_only: is each partition already in the transaction?"""
    topic = await s.topic("orders", 2)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.verify("AddPartitionsToTxn v5 verify_only orders-0, orders-1", p, {topic: (0, 1)})
    await s.describe_txn("DescribeTransactions P (verification added nothing)", p)
    await s.end("EndTxn abort", p, False)


@scenario
async def produce_to_a_partition_not_in_the_transaction(s: TxnSession) -> None:
    """Transaction verification (KIP-890 part 1): a transactional batch for a partition never added is refused."""
    topic = await s.topic("orders", 2)
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.produce_txn("Produce orders-1, never added", p, topic, 1, "sneaky")
    await s.produce_txn("Produce orders-0", p, topic, 0, "fine")
    await s.end("EndTxn commit", p, True)
    await s.wait_for_state(p, "CompleteCommit")
    await s.read("Fetch read_committed", {(topic, 0): 0, (topic, 1): 0})


@scenario
async def restart_between_prepare_and_complete(s: TxnSession) -> None:
    """A commit whose markers are not written yet when the broker restarts: after the restart the
    coordinator finishes them, so everything reads as if no restart had happened. Against Kafka the hooks
    do nothing (its markers follow at once); groupcoord's test holds its markers back and restarts the
    broker at ``after_end_txn`` (test_transaction_conformance.py)."""
    topic = await s.topic("orders", 1)
    group = await s.group("cg")
    p = await s.producer("P")
    await s.init("InitProducerId P", p)
    await s.add_partitions("AddPartitionsToTxn orders-0", p, {topic: (0,)})
    await s.add_offsets("AddOffsetsToTxn", p, group)
    await s.produce_txn("Produce a, b in the transaction", p, topic, 0, "a", "b")
    await s.txn_offset_commit("TxnOffsetCommit orders-0 at 2", p, group, {(topic, 0): 2})
    await s.hooks.before_end_txn(s)
    await s.end("EndTxn commit", p, True)
    await s.hooks.after_end_txn(s)
    await s.wait_for_state(p, "CompleteCommit")
    await s.wait_until_stable(group, {topic: (0,)})
    await s.describe_txn("DescribeTransactions P", p)
    await s.read("Fetch read_committed", {(topic, 0): 0})
    await s.fetch_offsets_stable("OffsetFetch require_stable", group, {topic: (0,)})
    await s.init("InitProducerId P again", p)
