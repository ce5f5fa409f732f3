"""The pipeline's answers computed without Spark and without the pipeline: a plain-Python replay of the log.

Segments are walked with `protocol.record_batch` and the records decoded with the coordinator's codecs,
one partition at a time in log order, the way the coordinator loads `__consumer_offsets`: plain commits
and tombstones apply where they are written, transactional ones at their producer's next COMMIT marker
(never if it is an ABORT or if none follows). The rules of each job are then applied with dicts and sorts,
following the jobs' documented rules (pipeline/jobs/*.py), not their code. `compare_rows` matches a job's
rows against these, floats to 1e-9.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    OffsetCommitKey,
    decode_key,
    decode_value,
)
from groupcoord.protocol.record_batch import decode_records, iter_batches

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class Applied:
    """One offset record as applied: `value` None for a tombstone."""

    offsets_partition: int
    key: tuple[str, str, int]
    applied_offset: int
    applied_timestamp: int
    log_offset: int
    value: object | None


@dataclass(frozen=True)
class GroupRecord:
    offsets_partition: int
    group: str
    log_offset: int
    timestamp: int
    value: GroupMetadataValue


class PlainReplay:
    def __init__(self, data_dir: Path) -> None:
        self.applied: list[Applied] = []
        self.group_records: list[GroupRecord] = []
        self.records = 0
        for directory in sorted(Path(data_dir).glob("__consumer_offsets-*")):
            self._partition(int(directory.name.rpartition("-")[2]), sorted(directory.glob("*.log")))

    def _partition(self, partition: int, segments: list[Path]) -> None:
        pending: dict[int, list[tuple[int, int, OffsetCommitKey, object]]] = defaultdict(list)
        for segment in segments:
            buf = segment.read_bytes()
            for position, header in iter_batches(buf):
                records = decode_records(buf, position, header)
                self.records += len(records)
                for record in records:
                    timestamp = header.max_timestamp if header.timestamp_type == 1 else record.timestamp
                    if header.is_control:
                        control = int.from_bytes(record.key[2:4], "big", signed=True)
                        for offset, _, key, value in pending.pop(header.producer_id, []):
                            if control == 1:
                                self.applied.append(Applied(partition, key, record.offset, timestamp, offset, value))
                        continue
                    key = decode_key(record.key)
                    value = decode_value(key, record.value)
                    if isinstance(key, OffsetCommitKey):
                        entry = (key.group, key.topic, key.partition)
                        if header.is_transactional:
                            pending[header.producer_id].append((record.offset, timestamp, entry, value))
                        else:
                            self.applied.append(Applied(partition, entry, record.offset, timestamp, record.offset,
                                                        value))
                    elif isinstance(key, GroupMetadataKey) and value is not None:
                        self.group_records.append(GroupRecord(partition, key.group, record.offset, timestamp, value))

    # ---- snapshot -------------------------------------------------------------------------------

    def snapshot(self, at: int) -> list[dict]:
        last: dict[tuple, Applied] = {}
        for a in self.applied:  # newest per key: log order within a partition, then time across partitions
            if a.applied_timestamp > at:
                continue
            per_partition = (a.key, a.offsets_partition)
            best = last.get(per_partition)
            if best is None or (a.applied_offset, a.log_offset) > (best.applied_offset, best.log_offset):
                last[per_partition] = a
        newest: dict[tuple, Applied] = {}
        for (key, _), a in last.items():
            best = newest.get(key)
            if best is None or (a.applied_timestamp, a.offsets_partition) > (best.applied_timestamp,
                                                                             best.offsets_partition):
                newest[key] = a
        rows = []
        for key, a in newest.items():
            v = a.value
            if v is None or (v.expire_timestamp is not None and v.expire_timestamp <= at):
                continue
            rows.append({"group": key[0], "topic": key[1], "partition": key[2], "offset": v.offset,
                         "leader_epoch": v.leader_epoch, "metadata": v.metadata or "",
                         "commit_timestamp": v.commit_timestamp})
        return sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"]))

    # ---- history --------------------------------------------------------------------------------

    def history(self, at: int, window: int = 10, min_idle_ms: int = 5 * 60 * 1000) -> list[dict]:
        per_key: dict[tuple, list[Applied]] = defaultdict(list)
        for a in self.applied:
            if a.applied_timestamp <= at:
                per_key[a.key].append(a)
        rows = []
        for key, records in per_key.items():
            records.sort(key=lambda a: (a.applied_timestamp, a.applied_offset))
            commits = [a for a in records if a.value is not None]
            if not commits:
                continue
            offsets = [a.value.offset for a in commits]
            rewind = [0] + [int(offsets[i] < offsets[i - 1]) for i in range(1, len(offsets))]
            first, last = commits[0].applied_timestamp, commits[-1].applied_timestamp
            n = len(commits)
            in_window = list(range(max(0, n - window), n))  # recency = n - i
            window_start = commits[in_window[0]].applied_timestamp
            window_offsets = [offsets[i] for i in in_window]
            window_rewinds = sum(rewind[i] for i in in_window if n - i < window)
            deleted = records[-1].value is None
            span, age, window_span = last - first, at - last, last - window_start
            if deleted or (age > window_span and age > min_idle_ms):
                status = "STOP"
            elif len(in_window) >= 2 and min(window_offsets) == max(window_offsets) and window_rewinds == 0:
                status = "STALL"
            elif window_rewinds > 0:
                status = "WARN"
            else:
                status = "OK"
            rows.append({
                "group": key[0], "topic": key[1], "partition": key[2], "commits": n, "first_commit": first,
                "last_commit": last, "last_offset": offsets[-1],
                "mean_interval_ms": span / (n - 1) if n > 1 else None,
                "progress_per_sec": (offsets[-1] - offsets[0]) * 1000.0 / span if span > 0 else None,
                "rewinds": sum(rewind), "last_commit_age_ms": age, "deleted": deleted,
                "window_commits": len(in_window), "window_span_ms": window_span, "window_rewinds": window_rewinds,
                "status": status,
            })
        return sorted(rows, key=lambda r: (r["group"], r["topic"], r["partition"]))

    # ---- rebalances -----------------------------------------------------------------------------

    def generations(self) -> list[dict]:
        per_generation: dict[tuple[str, int], list[GroupRecord]] = defaultdict(list)
        for r in self.group_records:
            per_generation[(r.group, r.value.generation)].append(r)
        rows = []
        for (group, generation), records in per_generation.items():
            last = max(records, key=lambda r: (r.timestamp, r.offsets_partition, r.log_offset)).value
            members = len(last.members)
            static = sum(1 for m in last.members if m.group_instance_id is not None)
            rows.append({
                "group": group, "generation": generation, "first_seen": min(r.timestamp for r in records),
                "last_seen": max(r.timestamp for r in records), "records": len(records), "member_count": members,
                "static_members": static, "static_share": static / members if members > 0 else None,
                "leader": last.leader, "protocol_type": last.protocol_type, "protocol_name": last.protocol,
            })
        rows.sort(key=lambda r: (r["group"], r["generation"]))
        previous: dict[str, str | None] = {}
        for row in rows:
            before = previous.get(row["group"])
            row["leader_changed"] = before is not None and row["leader"] is not None and row["leader"] != before
            previous[row["group"]] = row["leader"]
        return rows

    def rebalances(self, storm_window_ms: int = 10 * 60 * 1000, storm_threshold: int = 5) -> list[dict]:
        per_group: dict[str, list[dict]] = defaultdict(list)
        for row in self.generations():
            per_group[row["group"]].append(row)
        rows = []
        for group, gens in sorted(per_group.items()):
            starts = [g["first_seen"] for g in gens]
            in_window = max(sum(1 for other in starts if start - (storm_window_ms - 1) <= other <= start)
                            for start in starts)
            shares = [g["static_share"] for g in gens if g["static_share"] is not None]
            generations = [g["generation"] for g in gens]
            rows.append({
                "group": group, "rebalances": len(gens),
                "missing_generations": max(generations) - min(generations) + 1 - len(gens),
                "first_generation": min(generations), "last_generation": max(generations),
                "first_rebalance": min(starts), "last_rebalance": max(starts),
                "rebalances_per_hour": len(gens) / max((max(starts) - min(starts)) / HOUR_MS, 1.0),
                "max_in_storm_window": in_window, "mean_members": sum(g["member_count"] for g in gens) / len(gens),
                "mean_static_share": sum(shares) / len(shares) if shares else None,
                "leader_changes": sum(int(g["leader_changed"]) for g in gens), "storm": in_window >= storm_threshold,
            })
        return rows


def compare_rows(name: str, actual: list[dict], expected: list[dict], key: tuple[str, ...]) -> list[str]:
    """Differences between a job's rows and the replay's, on the replay's columns; [] when they agree."""
    problems = []
    got = {tuple(r[k] for k in key): r for r in actual}
    want = {tuple(r[k] for k in key): r for r in expected}
    if got.keys() != want.keys():
        missing, extra = sorted(want.keys() - got.keys())[:5], sorted(got.keys() - want.keys())[:5]
        problems.append(f"{name}: {len(want)} rows expected, {len(got)} read; missing {missing}, unexpected {extra}")
    for k in sorted(want.keys() & got.keys()):
        for column, expected_value in want[k].items():
            value = got[k].get(column)
            if not _same(value, expected_value):
                problems.append(f"{name} {k} {column}: {value!r} != expected {expected_value!r}")
                if len(problems) > 20:
                    return problems
    return problems


def _same(value, expected) -> bool:
    if value in (None, "") and expected in (None, ""):
        return True  # a CSV cell cannot tell an empty string from a null
    if isinstance(expected, float) or isinstance(value, float):
        return value is not None and expected is not None and math.isclose(float(value), float(expected),
                                                                             rel_tol=1e-9, abs_tol=1e-9)
    return value == expected


def typed_csv_rows(path: Path, like: list[dict]) -> list[dict]:
    """A job's CSV with each column read back as the replay's type (the CSV holds Python's str of values)."""
    import csv

    types: dict[str, type] = {}
    for row in like:
        for column, value in row.items():
            if value is not None:
                types.setdefault(column, type(value))
    def convert(column: str, text: str):
        if text == "":
            return "" if types.get(column) is str else None
        kind = types.get(column, str)
        if kind is bool:
            return text == "True"
        return kind(float(text)) if kind is int and "." in text else kind(text)
    with path.open(newline="") as handle:
        return [{c: convert(c, v) for c, v in row.items()} for row in csv.DictReader(handle)]
