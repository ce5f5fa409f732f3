"""The transaction coordinator as Kafka's TransactionCoordinator behaves: InitProducerId epochs and fencing,
the Empty → Ongoing → Prepare* → Complete* cycle with its markers, the errors of each wrong step,
timeouts, expiry, and a restart between prepare and complete."""

import asyncio
import itertools

import pytest

from groupcoord.coordinator.clock import ManualClock
from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.transactions.service import TransactionCoordinator
from groupcoord.coordinator.transactions.shard import ExpectedProducer
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import TRANSACTION_STATE_TOPIC
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager

pytestmark = pytest.mark.timeout(60)

TIMEOUT = 60_000


def config(**kw) -> BrokerConfig:
    return BrokerConfig(transaction_state_log_num_partitions=4, **kw)


class Markers:
    """The data plane's marker write, recorded; ``gate`` holds writes back, ``fail`` answers an error."""

    def __init__(self):
        self.written: list[tuple] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.fail: ErrorCode | None = None

    async def __call__(self, pid, epoch, coordinator_epoch, committed, partitions):
        await self.gate.wait()
        if self.fail is not None:
            return {tp: self.fail for tp in partitions}
        self.written.append((pid, epoch, committed, tuple(sorted(partitions))))
        return {tp: ErrorCode.none for tp in partitions}


class Groups:
    """The group coordinator's side of markers for __consumer_offsets partitions."""

    def __init__(self):
        self.completed: list[tuple] = []

    def complete_transaction(self, partition, pid, epoch, coordinator_epoch, committed):
        self.completed.append((partition, pid, epoch, committed))
        future = asyncio.get_running_loop().create_future()
        future.set_result({"error_code": ErrorCode.none})
        return future


class Coordinator:
    ids = itertools.count(1000)

    def __init__(self, path, clock=None, markers=None, **settings):
        self.path, self.clock, self.settings = path, clock or ManualClock(), settings
        self.markers = markers or Markers()
        self.groups = Groups()

    async def __aenter__(self) -> TransactionCoordinator:
        self.manager = LogManager(self.path, FsyncPolicy.ALWAYS, LogConfig())
        await self.manager.open_existing()
        self.tc = TransactionCoordinator(config(**self.settings), self.manager, self.groups, lambda: next(self.ids),
                                         clock=self.clock)
        self.tc.set_data_marker_writer(self.markers)
        await self.tc.start()
        await self.tc.wait_active()
        return self.tc

    async def __aexit__(self, *exc):
        await self.tc.stop()
        await self.manager.close()


async def answer(value):
    return value if isinstance(value, dict) else await value


async def init(tc, tid="tx", timeout=TIMEOUT, expected=None):
    return await answer(tc.init_producer_id(tid, timeout, expected))


async def add(tc, r, *partitions, tid="tx"):
    return (await answer(tc.add_partitions(tid, r["producer_id"], r["producer_epoch"],
                                           list(partitions) or [("orders", 0)])))["error_code"]


async def end(tc, r, commit=True, tid="tx"):
    return (await answer(tc.end_transaction(tid, r["producer_id"], r["producer_epoch"], commit)))["error_code"]


def state(tc, tid="tx"):
    return tc.describe([tid])[0]


async def tick(tc, tid="tx"):
    def op(shard, token, now):
        fx = Effects()
        fx.extend(shard.tick(now))
        fx.reply(token, {})
        return fx

    await tc._runtime.run(tc.partition_for(tid), op, lambda e: {})


async def test_a_new_transactional_id_gets_a_producer_id_at_epoch_0_and_each_init_bumps_the_epoch(tmp_path):
    async with Coordinator(tmp_path) as tc:
        first = await init(tc)
        assert first["error_code"] == ErrorCode.none and first["producer_epoch"] == 0
        second = await init(tc)
        assert (second["producer_id"], second["producer_epoch"]) == (first["producer_id"], 1)
        assert state(tc)["transaction_state"] == "Empty"


async def test_a_commit_writes_markers_to_every_partition_then_completes(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        assert await add(tc, r, ("orders", 0), ("orders", 1)) == ErrorCode.none
        assert await add(tc, r, ("__consumer_offsets", 7)) == ErrorCode.none
        described = state(tc)
        assert described["transaction_state"] == "Ongoing"
        assert described["topics"] == [{"topic": "__consumer_offsets", "partitions": [7]},
                                       {"topic": "orders", "partitions": [0, 1]}]
        assert await end(tc, r) == ErrorCode.none
        await tc.wait_for_markers()
        assert tc.markers.data_writer.written == [(r["producer_id"], 0, True, (("orders", 0), ("orders", 1)))]
        assert tc.markers.groups.completed == [(7, r["producer_id"], 0, True)]
        assert state(tc)["transaction_state"] == "CompleteCommit" and state(tc)["topics"] == []
        # A retried commit of a transaction already committed is answered NONE, as Kafka answers it.
        assert await end(tc, r) == ErrorCode.none
        assert await end(tc, r, commit=False) == ErrorCode.invalid_txn_state


async def test_end_txn_in_the_wrong_state(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        assert await end(tc, r) == ErrorCode.invalid_txn_state  # Empty: nothing to end
        await add(tc, r)
        assert await end(tc, r, commit=False) == ErrorCode.none
        await tc.wait_for_markers()
        assert await end(tc, r) == ErrorCode.invalid_txn_state  # commit after CompleteAbort
        assert await end(tc, r, commit=False) == ErrorCode.none  # a retried abort


async def test_unknown_ids_and_stale_epochs(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        assert await end(tc, {**r, "producer_id": 1}) == ErrorCode.invalid_producer_id_mapping
        assert await end(tc, r, tid="other") == ErrorCode.invalid_producer_id_mapping
        assert await add(tc, r, tid="other") == ErrorCode.invalid_producer_id_mapping
        newer = await init(tc)
        assert await add(tc, r) == ErrorCode.producer_fenced
        assert await end(tc, r) == ErrorCode.producer_fenced
        assert await add(tc, newer) == ErrorCode.none


async def test_init_while_a_transaction_is_ongoing_fences_the_old_producer_and_aborts_its_transaction(tmp_path):
    async with Coordinator(tmp_path) as tc:
        old = await init(tc)
        await add(tc, old)
        fenced = await init(tc)
        assert fenced["error_code"] == ErrorCode.concurrent_transactions
        await tc.wait_for_markers()
        # The abort carries the bumped epoch, so the data partition fences the old producer's writes.
        assert tc.markers.data_writer.written == [(old["producer_id"], 1, False, (("orders", 0),))]
        assert state(tc)["transaction_state"] == "CompleteAbort"
        retried = await init(tc)
        assert (retried["error_code"], retried["producer_epoch"]) == (ErrorCode.none, 2)
        assert await end(tc, old) == ErrorCode.producer_fenced


async def test_requests_during_prepare_get_concurrent_transactions(tmp_path):
    markers = Markers()
    async with Coordinator(tmp_path, markers=markers) as tc:
        r = await init(tc)
        await add(tc, r)
        markers.gate.clear()
        assert await end(tc, r) == ErrorCode.none  # answered once PrepareCommit is durable, before the markers
        assert state(tc)["transaction_state"] == "PrepareCommit"
        assert await add(tc, r) == ErrorCode.concurrent_transactions
        assert await end(tc, r) == ErrorCode.concurrent_transactions
        assert await end(tc, r, commit=False) == ErrorCode.invalid_txn_state
        assert (await init(tc))["error_code"] == ErrorCode.concurrent_transactions
        assert tc.verify_partitions("tx", r["producer_id"], r["producer_epoch"], [("orders", 0)]) == {
            ("orders", 0): ErrorCode.concurrent_transactions}
        markers.gate.set()
        await tc.wait_for_markers()
        assert state(tc)["transaction_state"] == "CompleteCommit"


async def test_a_failed_marker_is_retried_until_written(tmp_path):
    markers = Markers()
    async with Coordinator(tmp_path, markers=markers) as tc:
        r = await init(tc)
        await add(tc, r)
        markers.fail = ErrorCode.not_leader_or_follower
        await end(tc, r)
        await asyncio.sleep(0.25)
        assert state(tc)["transaction_state"] == "PrepareCommit" and markers.written == []
        markers.fail = None
        await tc.wait_for_markers()
        assert state(tc)["transaction_state"] == "CompleteCommit" and len(markers.written) == 1


async def test_markers_for_a_deleted_topic_are_given_up(tmp_path):
    markers = Markers()
    async with Coordinator(tmp_path, markers=markers) as tc:
        r = await init(tc)
        await add(tc, r)
        markers.fail = ErrorCode.unknown_topic_or_partition
        await end(tc, r)
        await tc.wait_for_markers()
        assert state(tc)["transaction_state"] == "CompleteCommit"


async def test_a_restart_between_prepare_and_complete_finishes_the_markers(tmp_path):
    markers = Markers()
    clock = ManualClock()
    async with Coordinator(tmp_path, clock, markers) as tc:
        r = await init(tc)
        await add(tc, r, ("orders", 0), ("orders", 3))
        markers.gate.clear()
        assert await end(tc, r, commit=False) == ErrorCode.none
        assert state(tc)["transaction_state"] == "PrepareAbort"
    assert markers.written == []
    restarted = Markers()
    async with Coordinator(tmp_path, clock, restarted) as tc:
        await tc.wait_for_markers()
        assert restarted.written == [(r["producer_id"], 0, False, (("orders", 0), ("orders", 3)))]
        assert state(tc)["transaction_state"] == "CompleteAbort"
        again = await init(tc)
        assert (again["producer_id"], again["producer_epoch"]) == (r["producer_id"], 1)


async def test_state_survives_a_restart(tmp_path):
    clock = ManualClock()
    async with Coordinator(tmp_path, clock) as tc:
        r = await init(tc)
        await add(tc, r, ("orders", 0))
    async with Coordinator(tmp_path, clock) as tc:
        described = state(tc)
        assert (described["transaction_state"], described["producer_id"], described["producer_epoch"]) == \
            ("Ongoing", r["producer_id"], 0)
        assert described["topics"] == [{"topic": "orders", "partitions": [0]}]
        assert described["transaction_start_time"] == clock.wall_ms()
        assert await end(tc, r) == ErrorCode.none


async def test_a_transaction_timeout_above_the_maximum_is_refused(tmp_path):
    async with Coordinator(tmp_path, transaction_max_timeout_ms=1000) as tc:
        assert (await init(tc, timeout=1001))["error_code"] == ErrorCode.invalid_transaction_timeout
        assert (await init(tc, timeout=0))["error_code"] == ErrorCode.invalid_transaction_timeout
        assert (await init(tc, timeout=1000))["error_code"] == ErrorCode.none
        assert (await init(tc, tid=""))["error_code"] == ErrorCode.invalid_request


async def test_a_transaction_past_its_timeout_is_aborted_with_a_bumped_epoch(tmp_path):
    clock = ManualClock()
    async with Coordinator(tmp_path, clock) as tc:
        r = await init(tc, timeout=5000)
        await add(tc, r)
        clock.advance(4000)
        await tick(tc)  # the periodic check runs, but the transaction is not past its timeout yet
        assert state(tc)["transaction_state"] == "Ongoing"
        clock.advance(10_000)
        await tick(tc)
        await tc.wait_for_markers()
        assert tc.markers.data_writer.written == [(r["producer_id"], 1, False, (("orders", 0),))]
        assert state(tc)["transaction_state"] == "CompleteAbort" and state(tc)["producer_epoch"] == 1
        assert await end(tc, r) == ErrorCode.producer_fenced


async def test_an_idle_transactional_id_expires(tmp_path):
    clock = ManualClock()
    async with Coordinator(tmp_path, clock, transactional_id_expiration_ms=60_000) as tc:
        idle = await init(tc, tid="idle")
        busy = await init(tc, tid="busy")
        await add(tc, busy, tid="busy")
        clock.advance(3_600_001)
        await tick(tc, "idle")
        await tick(tc, "busy")
        assert state(tc, "idle")["error_code"] == ErrorCode.transactional_id_not_found
        assert state(tc, "busy")["error_code"] == ErrorCode.none  # a transaction in flight never expires
        assert idle["producer_id"] != busy["producer_id"]
    async with Coordinator(tmp_path, clock) as tc:
        assert state(tc, "idle")["error_code"] == ErrorCode.transactional_id_not_found


async def test_init_with_the_expected_producer_recovers_or_is_fenced(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        same = await init(tc, expected=ExpectedProducer(r["producer_id"], 0))
        assert (same["error_code"], same["producer_epoch"]) == (ErrorCode.none, 1)
        retry = await init(tc, expected=ExpectedProducer(r["producer_id"], 0))
        assert (retry["error_code"], retry["producer_epoch"]) == (ErrorCode.none, 1)  # a retry of that bump
        stale = await init(tc, expected=ExpectedProducer(r["producer_id"] + 77, 1))
        assert stale["error_code"] == ErrorCode.producer_fenced


async def test_verification_says_which_partitions_are_in_the_transaction(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        await add(tc, r, ("orders", 0))
        assert await tc.verifier("tx", r["producer_id"], r["producer_epoch"], [("orders", 0), ("orders", 1)]) == {
            ("orders", 0): ErrorCode.none, ("orders", 1): ErrorCode.transaction_abortable}
        assert tc.verify_partitions("tx", r["producer_id"], 9, [("orders", 0)]) == {("orders", 0): ErrorCode.producer_fenced}
        assert tc.verify_partitions("nope", 1, 0, [("orders", 0)]) == {("orders", 0): ErrorCode.invalid_producer_id_mapping}


async def test_list_filters_by_state_producer_and_duration(tmp_path):
    clock = ManualClock()
    async with Coordinator(tmp_path, clock) as tc:
        a = await init(tc, tid="a")
        await init(tc, tid="b")
        await add(tc, a, tid="a")
        clock.advance(5000)
        listed = tc.list_transactions(set(), set(), -1)
        assert sorted(t["transactional_id"] for t in listed["transaction_states"]) == ["a", "b"]
        ongoing = tc.list_transactions({"Ongoing", "Bogus"}, set(), -1)
        assert [t["transactional_id"] for t in ongoing["transaction_states"]] == ["a"]
        assert ongoing["unknown_state_filters"] == ["Bogus"]
        assert tc.list_transactions(set(), {a["producer_id"]}, -1)["transaction_states"][0]["transactional_id"] == "a"
        assert [t["transactional_id"] for t in tc.list_transactions({"Ongoing"}, set(), 4000)["transaction_states"]] == ["a"]
        assert tc.list_transactions({"Ongoing"}, set(), 6000)["transaction_states"] == []


async def test_records_land_on_the_partition_of_the_transactional_id(tmp_path):
    async with Coordinator(tmp_path) as tc:
        await init(tc, tid="tx")
        partition = tc.partition_for("tx")
        log = await tc._runtime.log_manager.get_or_create(TRANSACTION_STATE_TOPIC, partition)
        assert [h.records_count async for h, _ in log.batches(0)] == [1]
        assert log.config.compact


async def test_metrics_count_commits_aborts_timeouts_fencing_and_open_transactions(tmp_path):
    from groupcoord.coordinator.metrics import BrokerMetrics

    metrics = BrokerMetrics()
    clock = ManualClock()
    coordinator = Coordinator(tmp_path, clock)
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    tc = TransactionCoordinator(config(), manager, coordinator.groups, lambda: next(Coordinator.ids), clock=clock,
                                observer=metrics)
    tc.set_data_marker_writer(coordinator.markers)
    metrics.attach_transactions(tc)
    await tc.start()
    await tc.wait_active()
    try:
        a = await init(tc, "a")
        await add(tc, a, tid="a")
        await end(tc, a, tid="a")
        b = await init(tc, "b", timeout=1000)
        await add(tc, b, tid="b")
        c = await init(tc, "c")
        await add(tc, c, tid="c")
        await tc.wait_for_markers()
        text = metrics.exposition().decode()
        assert 'groupcoord_transactions_ongoing 2.0' in text
        assert 'groupcoord_transactions{state="CompleteCommit"} 1.0' in text
        clock.advance(15_000)  # past b's timeout and the periodic check (every 10 s)
        await tick(tc, "b")
        assert (await init(tc, "c"))["error_code"] == ErrorCode.concurrent_transactions  # fences c's transaction
        await tc.wait_for_markers()
        text = metrics.exposition().decode()
        assert 'groupcoord_transactions_ended_total{result="commit"} 1.0' in text
        assert 'groupcoord_transactions_ended_total{result="abort"} 2.0' in text
        assert 'groupcoord_transactions_timed_out_total 1.0' in text
        assert 'groupcoord_transactional_producers_fenced_total 1.0' in text
        assert 'groupcoord_transactions_ongoing 0.0' in text
    finally:
        await tc.stop()
        await manager.close()


async def test_transaction_state_is_created_on_first_use_and_loaded_when_it_exists(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    tc = TransactionCoordinator(config(), manager, Groups(), lambda: 1)
    await tc.start()
    assert not tc.active and not list(tmp_path.glob("__transaction_state-*"))  # a broker without transactions
    assert tc.list_transactions(set(), set(), -1)["transaction_states"] == []
    assert (await init(tc))["error_code"] == ErrorCode.coordinator_load_in_progress  # starts the creation
    await tc.wait_active()
    assert len(list(tmp_path.glob("__transaction_state-*"))) == 4
    await tc.stop()
    await manager.close()
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    await manager.open_existing()
    tc = TransactionCoordinator(config(), manager, Groups(), lambda: 1)
    await tc.start()
    assert tc.active
    await tc.stop()
    await manager.close()


async def test_a_lowered_setting_does_not_move_transactional_ids_away_from_their_records(tmp_path):
    async with Coordinator(tmp_path) as tc:
        r = await init(tc, "moved")
    for setting, expected in ((2, 4), (7, 7)):  # more directories than the setting: the topic's count wins
        manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
        await manager.open_existing()
        tc = TransactionCoordinator(BrokerConfig(transaction_state_log_num_partitions=setting), manager, Groups(),
                                    lambda: 1)
        await tc.start()
        try:
            assert tc.num_partitions == expected
            if expected == 4:
                assert state(tc, "moved")["producer_id"] == r["producer_id"]
        finally:
            await tc.stop()
            await manager.close()


async def test_an_exhausted_epoch_rotates_to_a_new_producer_id(tmp_path):
    import dataclasses

    async with Coordinator(tmp_path) as tc:
        r = await init(tc)
        shard = tc.shard_for("tx")
        shard.txns["tx"] = dataclasses.replace(shard.txns["tx"], producer_epoch=32766)  # Short.MaxValue - 1
        rotated = await init(tc, expected=ExpectedProducer(r["producer_id"], 32766))
        assert rotated["error_code"] == ErrorCode.none
        assert rotated["producer_id"] != r["producer_id"] and rotated["producer_epoch"] == 0
        # A retry of that InitProducerId by a producer that never saw the answer: the previous id with its
        # exhausted epoch is recognised (Kafka's isValidProducerId) and answered the same id and epoch.
        retry = await init(tc, expected=ExpectedProducer(r["producer_id"], 32766))
        assert (retry["error_code"], retry["producer_id"], retry["producer_epoch"]) == (
            ErrorCode.none, rotated["producer_id"], 0)
        # Any other epoch of the old producer id is an older incarnation: fenced.
        other = await init(tc, expected=ExpectedProducer(r["producer_id"], 5))
        assert other["error_code"] == ErrorCode.producer_fenced


async def test_a_fenced_producer_of_an_old_version_hears_invalid_producer_epoch():
    from groupcoord.coordinator.apis.transactions import older_fenced

    assert older_fenced(ErrorCode.producer_fenced, 3, 4) == ErrorCode.invalid_producer_epoch  # InitProducerId v3
    assert older_fenced(ErrorCode.producer_fenced, 4, 4) == ErrorCode.producer_fenced
    assert older_fenced(ErrorCode.producer_fenced, 1, 2) == ErrorCode.invalid_producer_epoch  # EndTxn/AddPartitions v1
    assert older_fenced(ErrorCode.concurrent_transactions, 0, 2) == ErrorCode.concurrent_transactions
