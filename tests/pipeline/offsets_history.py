"""Writing known `__consumer_offsets` histories to disk, through the project's own codecs.

A test describes what the coordinator did (commits, rebalances, deletions, expiries) with explicit
timestamps; this writes it as the coordinator would (one batch per write, segments named by base
offset inside `__consumer_offsets-N` directories), so the pipeline's answers can be checked exactly.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from groupcoord.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription
from groupcoord.protocol.record_batch import Record, decode_records, encode_batch, iter_batches
from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
    decode_key,
    decode_value,
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


@dataclass(frozen=True)
class OffsetEvent:
    """What the test told the coordinator to do to one offset: the oracle the pipeline is checked against."""

    at: int
    group: str
    topic: str
    partition: int
    offset: int | None  # None: deleted
    expire_at: int | None = None
    leader_epoch: int = -1
    metadata: str = ""


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
        self.events: list[OffsetEvent] = []
        self._open_transactions: dict[int, list[tuple[str, dict[tuple[str, int], int]]]] = {}
        self.records_written: dict[int, int] = {}
        self._last_value_is_tombstone: dict[int, dict[bytes, bool]] = {}

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
        self.records_written[partition] = self.records_written.get(partition, 0) + len(records)
        if not batch_options.get("is_transactional"):
            self._remember(partition, records)
        return base

    def _remember(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> None:
        latest = self._last_value_is_tombstone.setdefault(partition, {})
        for key, value in records:
            latest[key] = value is None

    def live_keys(self) -> dict[int, int]:
        """The oracle for compaction: per offsets partition, keys whose last applied record is not a tombstone."""
        return {p: sum(1 for dead in keys.values() if not dead) for p, keys in self._last_value_is_tombstone.items()}

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
        self.events.extend(OffsetEvent(at, group, t, p, o, expire_at, leader_epoch, metadata) for (t, p), o in offsets.items())

    def transactional_commit(self, group: str, offsets: dict[tuple[str, int], int], at: int, *,
                             producer_id: int) -> None:
        """A TxnOffsetCommit: it takes effect only when `end_transaction` writes a COMMIT marker."""
        records = [
            (encode_key(OffsetCommitKey(group, topic, p)), encode_value(OffsetCommitValue(offset, -1, "", at, None)))
            for (topic, p), offset in offsets.items()
        ]
        self.append(self.partition_of(group), records, at, producer_id=producer_id, producer_epoch=0,
                    is_transactional=True)
        self._open_transactions.setdefault(producer_id, []).append((group, records))

    def end_transaction(self, producer_id: int, outcome: str, at: int) -> None:
        """Write the COMMIT or ABORT marker of the producer's open transaction."""
        pending = self._open_transactions.pop(producer_id)
        control_type = {"abort": 0, "commit": 1}[outcome]
        marker = (struct.pack(">hh", 0, control_type), struct.pack(">hi", 0, 0))
        partition = self.partition_of(pending[0][0])
        self.append(partition, [marker], at, producer_id=producer_id, producer_epoch=0,
                    is_transactional=True, is_control=True)
        if outcome == "commit":
            for group, records in pending:
                self._remember(partition, records)
                for key, value in records:
                    decoded_key, decoded_value = decode_key(key), decode_value(decode_key(key), value)
                    self.events.append(OffsetEvent(at, group, decoded_key.topic, decoded_key.partition,
                                                   decoded_value.offset))

    def committed_at(self, at: int) -> dict[tuple[str, str, int], int]:
        """The oracle: (group, topic, partition) -> offset committed and neither deleted nor expired at `at`."""
        state: dict[tuple[str, str, int], OffsetEvent] = {}
        for event in sorted((e for e in self.events if e.at <= at), key=lambda e: e.at):
            key = (event.group, event.topic, event.partition)
            if event.offset is None:
                state.pop(key, None)
            else:
                state[key] = event
        return {key: e.offset for key, e in state.items() if e.expire_at is None or e.expire_at > at}

    def delete_offsets(self, group: str, partitions: list[tuple[str, int]], at: int) -> None:
        records = [(encode_key(OffsetCommitKey(group, topic, partition)), None) for topic, partition in partitions]
        self.append(self.partition_of(group), records, at)
        self.events.extend(OffsetEvent(at, group, t, p, None) for t, p in partitions)

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
        self.events.extend(OffsetEvent(at, group, t, p, None) for t, p in partitions)

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
