"""The topic-level configs a topic may carry, their types, defaults and broker-level synonyms.

One table serves CreateTopics validation, the effective config of a topic (override, else the broker's
setting, else Kafka's default) and DescribeConfigs, so the three can never disagree.
"""
from __future__ import annotations

import enum
from typing import Any, Mapping

from groupcoord.protocol.frozen import frozen_dataclass
from groupcoord.storage.config import InvalidConfigError, LogConfig

LONG_MAX = 2**63 - 1


class ConfigType(enum.IntEnum):
    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(enum.IntEnum):
    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


@frozen_dataclass
class TopicConfigDef:
    """One topic config Kafka defines: its type, default, and the broker setting that supplies the default."""
    name: str
    type: ConfigType
    default: str
    broker_synonym: str | None = None      # the broker setting that supplies the default
    broker_attr: str | None = None         # its attribute on the broker config object
    allowed: frozenset[str] | None = None  # for enumerated strings/lists
    minimum: float | None = None


def _d(name, type_, default, synonym=None, attr=None, allowed=None, minimum=None) -> TopicConfigDef:
    return TopicConfigDef(name, type_, str(default), synonym, attr,
                          frozenset(allowed) if allowed else None, minimum)


TOPIC_CONFIGS: dict[str, TopicConfigDef] = {d.name: d for d in (
    _d("cleanup.policy", ConfigType.LIST, "delete", "log.cleanup.policy", allowed={"delete", "compact"}),
    _d("compression.type", ConfigType.STRING, "producer", "compression.type",
       allowed={"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}),
    _d("delete.retention.ms", ConfigType.LONG, 86400000, "log.cleaner.delete.retention.ms",
       "log_cleaner_delete_retention_ms", minimum=0),
    _d("file.delete.delay.ms", ConfigType.LONG, 60000, "log.segment.delete.delay.ms", minimum=0),
    _d("flush.messages", ConfigType.LONG, LONG_MAX, "log.flush.interval.messages", minimum=1),
    _d("flush.ms", ConfigType.LONG, LONG_MAX, "log.flush.interval.ms", minimum=0),
    _d("index.interval.bytes", ConfigType.INT, 4096, "log.index.interval.bytes", "log_index_interval_bytes",
       minimum=0),
    _d("max.compaction.lag.ms", ConfigType.LONG, LONG_MAX, "log.cleaner.max.compaction.lag.ms", minimum=1),
    _d("max.message.bytes", ConfigType.INT, 1048588, "message.max.bytes", "message_max_bytes", minimum=0),
    _d("message.timestamp.after.max.ms", ConfigType.LONG, 3600000, "log.message.timestamp.after.max.ms",
       minimum=0),
    _d("message.timestamp.before.max.ms", ConfigType.LONG, LONG_MAX, "log.message.timestamp.before.max.ms",
       minimum=0),
    _d("message.timestamp.type", ConfigType.STRING, "CreateTime", "log.message.timestamp.type",
       allowed={"CreateTime", "LogAppendTime"}),
    _d("min.cleanable.dirty.ratio", ConfigType.DOUBLE, 0.5, "log.cleaner.min.cleanable.ratio",
       "log_cleaner_min_cleanable_ratio", minimum=0),
    _d("min.compaction.lag.ms", ConfigType.LONG, 0, "log.cleaner.min.compaction.lag.ms", minimum=0),
    _d("min.insync.replicas", ConfigType.INT, 1, "min.insync.replicas", minimum=1),
    _d("preallocate", ConfigType.BOOLEAN, "false", "log.preallocate"),
    _d("retention.bytes", ConfigType.LONG, -1, "log.retention.bytes", "log_retention_bytes"),
    _d("retention.ms", ConfigType.LONG, 604800000, "log.retention.ms", "log_retention_ms", minimum=-1),
    _d("segment.bytes", ConfigType.INT, 1073741824, "log.segment.bytes", "log_segment_bytes", minimum=14),
    _d("segment.index.bytes", ConfigType.INT, 10485760, "log.index.size.max.bytes", minimum=4),
    _d("segment.jitter.ms", ConfigType.LONG, 0, "log.roll.jitter.ms", minimum=0),
    _d("segment.ms", ConfigType.LONG, 604800000, "log.roll.ms", "log_roll_ms", minimum=1),
    _d("unclean.leader.election.enable", ConfigType.BOOLEAN, "false", "unclean.leader.election.enable"),
)}


def _parse(defn: TopicConfigDef, value: str) -> Any:
    t = defn.type
    try:
        if t == ConfigType.BOOLEAN:
            v = value.strip().lower()
            if v not in ("true", "false"):
                raise ValueError(value)
            return v == "true"
        if t in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
            n = int(value.strip())
            limit = 2**31 if t == ConfigType.INT else 2**63
            if not -limit <= n < limit:
                raise ValueError(value)
            return n
        if t == ConfigType.DOUBLE:
            return float(value.strip())
        if t == ConfigType.LIST:
            return [item.strip() for item in value.split(",") if item.strip()]
        return value.strip()
    except ValueError:
        raise InvalidConfigError(
            f"Invalid value {value} for configuration {defn.name}: Not a number of type "
            f"{t.name}" if t != ConfigType.BOOLEAN else
            f"Invalid value {value} for configuration {defn.name}: Expected value to be either true or false"
        ) from None


def parse_value(name: str, value: str | None) -> Any:
    """Parse and range-check one topic config, raising InvalidConfigError as Kafka's ConfigDef would."""
    defn = TOPIC_CONFIGS.get(name)
    if defn is None:
        raise InvalidConfigError(f"Unknown topic config name: {name}")
    if value is None:
        raise InvalidConfigError(f"Null value not supported for topic configs: {name}")
    parsed = _parse(defn, value)
    if defn.allowed is not None:
        items = parsed if isinstance(parsed, list) else [parsed]
        bad = [i for i in items if i not in defn.allowed]
        if bad or (isinstance(parsed, list) and not items):
            raise InvalidConfigError(
                f"Invalid value {value} for configuration {name}: String must be one of: "
                + ", ".join(sorted(defn.allowed)))
    if defn.minimum is not None and isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        if parsed < defn.minimum:
            raise InvalidConfigError(
                f"Invalid value {value} for configuration {name}: Value must be at least {defn.minimum:g}")
    return parsed


def validate(configs: dict[str, str | None]) -> dict[str, str]:
    """Check every override; returns them normalised (stripped) for storage."""
    out: dict[str, str] = {}
    for name, value in configs.items():
        parse_value(name, value)
        out[name] = str(value).strip()
    return out


@frozen_dataclass
class EffectiveConfig:
    """A topic config as DescribeConfigs reports it: value, source, type and synonyms."""
    name: str
    value: str
    source: ConfigSource
    type: ConfigType
    synonyms: tuple[tuple[str, str, ConfigSource], ...]


def broker_value(defn: TopicConfigDef, broker_config: Any) -> str | None:
    """The broker's own setting for this topic config, when the broker config object carries it."""
    if defn.broker_attr is None or broker_config is None:
        return None
    value = getattr(broker_config, defn.broker_attr, None)
    return None if value is None else str(value)


def effective(name: str, overrides: dict[str, str], broker_config: Any,
              dynamic: Mapping[str, tuple[str, ConfigSource]] | None = None) -> EffectiveConfig:
    """Kafka's order: the topic's override, the broker's dynamic setting (this broker's, then the
    cluster-wide default), its static setting, Kafka's default. ``dynamic`` maps broker config names (the
    topic config's synonyms, e.g. ``log.retention.ms``) to their dynamic value and source."""
    defn = TOPIC_CONFIGS[name]
    synonyms: list[tuple[str, str, ConfigSource]] = []
    if name in overrides:
        synonyms.append((name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
    if dynamic and defn.broker_synonym:
        for source in (ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG):
            entry = dynamic.get((defn.broker_synonym, source))  # type: ignore[call-overload]
            if entry is not None:
                synonyms.append((defn.broker_synonym, entry, source))
    from_broker = broker_value(defn, broker_config)
    if from_broker is not None and from_broker != defn.default and defn.broker_synonym:
        synonyms.append((defn.broker_synonym, from_broker, ConfigSource.STATIC_BROKER_CONFIG))
    # Kafka lists the default only where the broker setting itself has one: log.retention.ms has none (its
    # default lives in log.retention.hours), so retention.ms shows no DEFAULT_CONFIG synonym.
    if defn.broker_synonym and defn.broker_synonym not in BROKER_SYNONYMS_WITHOUT_DEFAULT:
        synonyms.append((defn.broker_synonym, defn.default, ConfigSource.DEFAULT_CONFIG))
    elif defn.broker_synonym in SIBLING_DEFAULTS and any(n == defn.broker_synonym for n, _, _ in synonyms):
        synonyms.append((*SIBLING_DEFAULTS[defn.broker_synonym], ConfigSource.DEFAULT_CONFIG))
    if synonyms:
        _, value, source = synonyms[0]
    else:
        value, source = defn.default, ConfigSource.DEFAULT_CONFIG
    return EffectiveConfig(name, value, source, defn.type, tuple(synonyms))


# Broker settings whose Kafka default is null, the value coming from a coarser sibling (…hours).
BROKER_SYNONYMS_WITHOUT_DEFAULT = frozenset({"log.retention.ms", "log.roll.ms", "log.roll.jitter.ms",
                                             "log.flush.interval.ms"})
# Their coarser siblings' defaults, which Kafka lists after a set value of the setting itself.
SIBLING_DEFAULTS: dict[str, tuple[str, str]] = {"log.retention.ms": ("log.retention.hours", "168"),
                                                "log.roll.ms": ("log.roll.hours", "168"),
                                                "log.roll.jitter.ms": ("log.roll.jitter.hours", "0")}


def effective_all(overrides: dict[str, str], broker_config: Any, dynamic: Mapping | None = None) -> list[EffectiveConfig]:
    return [effective(name, overrides, broker_config, dynamic) for name in sorted(TOPIC_CONFIGS)]


def log_config_for(overrides: dict[str, str], broker_config: Any, dynamic: Mapping | None = None) -> LogConfig:
    """The storage engine's LogConfig for a topic: every setting it knows, at its effective value."""
    known = set(LogConfig.kafka_names())
    values = {name: effective(name, overrides, broker_config, dynamic).value
              for name in TOPIC_CONFIGS if name in known}
    values.update({name: value for name, value in overrides.items() if name in known})
    return LogConfig.from_topic_configs(values)
