"""The committed-offsets CSV: what `offsets export` writes, `offsets reset --from-file` reads, and the
pipeline's snapshot writer produces (same header, so one file moves between the tools).
"""

from __future__ import annotations

import csv
import io
from typing import Iterable

from .client import AdminError
from .model import CommittedOffset, TopicPartition

CSV_HEADER = ("group", "topic", "partition", "offset", "leader_epoch", "metadata", "commit_timestamp")


def write_offsets_csv(group: str, offsets: Iterable[CommittedOffset], out: io.TextIOBase) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for o in sorted(offsets, key=lambda o: (o.topic, o.partition)):
        writer.writerow(
            [group, o.topic, o.partition, o.offset, o.leader_epoch, o.metadata,
             "" if o.commit_timestamp is None else o.commit_timestamp]
        )


def read_offsets_csv(text: str, group: str) -> dict[TopicPartition, int]:
    """Offsets for `group` from our CSV, or from Kafka's headerless `topic,partition,offset` /
    `group,topic,partition,offset` reset plans."""
    rows = [row for row in csv.reader(io.StringIO(text)) if row and any(cell.strip() for cell in row)]
    if not rows:
        raise AdminError("the offsets file is empty")
    result: dict[TopicPartition, int] = {}
    if rows[0][0].strip() == "group":
        header = [cell.strip() for cell in rows[0]]
        missing = {"group", "topic", "partition", "offset"} - set(header)
        if missing:
            raise AdminError(f"the offsets file lacks columns {sorted(missing)}")
        records = [dict(zip(header, row)) for row in rows[1:]]
    else:
        records = [_headerless(row) for row in rows]
    for line, record in enumerate(records, start=1):
        if record.get("group", group) != group:
            continue
        try:
            result[(record["topic"], int(record["partition"]))] = int(record["offset"])
        except (KeyError, ValueError):
            raise AdminError(f"bad row {line} in the offsets file: {record}") from None
    if not result:
        raise AdminError(f"the offsets file has no offsets for group {group!r}")
    return result


def _headerless(row: list[str]) -> dict[str, str]:
    if len(row) == 3:
        return dict(zip(("topic", "partition", "offset"), row))
    if len(row) == 4:
        return dict(zip(("group", "topic", "partition", "offset"), row))
    raise AdminError(f"bad row in the offsets file: {row}")
