"""The async runtime: answers only after durable writes, loads shards from __consumer_offsets, survives restarts."""

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from groupcoord.coordinator.config import BrokerConfig
from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.requests import CommitPartition, Heartbeat, JoinGroup, OffsetCommit, SyncGroup
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.coordinator.groups.service import GroupCoordinatorService
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, OffsetCommitValue, encode_key, encode_value
from tests.coordinator.groups.harness import FakeTopics, subscription

pytestmark = pytest.mark.timeout(60)

PARTITIONS = 3


def config(**kw) -> BrokerConfig:
    settings = {"offsets_topic_num_partitions": PARTITIONS, "group_initial_rebalance_delay_ms": 0, **kw}
    return BrokerConfig(**settings)


def join_req(group, member_id="", client="c") -> JoinGroup:
    return JoinGroup(group, member_id, "consumer", (("range", subscription("orders")),), 10_000, 30_000, client_id=client, client_host="/127.0.0.1")


async def form_group(service, group, *clients):
    firsts = [await service.join_group(join_req(group, client=c)) for c in clients]
    assert all(r["error_code"] == ErrorCode.member_id_required for r in firsts)
    joined = await asyncio.gather(*(service.join_group(join_req(group, r["member_id"], c)) for r, c in zip(firsts, clients)))
    leader = next(r for r in joined if r["members"])
    assignment = tuple((m["member_id"], m["member_id"].encode()) for m in leader["members"])
    syncs = await asyncio.gather(
        *(service.sync_group(SyncGroup(group, r["generation_id"], r["member_id"], assignment if r["members"] else ())) for r in joined)
    )
    assert all(s["error_code"] == ErrorCode.none for s in syncs)
    return [r["member_id"] for r in joined]


def commit_req(group, offset, member="", generation=-1) -> OffsetCommit:
    return OffsetCommit(group, (("orders", (CommitPartition(0, offset, -1, "m"),)),), generation, member)


async def test_a_group_formed_and_committed_survives_a_restart(tmp_path):
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    service = GroupCoordinatorService(config(), manager, FakeTopics(orders=1))
    await service.start()
    members = await form_group(service, "g", "a", "b")
    result = await service.commit_offsets(commit_req("g", 42, members[0], 1))
    assert result["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
    await service.stop()
    await manager.close()

    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    await manager.open_existing()
    restarted = GroupCoordinatorService(config(), manager, FakeTopics(orders=1))
    await restarted.start()
    assert restarted.committed_offsets("g") == {("orders", 0): 42}
    views = {v.group_id: v for v in restarted.iter_groups()}
    assert views["g"].state == "Stable" and views["g"].generation == 1
    assert {m.member_id for m in views["g"].members} == set(members)
    hb = await restarted.heartbeat(Heartbeat("g", 1, members[1]))
    assert hb["error_code"] == ErrorCode.none
    fetched = await restarted.fetch_offsets(OffsetFetch("g", None))
    assert fetched["topics"][0]["partitions"][0]["committed_offset"] == 42
    await restarted.stop()
    await manager.close()


class GateLog:
    """A partition log whose appends wait for the test to open the gate, and that can be told to fail.

    In memory, but numbered as a log is (each append gets the next offsets), with a directory for the
    runtime's snapshot and the corruption listener every log has."""

    def __init__(self, records=()):
        import shutil
        import tempfile
        import weakref

        self.gate = asyncio.Event()
        self.gate.set()
        self.load_gate = asyncio.Event()
        self.load_gate.set()
        self.appended: list[bytes] = []
        self.fail_next = False
        self.initial = [encode_batch([(k, v, ()) for k, v in records])] if records else []
        self.log_start_offset = 0
        self.log_end_offset = len(records) if records else 0
        self.directory = Path(tempfile.mkdtemp(prefix="gatelog-"))
        weakref.finalize(self, shutil.rmtree, self.directory, True)
        self.corruption = None

    def add_corruption_listener(self, cb):
        pass

    async def run_in_executor(self, fn, *args):
        return fn(*args)

    async def append(self, data, **kw):
        from groupcoord.protocol.record_batch import iter_batches, set_base_offset

        await self.gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        buf = bytearray(data)
        base = self.log_end_offset
        for pos, header in iter_batches(buf, verify=False):
            set_base_offset(buf, pos, self.log_end_offset)
            self.log_end_offset += header.last_offset_delta + 1
        self.appended.append(bytes(buf))
        return SimpleNamespace(base_offset=base, last_offset=self.log_end_offset - 1)

    async def batches(self, start_offset=0):
        from groupcoord.protocol.record_batch import iter_batches

        await self.load_gate.wait()
        for raw in self.initial + self.appended:
            for pos, header in iter_batches(raw):
                if header.base_offset + header.last_offset_delta >= start_offset:
                    yield header, raw[pos:pos + header.size]


class GateManager:
    def __init__(self, logs):
        self.logs = logs

    async def get_or_create(self, topic, partition, config=None):
        assert topic == "__consumer_offsets" and config.compact
        return self.logs[partition]


async def test_a_commit_is_answered_only_once_its_record_is_durable_and_later_answers_wait_for_it():
    logs = {p: GateLog() for p in range(PARTITIONS)}
    service = GroupCoordinatorService(config(), GateManager(logs), FakeTopics(orders=1))
    await service.start()
    log = logs[partition_for("g", PARTITIONS)]
    log.gate.clear()
    commit = asyncio.ensure_future(service.commit_offsets(commit_req("g", 7)))
    stable_fetch = asyncio.ensure_future(service.fetch_offsets(OffsetFetch("g", None, require_stable=True)))
    # a plain fetch is answered at once from durable state (Kafka's read operation): the commit is not in it
    durable = service.fetch_offsets(OffsetFetch("g", None))
    assert durable.done() and durable.result()["topics"] == []
    await asyncio.sleep(0.01)
    assert not commit.done() and not stable_fetch.done()
    log.gate.set()
    assert (await commit)["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
    assert (await stable_fetch)["topics"][0]["partitions"][0]["committed_offset"] == 7
    assert (await service.fetch_offsets(OffsetFetch("g", None)))["topics"][0]["partitions"][0]["committed_offset"] == 7
    assert len(log.appended) == 1
    await service.stop()


async def test_a_loading_shard_answers_coordinator_load_in_progress():
    logs = {p: GateLog() for p in range(PARTITIONS)}
    target = logs[partition_for("g", PARTITIONS)]
    target.load_gate.clear()
    service = GroupCoordinatorService(config(), GateManager(logs), FakeTopics(orders=1))
    starting = asyncio.ensure_future(service.start())
    await asyncio.sleep(0.01)
    assert service.is_loading("g")
    response = await service.join_group(join_req("g"))
    assert response["error_code"] == ErrorCode.coordinator_load_in_progress
    target.load_gate.set()
    await starting
    assert (await service.join_group(join_req("g")))["error_code"] == ErrorCode.member_id_required
    await service.stop()


async def test_a_failed_append_answers_not_coordinator_and_the_shard_reloads_what_is_durable():
    key = OffsetCommitKey("g", "orders", 0)
    logs = {p: GateLog() for p in range(PARTITIONS)}
    logs[partition_for("g", PARTITIONS)] = GateLog([(encode_key(key), encode_value(OffsetCommitValue(1, -1, "", 0)))])
    service = GroupCoordinatorService(config(), GateManager(logs), FakeTopics(orders=1))
    await service.start()
    assert service.committed_offsets("g") == {("orders", 0): 1}
    logs[partition_for("g", PARTITIONS)].fail_next = True
    result = await service.commit_offsets(commit_req("g", 2))
    assert result["topics"][0]["partitions"][0]["error_code"] == ErrorCode.not_coordinator
    for _ in range(100):
        if not service.is_loading("g"):
            break
        await asyncio.sleep(0.01)
    assert service.committed_offsets("g") == {("orders", 0): 1}  # the lost write is not believed
    await service.stop()


async def test_timers_run_on_the_event_loop_session_expiry_empties_the_group():
    logs = {p: GateLog() for p in range(PARTITIONS)}
    service = GroupCoordinatorService(config(group_min_session_timeout_ms=10), GateManager(logs), FakeTopics(orders=1))
    await service.start()
    short = JoinGroup("g", "", "consumer", (("range", b""),), 50, 50, client_id="c")
    first = await service.join_group(short)
    joined = await service.join_group(JoinGroup("g", first["member_id"], "consumer", (("range", b""),), 50, 50, client_id="c"))
    assert joined["generation_id"] == 1
    for _ in range(100):
        await asyncio.sleep(0.01)
        if next(v for v in service.iter_groups() if v.group_id == "g").state == "Empty":
            break
    assert next(v for v in service.iter_groups() if v.group_id == "g").state == "Empty"
    await service.stop()


async def test_purgatory_sizes_count_parked_joins_and_syncs():
    logs = {p: GateLog() for p in range(PARTITIONS)}
    service = GroupCoordinatorService(config(group_initial_rebalance_delay_ms=60_000), GateManager(logs), FakeTopics(orders=1))
    await service.start()
    first = await service.join_group(join_req("g"))
    parked = asyncio.ensure_future(service.join_group(join_req("g", first["member_id"])))
    await asyncio.sleep(0.01)
    assert service.purgatory_sizes() == {"join": 1, "sync": 0, "heartbeat": 1}
    await service.stop()
    assert (await parked)["error_code"] == ErrorCode.coordinator_not_available


async def test_parked_joins_and_syncs_are_answered_in_their_own_shape_when_the_shard_stops():
    logs = {p: GateLog() for p in range(PARTITIONS)}
    service = GroupCoordinatorService(config(), GateManager(logs), FakeTopics(orders=1))
    await service.start()
    members = await form_group(service, "g", "a", "b")
    parked_join = asyncio.ensure_future(service.join_group(join_req("g", members[0], "a")))  # waits for "b" to rejoin
    firsts = [await service.join_group(join_req("h", client=c)) for c in ("a", "b")]
    joined = await asyncio.gather(*(service.join_group(join_req("h", r["member_id"], c)) for r, c in zip(firsts, "ab")))
    follower = next(r for r in joined if not r["members"])
    parked_sync = asyncio.ensure_future(service.sync_group(SyncGroup("h", follower["generation_id"], follower["member_id"], ())))
    await asyncio.sleep(0.01)
    assert not parked_join.done() and not parked_sync.done()
    await service.stop()
    join_answer = await parked_join
    assert join_answer["error_code"] == ErrorCode.coordinator_not_available
    assert join_answer["member_id"] == members[0] and join_answer["generation_id"] == -1
    assert (await parked_sync)["error_code"] == ErrorCode.coordinator_not_available


def test_groups_are_routed_to_the_shard_kafka_would_use():
    service = GroupCoordinatorService(BrokerConfig(), GateManager({}), FakeTopics())
    assert service.num_partitions == 50
    assert service.shard_for("my-group").partition == 12
    assert service.shard_for("polygenelubricants").partition == 0


async def test_an_undecodable_offsets_partition_takes_out_only_its_own_groups(tmp_path):
    """A record the codecs cannot read (here a valid batch whose OffsetCommit value is cut short) keeps that
    partition's groups out of service with a clear error; the broker and every other partition serve on,
    and the log is left as it was."""
    broken, healthy = "orders-service", next(g for g in (f"g{i}" for i in range(100))
                                             if partition_for(g, PARTITIONS) != partition_for("orders-service", PARTITIONS))
    manager = LogManager(tmp_path, FsyncPolicy.ALWAYS, LogConfig())
    log = await manager.get_or_create("__consumer_offsets", partition_for(broken, PARTITIONS), LogConfig())
    key = encode_key(OffsetCommitKey(broken, "orders", 0))
    await log.append(encode_batch([(key, encode_value(OffsetCommitValue(7, -1, "", 1, None))[:5], ())]))
    size_before = log.log_end_offset
    service = GroupCoordinatorService(config(), manager, FakeTopics(orders=1))
    await service.start()

    refused = await service.fetch_offsets(OffsetFetch(broken, None))
    assert refused["error_code"] == ErrorCode.coordinator_not_available
    described = await service.describe_groups([broken])
    assert described[0]["error_code"] == ErrorCode.coordinator_not_available
    committed = await service.commit_offsets(commit_req(healthy, 3))
    assert committed["topics"][0]["partitions"][0]["error_code"] == ErrorCode.none
    assert service.list_groups() == (ErrorCode.none, [{"group_id": healthy, "protocol_type": "", "group_state": "Empty", "group_type": "classic"}])
    assert log.log_end_offset == size_before, "nothing was written to the refused partition"
    await service.stop()
    await manager.close()
