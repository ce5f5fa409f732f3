"""Compaction of ``__consumer_offsets`` must not lose a committed offset to a transactional one that never
counted: an aborted (or still open) TxnOffsetCommit of the same partition may not shadow the plain commit
before it, or a replay after compaction finds no offset at all. Kafka's cleaner never cleans past the last
stable offset and removes aborted transactional records instead of keeping them as the latest value.

The cleaner finds the transactions from the log's own batches (``storage.cleaner_txns.scan_transactions``),
so the group coordinator's markers count as the data plane's do."""

import pytest

from groupcoord.coordinator.groups.requests import CommitPartition, OffsetCommit
from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log_manager import LogManager
from tests.coordinator.groups.test_txn_offsets import EPOCH, PID, Broker, fetched, offsets_partition, txn_commit

pytestmark = pytest.mark.timeout(60)


async def compact(path):
    manager = LogManager(path, FsyncPolicy.ALWAYS, LogConfig())
    try:
        logs = await manager.open_existing()
        for (topic, _), log in logs.items():
            if topic == OFFSETS_TOPIC:
                await log.roll()
        await manager.clean_now(OFFSETS_TOPIC)
    finally:
        await manager.close()


async def test_an_aborted_transactional_offset_does_not_shadow_the_commit_before_it(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(0, 5),)),)))
        await service.commit_transactional_offsets(txn_commit("g", 9))
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, False)
        assert await fetched(service, "g") == (0, 5)
    await compact(tmp_path)
    async with Broker(tmp_path) as service:
        assert await fetched(service, "g") == (0, 5)


async def test_an_open_transactional_offset_is_not_compacted_over_and_its_later_abort_keeps_the_commit(tmp_path):
    async with Broker(tmp_path) as service:
        await service.commit_offsets(OffsetCommit("g", (("orders", (CommitPartition(0, 5),)),)))
        await service.commit_transactional_offsets(txn_commit("g", 9))
    await compact(tmp_path)  # the transaction is still open: its outcome is not known to the cleaner
    async with Broker(tmp_path) as service:
        assert await fetched(service, "g") == (ErrorCode.unstable_offset_commit, -1)
        await service.complete_transaction(offsets_partition("g"), PID, EPOCH, 0, False)
        assert await fetched(service, "g") == (ErrorCode.none, 5)
    await compact(tmp_path)
    async with Broker(tmp_path) as service:
        assert await fetched(service, "g") == (ErrorCode.none, 5)
