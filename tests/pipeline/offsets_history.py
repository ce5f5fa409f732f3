"""Writing known `__consumer_offsets` histories to disk, through the project's own codecs.

A test describes what the coordinator did (commits, rebalances, deletions, expiries) with explicit
timestamps; this writes it as the coordinator would (one batch per write, segments named by base
offset inside `__consumer_offsets-N` directories), so the pipeline's answers can be checked exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from storage.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    encode_key,
    encode_value,
)


@dataclass(frozen=True)
class Member:
    member_id: str
    topics: tuple[str, ...]
    assigned: tuple[tuple[str, tuple[int, ...]], ...] = ()
    instance_id: str | None = None
    client_id: str = "client"
    host: str = "/127.0.0.1"

    def metadata(self) -> MemberMetadata:
        return MemberMetadata(
            member_id=self.member_id,
            group_instance_id=self.instance_id,
            client_id=self.client_id,
            client_host=self.host,
            rebalance_timeout=30_000,
            session_timeout=10_000,
            subscription=encode_subscription(Subscription(topics=self.topics)),
            assignment=encode_assignment(Assignment(partitions=self.assigned)),
        )


@dataclass
class _PartitionLog:
    directory: Path
    next_offset: int = 0
    segments: list[tuple[int, bytearray]] = field(default_factory=list)


class OffsetsHistory:
    """Appends coordinator records to `__consumer_offsets-N` partitions under `data_dir`."""

    def __init__(self, data_dir: Path, *, num_partitions: int = 3, batches_per_segment: int = 8) -> None:
        self.data_dir = Path(data_dir)
        self.num_partitions = num_partitions
        self.batches_per_segment = batches_per_segment
        self._logs: dict[int, _PartitionLog] = {}
        self._batches_in_segment: dict[int, int] = {}

    def partition_of(self, group: str) -> int:
        return sum(group.encode()) % self.num_partitions

    def _log(self, partition: int) -> _PartitionLog:
        if partition not in self._logs:
            directory = self.data_dir / f"__consumer_offsets-{partition}"
            directory.mkdir(parents=True, exist_ok=True)
            self._logs[partition] = _PartitionLog(directory)
        return self._logs[partition]

    def append(self, partition: int, records: list[tuple[bytes, bytes | None]], at: int, **batch_options) -> int:
        """One batch of (key, value) records stamped `at`; returns its base offset."""
        log = self._log(partition)
        if not log.segments or self._batches_in_segment[partition] >= self.batches_per_segment:
            log.segments.append((log.next_offset, bytearray()))
            self._batches_in_segment[partition] = 0
        base = log.next_offset
        log.segments[-1][1].extend(
            encode_batch([(k, v, ()) for k, v in records], base_offset=base, base_timestamp=at, **batch_options)
        )
        self._batches_in_segment[partition] += 1
        log.next_offset += len(records)
        return base

    def commit(self, group: str, offsets: dict[tuple[str, int], int], at: int, *, expire_at: int | None = None,
               leader_epoch: int = -1, metadata: str = "") -> None:
        records = [
            (
                encode_key(OffsetCommitKey(group, topic, partition)),
                encode_value(OffsetCommitValue(offset, leader_epoch, metadata, at, expire_at)),
            )
            for (topic, partition), offset in offsets.items()
        ]
        self.append(self.partition_of(group), records, at)

    def delete_offsets(self, group: str, partitions: list[tuple[str, int]], at: int) -> None:
        records = [(encode_key(OffsetCommitKey(group, topic, partition)), None) for topic, partition in partitions]
        self.append(self.partition_of(group), records, at)

    def rebalance(self, group: str, generation: int, members: list[Member], at: int, *, leader: str | None = None,
                  protocol: str | None = "range") -> None:
        value = GroupMetadataValue(
            protocol_type="consumer",
            generation=generation,
            protocol=protocol if members else None,
            leader=(leader or members[0].member_id) if members else None,
            current_state_timestamp=at,
            members=tuple(member.metadata() for member in members),
        )
        self.append(self.partition_of(group), [(encode_key(GroupMetadataKey(group)), encode_value(value))], at)

    def delete_group(self, group: str, partitions: list[tuple[str, int]], at: int) -> None:
        """Kafka deletes a group by tombstoning its offsets and its metadata in one write."""
        records = [(encode_key(OffsetCommitKey(group, topic, partition)), None) for topic, partition in partitions]
        records.append((encode_key(GroupMetadataKey(group)), None))
        self.append(self.partition_of(group), records, at)

    def write(self) -> list[Path]:
        """Write every segment file; returns the partition directories."""
        for log in self._logs.values():
            for base, data in log.segments:
                (log.directory / f"{base:020d}.log").write_bytes(bytes(data))
        return sorted(log.directory for log in self._logs.values())


def compact_partition(directory: Path) -> None:
    """Rewrite a partition as the log cleaner would: keep the last record per key, keep offsets and empty batches."""
    segments = sorted(directory.glob("*.log"))
    decoded = []
    for segment in segments:
        buf = segment.read_bytes()
        for position, header in iter_batches(buf):
            decoded.append((segment, header, decode_records(buf, position, header)))
    last_offset_of_key = {record.key: record.offset for _, _, records in decoded for record in records}
    rewritten: dict[Path, bytearray] = {segment: bytearray() for segment in segments}
    for segment, header, records in decoded:
        survivors = [r for r in records if last_offset_of_key[r.key] == r.offset]
        rewritten[segment] += encode_batch(
            [Record(r.offset, r.timestamp, r.key, r.value, r.headers) for r in survivors],
            base_offset=header.base_offset,
            last_offset_delta=header.last_offset_delta,
            max_timestamp=header.max_timestamp,
            base_timestamp=header.base_timestamp,
        )
    for segment, data in rewritten.items():
        segment.write_bytes(bytes(data))
