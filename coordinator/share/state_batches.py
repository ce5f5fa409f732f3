"""Combining state batches (Kafka's PersisterStateBatchCombiner): what a share partition's persisted state is
after an update — the newer batches win where they overlap the older, nothing below the start offset is
kept, and neighbours with the same state and delivery count are joined."""

from __future__ import annotations

from typing import Iterable

from groupcoord.coordinator.share.records import StateBatch


def _subtract(batches: list[StateBatch], first: int, last: int) -> list[StateBatch]:
    out: list[StateBatch] = []
    for b in batches:
        if b.last_offset < first or b.first_offset > last:
            out.append(b)
            continue
        if b.first_offset < first:
            out.append(StateBatch(b.first_offset, first - 1, b.delivery_state, b.delivery_count))
        if b.last_offset > last:
            out.append(StateBatch(last + 1, b.last_offset, b.delivery_state, b.delivery_count))
    return out


def combine(current: Iterable[StateBatch], new: Iterable[StateBatch], start_offset: int) -> tuple[StateBatch, ...]:
    merged = list(current)
    for batch in new:
        if batch.last_offset < batch.first_offset:
            continue
        merged = _subtract(merged, batch.first_offset, batch.last_offset)
        merged.append(batch)
    if start_offset >= 0:
        merged = [b if b.first_offset >= start_offset else
                  StateBatch(start_offset, b.last_offset, b.delivery_state, b.delivery_count)
                  for b in merged if b.last_offset >= start_offset]
    merged.sort(key=lambda b: b.first_offset)
    out: list[StateBatch] = []
    for b in merged:
        prev = out[-1] if out else None
        if (prev is not None and prev.last_offset + 1 == b.first_offset and prev.delivery_state == b.delivery_state
                and prev.delivery_count == b.delivery_count):
            out[-1] = StateBatch(prev.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
        else:
            out.append(b)
    return tuple(out)
