"""Producer-state snapshots, so that a restart does not re-read whole partitions before the first produce.

At a clean stop each partition's producer table is written next to its log with the offset it covers
(``producer-state.json``). On first use after a restart the table is loaded from the snapshot and only
the batches from that offset on are replayed. A snapshot describes a prefix of the log, so it stays
valid while that prefix exists; one past the log end (the log was truncated) is ignored and the whole
log is replayed instead.

Version 2 adds what transactions need, under the names of Kafka's ProducerSnapshot schema:
``current_txn_first_offset`` (where the producer's open transaction began, -1 for none) and
``coordinator_epoch``, plus the time of its last marker; a producer with an open transaction or a marker is
kept even when none of its batches is. Version 1 files (written before transactions) still load.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from groupcoord.coordinator.dataplane.producer_state import PartitionProducerState, sequence_count
from groupcoord.protocol.frozen import frozen_dataclass

SNAPSHOT_FILE = "producer-state.json"
VERSION = 2
READABLE_VERSIONS = (1, 2)


@frozen_dataclass
class ProducerSnapshot:
    """A partition's producer table as of an offset (producer-state.json): replay the log from there."""
    end_offset: int                 # the state reflects every batch below this offset
    state: PartitionProducerState


def write_snapshot(directory: Path, end_offset: int, state: PartitionProducerState) -> None:
    producers = []
    for entry in state.entries():
        batches = [[b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp]
                   for b in entry.batches if 0 <= b.first_offset and b.last_offset < end_offset]
        txn_first = entry.current_txn_first_offset if 0 <= entry.current_txn_first_offset < end_offset else -1
        if batches or txn_first >= 0 or entry.coordinator_epoch >= 0:
            producers.append({"id": entry.producer_id, "epoch": entry.epoch, "batches": batches,
                              "current_txn_first_offset": txn_first,
                              "coordinator_epoch": entry.coordinator_epoch,
                              "marker_timestamp": entry.marker_timestamp})
    path = Path(directory) / SNAPSHOT_FILE
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w") as f:
        json.dump({"version": VERSION, "end_offset": end_offset, "producers": producers}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_snapshot(directory: Path) -> ProducerSnapshot | None:
    try:
        data = json.loads((Path(directory) / SNAPSHOT_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None
    if data.get("version") not in READABLE_VERSIONS:
        return None
    state = PartitionProducerState()
    for producer in data["producers"]:
        for first_seq, last_seq, first_offset, last_offset, timestamp in producer["batches"]:
            state.record(producer["id"], producer["epoch"], first_seq, sequence_count(first_seq, last_seq),
                         first_offset, last_offset, timestamp)
        if "current_txn_first_offset" in producer:
            state.restore(producer["id"], producer["epoch"], int(producer["current_txn_first_offset"]),
                          int(producer["coordinator_epoch"]), int(producer["marker_timestamp"]))
    return ProducerSnapshot(int(data["end_offset"]), state)
