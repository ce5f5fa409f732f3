"""Plan an offsets reset the way kafka-consumer-groups --reset-offsets does, without touching the network.

Every strategy produces a target offset per partition, then the target is clamped into the log's
[earliest, latest] range (Kafka's checkOffsetRange) — except --to-datetime past the end, which Kafka resolves
to the log end directly. Shifting needs a committed offset to shift from, so it refuses partitions without one.
"""

from __future__ import annotations

import datetime
from dataclasses import field
from enum import Enum
from typing import Iterable, Mapping

from groupcoord.protocol.frozen import frozen_dataclass

from .client import AdminError
from .model import PartitionOffsets, TopicPartition


class ResetStrategy(Enum):
    TO_EARLIEST = "to-earliest"
    TO_LATEST = "to-latest"
    TO_DATETIME = "to-datetime"
    TO_OFFSET = "to-offset"
    SHIFT_BY = "shift-by"
    FROM_FILE = "from-file"


@frozen_dataclass(slots=False)
class ResetSpec:
    strategy: ResetStrategy
    value: int | None = None  # the offset, the shift, or the timestamp in ms
    file_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)


@frozen_dataclass(slots=False)
class PlannedReset:
    topic: str
    partition: int
    current_offset: int | None
    new_offset: int


def parse_datetime_ms(text: str) -> int:
    """ISO-8601 to epoch ms; like Kafka's tool, a time without a zone is local time."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise AdminError(f"bad --to-datetime {text!r}: expected ISO-8601 such as 2024-01-31T12:00:00.000Z") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return int(moment.timestamp() * 1000)


def parse_topic_arg(text: str) -> tuple[str, tuple[int, ...]]:
    """`topic` or `topic:0,1,2` as the Kafka tool accepts it; an empty tuple means every partition."""
    topic, sep, partitions = text.partition(":")
    if not topic:
        raise AdminError(f"bad --topic {text!r}")
    if not sep:
        return topic, ()
    try:
        return topic, tuple(int(p) for p in partitions.split(",") if p.strip())
    except ValueError:
        raise AdminError(f"bad partition list in --topic {text!r}") from None


def select_partitions(
    topic_args: Iterable[str],
    all_topics: bool,
    topic_partitions: Mapping[str, Iterable[int]],
    committed: Iterable[TopicPartition],
) -> list[TopicPartition]:
    """Partitions a reset applies to: the named ones, or with --all-topics every partition the group committed."""
    if all_topics:
        return sorted(set(committed))
    selected: set[TopicPartition] = set()
    for arg in topic_args:
        topic, partitions = parse_topic_arg(arg)
        known = set(topic_partitions.get(topic, ()))
        if not known:
            raise AdminError(f"topic {topic!r} does not exist")
        for partition in partitions or sorted(known):
            if partition not in known:
                raise AdminError(f"partition {topic}-{partition} does not exist")
            selected.add((topic, partition))
    return sorted(selected)


def plan_reset(spec: ResetSpec, offsets: Mapping[TopicPartition, PartitionOffsets]) -> list[PlannedReset]:
    """The new offset of every partition in `offsets` (for --from-file: of every partition in the file)."""
    plan = []
    targets = sorted(spec.file_offsets) if spec.strategy is ResetStrategy.FROM_FILE else sorted(offsets)
    for tp in targets:
        state = offsets.get(tp)
        if state is None:
            raise AdminError(f"partition {tp[0]}-{tp[1]} does not exist")
        plan.append(PlannedReset(tp[0], tp[1], state.current, _target(spec, tp, state)))
    return plan


def _target(spec: ResetSpec, tp: TopicPartition, state: PartitionOffsets) -> int:
    match spec.strategy:
        case ResetStrategy.TO_EARLIEST:
            return state.earliest
        case ResetStrategy.TO_LATEST:
            return state.latest
        case ResetStrategy.TO_DATETIME:
            return state.latest if state.at_timestamp is None else state.at_timestamp
        case ResetStrategy.TO_OFFSET:
            return _clamp(_required(spec.value), state)
        case ResetStrategy.SHIFT_BY:
            if state.current is None:
                raise AdminError(
                    f"cannot shift offset for partition {tp[0]}-{tp[1]} since there is no current committed offset"
                )
            return _clamp(state.current + _required(spec.value), state)
        case ResetStrategy.FROM_FILE:
            return _clamp(spec.file_offsets[tp], state)
    raise AdminError(f"unknown reset strategy {spec.strategy}")


def _required(value: int | None) -> int:
    if value is None:
        raise AdminError("the reset strategy needs a value")
    return value


def _clamp(offset: int, state: PartitionOffsets) -> int:
    return max(state.earliest, min(offset, state.latest))
