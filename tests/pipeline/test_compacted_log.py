"""A log compacted by the project's own cleaner still snapshots to the offsets committed last."""

import asyncio

import pytest

from groupcoord.pipeline.jobs.health import health
from groupcoord.pipeline.jobs.snapshot import snapshot
from groupcoord.pipeline.session import read_offsets
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import PartitionLog
from tests.pipeline.offsets_history import Member, OffsetsHistory
from tests.pipeline.scenario import SECOND, T0

COMPACTED = LogConfig.from_topic_configs({"cleanup.policy": "compact", "segment.bytes": "1048576"})
END = T0 + 1000 * SECOND


async def _compact(directory) -> None:
    log = await PartitionLog.open(directory, COMPACTED, FsyncPolicy.NEVER)
    try:
        await log.roll()  # the active segment is never cleaned: retire it first
        await LogCleaner().clean(log)
    finally:
        await log.close()


@pytest.fixture(scope="module")
def compacted(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("compacted") / "data"
    history = OffsetsHistory(data_dir, num_partitions=2, batches_per_segment=5)
    for generation in (1, 2):
        history.rebalance("steady", generation, [Member(f"m{generation}", ("t",))], T0 + generation * SECOND)
    for i in range(40):
        history.commit("steady", {("t", 0): 10 * i, ("t", 1): 20 * i}, T0 + (10 + i) * SECOND)
        history.commit("gone", {("u", 0): i}, T0 + (10 + i) * SECOND)
    history.delete_group("gone", [("u", 0)], T0 + 100 * SECOND)
    directories = history.write()
    for directory in directories:
        asyncio.run(_compact(directory))
    return history, data_dir


def test_compaction_keeps_the_answer_and_drops_the_history(spark, compacted):
    history, data_dir = compacted
    df = read_offsets(spark, str(data_dir)).cache()
    try:
        assert {(r["group"], r["topic"], r["partition"]): r["offset"] for r in snapshot(df, END).collect()} == \
            history.committed_at(END)
        rows = {r["offsets_partition"]: r.asDict() for r in health(df).collect()}
        assert {p: r["live_keys"] for p, r in rows.items()} == history.live_keys()
        assert sum(r["records"] for r in rows.values()) < sum(history.records_written.values()) / 10
        # fully compacted: every record left is the last one of its key, value or tombstone
        assert all(r["records"] == r["live_keys"] + r["tombstones"] for r in rows.values())
    finally:
        df.unpersist()
