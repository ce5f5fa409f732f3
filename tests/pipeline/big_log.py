"""A large `__consumer_offsets` log in Kafka's format, fast enough to write millions of records.

Each group has a handful of template batches encoded once with the project's codecs (offset commits at
different offsets, commits with an explicit expire time, offset tombstones, GroupMetadata of a few
generations with static and dynamic members, transactional commits and their COMMIT / ABORT markers).
The log is a seeded random walk over those templates: each batch is a template copied with its base
offset, timestamps and CRC restamped, so timestamps grow with the log and every answer depends on the
order of the whole walk. A few hot groups take a share of the traffic (rebalance storms), some groups
commit one offset forever (STALL), some stop early (STOP), the rest move forward and wrap (WARN now and then). Several segments per offsets partition; `compact` runs the project's own log
cleaner (storage.cleaner.LogCleaner) over some partitions afterwards, as a broker would.

What the answers should be is not computed here: `tests/pipeline/plain_replay.py` replays the bytes.
"""

from __future__ import annotations

import asyncio
import random
import struct
from dataclasses import dataclass, field
from pathlib import Path

from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    OffsetCommitValue,
    encode_key,
    encode_value,
)
from groupcoord.protocol.crc import crc32c
from groupcoord.protocol.record_batch import ATTRIBUTES_OFFSET, CRC_OFFSET, encode_batch

from tests.pipeline.offsets_history import Member

T0 = 1_700_000_000_000
PARTITIONS_PER_COMMIT = 5
COMMIT_VARIANTS = 24
GENERATIONS = 8
HOT_GROUPS = 10  # a share of the traffic goes to these few groups: they rebalance in storms
MAX_STEP_MS = 2_000  # log time between two batches of one offsets partition: 0 to this, at random
_TIMESTAMPS = struct.Struct(">qq")  # base timestamp, max timestamp (offsets 27 and 35 of a batch)


@dataclass
class _Partition:
    directory: Path
    next_offset: int = 0
    clock: int = T0
    segment_base: int = 0
    buffer: bytearray = field(default_factory=bytearray)


@dataclass
class BigLog:
    data_dir: Path
    records: int
    batches: int
    bytes_written: int
    segments: int
    end_ms: int
    compacted: tuple[int, ...]


def _restamp(template: bytes, base_offset: int, at: int) -> bytes:
    batch = bytearray(template)
    batch[0:8] = base_offset.to_bytes(8, "big", signed=True)
    _TIMESTAMPS.pack_into(batch, 27, at, at)
    batch[CRC_OFFSET:CRC_OFFSET + 4] = crc32c(memoryview(batch)[ATTRIBUTES_OFFSET:]).to_bytes(4, "big")
    return bytes(batch)


def _commit_records(group: str, topic: str, variant: int, *, expire: bool = False) -> list:
    return [(encode_key(OffsetCommitKey(group, topic, p)),
             encode_value(OffsetCommitValue(10_000 + variant * 1_000 + p * 7, variant % 3, f"host-{variant}",
                                            T0 + variant, T0 + 3_600_000 if expire else None)), ())
            for p in range(PARTITIONS_PER_COMMIT)]


def _templates(g: int) -> dict[str, list[bytes]]:
    group, topic = f"group-{g:05d}", f"topic-{g % 37:02d}"
    producer_id = 1_000 + g
    members = [Member(f"{group}-m{i}", (topic,), ((topic, (i,)),), instance_id=f"{group}-i{i}" if i % 2 else None,
                      client_id=f"client-{g}") for i in range(3)]
    txn = dict(producer_id=producer_id, producer_epoch=0, is_transactional=True)
    return {
        "commit": [encode_batch(_commit_records(group, topic, v), base_timestamp=T0) for v in range(COMMIT_VARIANTS)],
        "expiring": [encode_batch(_commit_records(group, topic, 0, expire=True), base_timestamp=T0)],
        "tombstone": [encode_batch([(encode_key(OffsetCommitKey(group, topic, p)), None, ())
                                    for p in range(0, PARTITIONS_PER_COMMIT, 2)], base_timestamp=T0)],
        "rebalance": [encode_batch([(encode_key(GroupMetadataKey(group)), encode_value(GroupMetadataValue(
            "consumer", generation, "range", members[generation % 3].member_id, T0,
            tuple(m.metadata() for m in members[: 1 + generation % 3]))), ())], base_timestamp=T0)
            for generation in range(1, GENERATIONS + 1)],
        "txn": [encode_batch(_commit_records(group, topic, COMMIT_VARIANTS + 1 + v), base_timestamp=T0, **txn)
                for v in range(2)],
        "marker": [encode_batch([(struct.pack(">hh", 0, control), struct.pack(">hi", 0, 0), ())], base_timestamp=T0,
                                is_control=True, **txn) for control in (0, 1)],  # [abort, commit]
    }


def write_big_log(data_dir: Path, records: int, *, groups: int = 2_000, offsets_partitions: int = 10,
                  segment_bytes: int = 8 * 2**20, seed: int = 17, compact: tuple[int, ...] = ()) -> BigLog:
    """About `records` records (whole batches) over `groups` groups; `compact` lists partitions to clean."""
    rng = random.Random(seed)
    templates = [_templates(g) for g in range(groups)]
    parts = {p: _Partition(Path(data_dir) / f"__consumer_offsets-{p}") for p in range(offsets_partitions)}
    generation = [0] * groups
    open_txn: dict[int, bool] = {}
    written = batches = total_bytes = segments = 0

    def flush(part: _Partition) -> None:
        nonlocal total_bytes, segments
        if part.buffer:
            part.directory.mkdir(parents=True, exist_ok=True)
            (part.directory / f"{part.segment_base:020d}.log").write_bytes(part.buffer)
            total_bytes += len(part.buffer)
            segments += 1
        part.buffer = bytearray()
        part.segment_base = part.next_offset

    def append(g: int, template: bytes, count: int) -> None:
        nonlocal written, batches
        part = parts[g % offsets_partitions]
        part.clock += rng.randrange(MAX_STEP_MS + 1)
        part.buffer += _restamp(template, part.next_offset, part.clock)
        part.next_offset += count
        written += count
        batches += 1
        if len(part.buffer) >= segment_bytes:
            flush(part)

    commits = [0] * groups
    while written < records:
        g = rng.randrange(HOT_GROUPS) if rng.random() < 0.3 else rng.randrange(groups)
        if g % 11 == 3 and written > records // 5:  # these groups stopped committing early on
            continue
        t = templates[g]
        roll = rng.random()
        if g in open_txn and roll < 0.5:  # end the group's open transaction: mostly COMMIT
            append(g, t["marker"][1 if open_txn.pop(g) else 0], 1)
        elif roll < 0.84:
            commits[g] += 1  # offsets move forward and wrap now and then; some groups are stuck on one
            append(g, t["commit"][0 if g % 7 == 5 else commits[g] % COMMIT_VARIANTS], PARTITIONS_PER_COMMIT)
        elif roll < 0.88:
            append(g, t["expiring"][0], PARTITIONS_PER_COMMIT)
        elif roll < 0.91:
            append(g, t["tombstone"][0], len(range(0, PARTITIONS_PER_COMMIT, 2)))
        elif roll < 0.96:
            generation[g] = generation[g] % GENERATIONS + 1
            append(g, t["rebalance"][generation[g] - 1], 1)
        elif g not in open_txn:
            append(g, t["txn"][rng.randrange(2)], PARTITIONS_PER_COMMIT)
            open_txn[g] = rng.random() < 0.8
        else:
            append(g, t["commit"][0], PARTITIONS_PER_COMMIT)
    # transactions still open would hold the cleaner back (Kafka would time them out): end the ones in the
    # partitions to compact; the others stay open, never applied
    for g, outcome in list(open_txn.items()):
        if g % offsets_partitions in compact:
            append(g, templates[g]["marker"][1 if outcome else 0], 1)
    for part in parts.values():
        flush(part)
    for p in compact:
        asyncio.run(_compact(parts[p].directory))
    end = max(part.clock for part in parts.values())
    return BigLog(Path(data_dir), written, batches, total_bytes, segments, end, tuple(compact))


async def _compact(directory: Path) -> None:
    from groupcoord.storage.cleaner import LogCleaner
    from groupcoord.storage.config import FsyncPolicy, LogConfig
    from groupcoord.storage.log import PartitionLog

    config = LogConfig.from_topic_configs({"cleanup.policy": "compact", "segment.bytes": str(64 * 2**20)})
    log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
    try:
        await log.roll()  # the active segment is never cleaned: retire it first
        await LogCleaner().clean(log)
    finally:
        await log.close()
