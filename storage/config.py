"""Per-topic log configuration, named after Kafka's topic configs.

Fields carry their Kafka config name in metadata so DescribeConfigs, CreateTopics and the
persisted per-partition config file all speak Kafka's names through one table.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from enum import Enum
from typing import Any

from groupcoord.protocol.frozen import frozen_dataclass


class FsyncPolicy(Enum):
    """When an append counts as durable.

    ALWAYS fsyncs each append before acknowledging; BATCH shares one fsync among the
    appends that queue up while the previous fsync runs (group commit); NEVER leaves
    durability to the page cache.
    """

    ALWAYS = "always"
    BATCH = "batch"
    NEVER = "never"


class CleanupPolicy(Enum):
    DELETE = "delete"
    COMPACT = "compact"

    # Hashed as the object it is (members are singletons and compare by identity), in C: Enum's own __hash__ is
    # a Python method (hash of the name), and every append looks ``compact`` up in a policy set.
    __hash__ = object.__hash__


# Read by every append and produced batch (``compact``, through ``max_segment_ms``), as module globals: an Enum
# class attribute is read through EnumType's lookup hook (~0.5 µs on CPython 3.11), a global is cached.
_COMPACT = CleanupPolicy.COMPACT
_DELETE = CleanupPolicy.DELETE


class TimestampType(Enum):
    CREATE_TIME = "CreateTime"
    LOG_APPEND_TIME = "LogAppendTime"


class InvalidConfigError(ValueError):
    """A topic config name is unknown or its value does not parse (Kafka: INVALID_CONFIG)."""


LONG_MAX = 0x7FFFFFFFFFFFFFFF


def _kafka(name: str, default: Any) -> Any:
    return field(default=default, metadata={"kafka": name})


@frozen_dataclass
class LogConfig:
    """A partition log's settings under Kafka's topic config names (segment size and age, retention, cleanup policy,
    compaction, timestamps, flushing)."""
    segment_bytes: int = _kafka("segment.bytes", 1024 * 1024 * 1024)
    segment_ms: int = _kafka("segment.ms", 7 * 24 * 3600 * 1000)
    segment_index_bytes: int = _kafka("segment.index.bytes", 10 * 1024 * 1024)
    index_interval_bytes: int = _kafka("index.interval.bytes", 4096)
    cleanup_policy: frozenset[CleanupPolicy] = _kafka("cleanup.policy", frozenset({CleanupPolicy.DELETE}))
    retention_ms: int = _kafka("retention.ms", 7 * 24 * 3600 * 1000)
    retention_bytes: int = _kafka("retention.bytes", -1)
    delete_retention_ms: int = _kafka("delete.retention.ms", 24 * 3600 * 1000)
    max_message_bytes: int = _kafka("max.message.bytes", 1048588)
    min_cleanable_dirty_ratio: float = _kafka("min.cleanable.dirty.ratio", 0.5)
    min_compaction_lag_ms: int = _kafka("min.compaction.lag.ms", 0)
    max_compaction_lag_ms: int = _kafka("max.compaction.lag.ms", LONG_MAX)
    file_delete_delay_ms: int = _kafka("file.delete.delay.ms", 60000)
    flush_messages: int = _kafka("flush.messages", LONG_MAX)
    flush_ms: int = _kafka("flush.ms", LONG_MAX)
    compression_type: str = _kafka("compression.type", "producer")
    message_timestamp_type: TimestampType = _kafka("message.timestamp.type", TimestampType.CREATE_TIME)
    message_timestamp_before_max_ms: int = _kafka("message.timestamp.before.max.ms", LONG_MAX)
    message_timestamp_after_max_ms: int = _kafka("message.timestamp.after.max.ms", 3600000)
    """Kafka 4's default (ServerLogConfigs.LOG_MESSAGE_TIMESTAMP_AFTER_MAX_MS_DEFAULT): a CreateTime record more than
    an hour ahead of the broker's clock is refused."""
    min_insync_replicas: int = _kafka("min.insync.replicas", 1)
    unclean_leader_election_enable: bool = _kafka("unclean.leader.election.enable", False)

    @property
    def max_segment_ms(self) -> int:
        """Kafka's LogConfig.maxSegmentMs: a compacted log also rolls its active segment within
        max.compaction.lag.ms, since the cleaner never touches the active segment and would otherwise
        leave its records uncompacted past the promised lag."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def compact(self) -> bool:
        return _COMPACT in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return _DELETE in self.cleanup_policy

    @classmethod
    def from_topic_configs(cls, configs: dict[str, str], base: LogConfig | None = None) -> LogConfig:
        """Overlay Kafka-named string configs on ``base`` (defaults if None)."""
        base = base if base is not None else cls()
        changes: dict[str, Any] = {}
        for name, raw in configs.items():
            spec = _FIELDS_BY_KAFKA_NAME.get(name)
            if spec is None:
                raise InvalidConfigError(f"unknown topic config {name!r}")
            changes[spec.name] = _parse(spec, name, raw)
        config = dataclasses.replace(base, **changes)
        config.validate()
        return config

    def to_topic_configs(self) -> dict[str, str]:
        return {f.metadata["kafka"]: _render(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def validate(self) -> None:
        if self.segment_bytes < 14:
            raise InvalidConfigError("segment.bytes must be at least 14")
        if self.index_interval_bytes < 0:
            raise InvalidConfigError("index.interval.bytes must not be negative")
        if self.segment_ms < 1:
            raise InvalidConfigError("segment.ms must be at least 1")
        if not self.cleanup_policy:
            raise InvalidConfigError("cleanup.policy must name delete and/or compact")
        if not 0.0 <= self.min_cleanable_dirty_ratio <= 1.0:
            raise InvalidConfigError("min.cleanable.dirty.ratio must be within [0, 1]")
        if self.max_compaction_lag_ms < 1:
            raise InvalidConfigError("max.compaction.lag.ms must be at least 1")
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms:
            raise InvalidConfigError(f"conflict topic config setting min.compaction.lag.ms ({self.min_compaction_lag_ms}) "
                                     f"> max.compaction.lag.ms ({self.max_compaction_lag_ms})")

    @staticmethod
    def kafka_names() -> tuple[str, ...]:
        return tuple(_FIELDS_BY_KAFKA_NAME)


_FIELDS_BY_KAFKA_NAME = {f.metadata["kafka"]: f for f in dataclasses.fields(LogConfig)}


def _parse(spec: dataclasses.Field, name: str, raw: str) -> Any:
    text = str(raw).strip()
    try:
        if spec.name == "cleanup_policy":
            return frozenset(CleanupPolicy(part.strip().lower()) for part in text.split(",") if part.strip())
        if spec.name == "message_timestamp_type":
            return TimestampType(text)
        if spec.type in ("int", int):
            return int(text)
        if spec.type in ("float", float):
            return float(text)
        if spec.type in ("bool", bool):
            if text.lower() not in ("true", "false"):
                raise ValueError(text)
            return text.lower() == "true"
        return text
    except ValueError:
        raise InvalidConfigError(f"invalid value {raw!r} for topic config {name!r}") from None


def _render(value: Any) -> str:
    if isinstance(value, frozenset):
        return ",".join(sorted(policy.value for policy in value))
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
