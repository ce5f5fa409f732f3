"""Live per-group lag, commit rate and Burrow-style status from `__consumer_offsets` over the Kafka protocol.

A Structured Streaming query reads the offsets topic from its beginning through Spark's Kafka source
(`pipeline/kafka_source.py`) and keeps reading as commits arrive. Executors decode the records; each
micro-batch hands the driver its offset commits and tombstones in log order (a key's records all live in
one offsets partition, so that order is the coordinator's), and the driver keeps, per group partition,
the committed offset and the last `--window` commits (`pipeline/burrow.py`). After every micro-batch it
asks the brokers for the log end offsets of the committed partitions (ListOffsets, the way
`kafka-consumer-groups --describe` computes lag), judges each partition and group, prints the groups and
rewrites `watch_partitions` and `watch_groups` (Parquet and CSV) under `--out`.

The state is rebuilt from the compacted topic at every start (the query always starts at the earliest
offsets), so no checkpoint has to outlive the process.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from groupcoord.pipeline.burrow import DEFAULT_WINDOW, PartitionTrack, group_status
from groupcoord.pipeline.schema import RecordKind
from groupcoord.protocol.frozen import frozen_dataclass

PARTITION_COLUMNS = ["group", "topic", "partition", "committed_offset", "leader_epoch", "metadata",
                     "log_end_offset", "lag", "commits", "last_commit_timestamp", "status"]
GROUP_COLUMNS = ["group", "partitions", "total_lag", "commits", "commit_rate_per_s", "last_commit_timestamp",
                 "status"]
_OFFSET_KINDS = [RecordKind.OFFSET_COMMIT.value, RecordKind.OFFSET_COMMIT_TOMBSTONE.value]


@frozen_dataclass(slots=False)
class WatchSettings:
    bootstrap: str
    out_dir: Path | None = None
    window: int = DEFAULT_WINDOW
    console: bool = True
    max_records_per_batch: int = 200_000


def log_end_offsets(bootstrap: str, partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """Latest offsets through the project's own admin client; a topic that is gone simply has no entry."""
    from groupcoord.coordinator.admin.client import AdminClient, AdminError
    from groupcoord.coordinator.admin.operations import LATEST_TIMESTAMP, list_offsets

    async def fetch() -> dict[tuple[str, int], int]:
        ends: dict[tuple[str, int], int] = {}
        async with AdminClient(bootstrap) as client:
            for topic in sorted({t for t, _ in partitions}):
                try:
                    found = await list_offsets(client, [tp for tp in partitions if tp[0] == topic], LATEST_TIMESTAMP)
                except AdminError:
                    continue
                ends.update({tp: end for tp, end in found.items() if end is not None})
        return ends

    return asyncio.run(fetch()) if partitions else {}


class OffsetsWatch:
    """The driver's side of the query: folds micro-batches into per-partition tracks and publishes tables."""

    def __init__(self, settings: WatchSettings) -> None:
        self.settings = settings
        self.tracks: dict[tuple[str, str, int], PartitionTrack] = {}
        self.batches = 0

    def fold(self, rows) -> None:
        for row in rows:
            key = (row["group"], row["topic"], row["partition"])
            if row["kind"] == RecordKind.OFFSET_COMMIT_TOMBSTONE.value:
                self.tracks.pop(key, None)
                continue
            track = self.tracks.get(key)
            if track is None:
                track = self.tracks[key] = PartitionTrack(window_size=self.settings.window)
            track.commit(row["timestamp"], row["committed_offset"], row["leader_epoch"], row["metadata"])

    def tables(self, log_end: dict[tuple[str, int], int], now_ms: int) -> tuple[list[dict], list[dict]]:
        partitions, by_group = [], {}
        for (group, topic, partition), track in sorted(self.tracks.items()):
            end = log_end.get((topic, partition))
            track.observe_log_end(end)
            status = track.status(now_ms)
            lag = None if end is None else max(0, end - track.offset)
            partitions.append({
                "group": group, "topic": topic, "partition": partition, "committed_offset": track.offset,
                "leader_epoch": track.leader_epoch, "metadata": track.metadata, "log_end_offset": end, "lag": lag,
                "commits": track.commits, "last_commit_timestamp": track.last_commit_ms, "status": status.value,
            })
            by_group.setdefault(group, []).append((track, lag, status))
        groups = []
        for group, members in by_group.items():
            first = min(t.first_commit_ms for t, _, _ in members)
            last = max(t.last_commit_ms for t, _, _ in members)
            commits = sum(t.commits for t, _, _ in members)
            span_s = (last - first) / 1000
            groups.append({
                "group": group, "partitions": len(members),
                "total_lag": sum(lag for _, lag, _ in members if lag is not None),
                "commits": commits, "commit_rate_per_s": round(commits / span_s, 3) if span_s > 0 else None,
                "last_commit_timestamp": last, "status": group_status(s for _, _, s in members).value,
            })
        return partitions, groups

    def on_batch(self, batch_df, batch_id: int) -> None:
        rows = (batch_df.filter(batch_df.kind.isin(_OFFSET_KINDS))
                .select("offsets_partition", "log_offset", "kind", "group", "topic", "partition",
                        "committed_offset", "leader_epoch", "metadata", "timestamp")
                .orderBy("offsets_partition", "log_offset").collect())
        self.fold(rows)
        self.batches += 1
        wanted = {(topic, partition) for _, topic, partition in self.tracks}
        partitions, groups = self.tables(log_end_offsets(self.settings.bootstrap, wanted), int(time.time() * 1000))
        self.publish(batch_id, len(rows), partitions, groups)

    def publish(self, batch_id: int, commits: int, partitions: list[dict], groups: list[dict]) -> None:
        if self.settings.out_dir is not None:
            write_tables(self.settings.out_dir, {"watch_partitions": (partitions, PARTITION_COLUMNS),
                                                 "watch_groups": (groups, GROUP_COLUMNS)})
        if self.settings.console:
            print(f"batch {batch_id}: {commits} offset records, {len(groups)} groups, "
                  f"{len(partitions)} group partitions")
            for g in groups:
                print(f"  {g['group']:<32} {g['status']:<4} lag={g['total_lag']:<8} partitions={g['partitions']:<4} "
                      f"commits={g['commits']:<6} rate={g['commit_rate_per_s']}/s")
            sys.stdout.flush()


def write_tables(out_dir: Path, tables: dict[str, tuple[list[dict], list[str]]]) -> None:
    """Parquet and CSV of the current state, replaced atomically so a reader never sees half a table."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, (rows, columns) in tables.items():
        table = pa.Table.from_pylist(rows, schema=None) if rows else pa.table({c: pa.array([], pa.null()) for c in columns})
        table = table.select(columns)
        for suffix, write in ((".parquet", pq.write_table), (".csv", pacsv.write_csv)):
            tmp = out_dir / f".{name}{suffix}.tmp"
            write(table, str(tmp))
            tmp.replace(out_dir / f"{name}{suffix}")


def run(spark, settings: WatchSettings, *, once: bool, interval_s: float = 10.0,
        duration_s: float | None = None) -> OffsetsWatch:
    """Start the query; with `once`, read everything there is now and stop (Trigger.AvailableNow)."""
    from groupcoord.pipeline.kafka_source import stream_offsets_topic

    watch = OffsetsWatch(settings)
    stream = stream_offsets_topic(spark, settings.bootstrap,
                                  {"maxOffsetsPerTrigger": str(settings.max_records_per_batch)})
    checkpoint = tempfile.mkdtemp(prefix="groupcoord-watch-")
    writer = stream.writeStream.foreachBatch(watch.on_batch).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if once else writer.trigger(processingTime=f"{interval_s} seconds")
    query = writer.start()
    try:
        query.awaitTermination(duration_s) if duration_s is not None else query.awaitTermination()
    except KeyboardInterrupt:
        pass
    finally:
        if query.isActive:
            query.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
    if watch.batches == 0 and settings.out_dir is not None:  # nothing to read yet: still leave empty tables
        watch.publish(-1, 0, [], [])
    return watch
