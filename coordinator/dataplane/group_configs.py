"""Per-group configs (Kafka 4.3.1's GroupConfig): the one table of their names, types, defaults and bounds,
their validation as Kafka's controller validates them, and the effective values the group core reads.

Kafka validates a change against the whole picture (GroupConfig.validate): the broker's group settings,
overlaid with the group's current overrides, overlaid with the change; first the names, then each value's
type and lower limit (ConfigDef, in definition order), then the broker's min/max bounds (a fixed order),
then that each session timeout exceeds its heartbeat interval. The effective value of a config for one group
(GroupConfig.evaluate) is its override clamped into the broker's current bounds, else the broker's setting.

The share-group (``share.*``) and streams-group (``streams.*``) entries are served by DescribeConfigs and
validated here; the group core reads the consumer ones today (session timeout, heartbeat interval,
assignment interval). Further per-group configs are added to ``GROUP_CONFIGS`` and nowhere else.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from groupcoord.coordinator.dataplane.topic_configs import ConfigType
from groupcoord.protocol.frozen import frozen_dataclass

INT_MIN, INT_MAX = -2**31, 2**31 - 1


@frozen_dataclass
class Bound:
    """A broker setting that bounds a group config, with Kafka's default for it."""

    setting: str
    default: int

    def value(self, broker_config: Any) -> int:
        return int(getattr(broker_config, self.setting.replace(".", "_"), self.default))


@frozen_dataclass
class GroupConfigDef:
    """One group config Kafka defines (GroupConfig): type, default, lower bound and broker synonym."""
    name: str
    type: ConfigType
    default: Any                        # Kafka's default (the broker synonym's default where there is one)
    minimum: int | None = None          # ConfigDef's atLeast
    synonym: str | None = None          # the broker setting that supplies the default (GroupConfig's synonyms)
    low: Bound | None = None            # the broker's minimum for it
    high: Bound | None = None           # the broker's maximum for it
    choices: tuple[str, ...] | None = None
    validator: Callable[[str, str], str | None] | None = None  # (name, value) -> Kafka's message, or None
    bounded_only_if_set: bool = False   # the assignment intervals: bounds checked only when the group sets one

    @property
    def broker_synonym(self) -> str | None:
        return self.synonym

    def broker_default(self, broker_config: Any) -> Any:
        """The value a group without its own override gets: the broker's setting, else Kafka's default."""
        if self.synonym is None:
            return self.default
        return getattr(broker_config, self.synonym.replace(".", "_"), self.default)


def _share_auto_offset_reset(name: str, value: str) -> str | None:
    """ShareGroupAutoOffsetResetStrategy.Validator: earliest, latest or by_duration:<ISO-8601 duration>."""
    text = value.strip().lower()
    if text in ("earliest", "latest"):
        return None
    if text.startswith("by_duration:"):
        duration = value.strip()[len("by_duration:"):]
        if duration.startswith("-"):
            return f"Invalid value `{duration}` for configuration {name}. The provided duration cannot be negative."
        if re.fullmatch(r"P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?", duration.upper()) and \
                duration.upper() not in ("P", "PT"):
            return None
        return f"Invalid value `{duration}` for configuration {name}. It must be in ISO8601 format."
    return f"Invalid value `{value}` for configuration {name}. The value must be either 'earliest', 'latest' or " \
           "of the format 'by_duration:<PnDTnHnMn.nS.>'."


_I, _S, _B = ConfigType.INT, ConfigType.STRING, ConfigType.BOOLEAN

# In the order of GroupConfig.CONFIG_DEF (ConfigDef parses, and so refuses, in this order).
GROUP_CONFIGS: dict[str, GroupConfigDef] = {d.name: d for d in (
    GroupConfigDef("consumer.session.timeout.ms", _I, 45000, 1, "group.consumer.session.timeout.ms",
                   Bound("group.consumer.min.session.timeout.ms", 45000),
                   Bound("group.consumer.max.session.timeout.ms", 60000)),
    GroupConfigDef("consumer.heartbeat.interval.ms", _I, 5000, 1, "group.consumer.heartbeat.interval.ms",
                   Bound("group.consumer.min.heartbeat.interval.ms", 5000),
                   Bound("group.consumer.max.heartbeat.interval.ms", 15000)),
    GroupConfigDef("consumer.assignment.interval.ms", _I, 1000, 0, "group.consumer.assignment.interval.ms",
                   Bound("group.consumer.min.assignment.interval.ms", 0),
                   Bound("group.consumer.max.assignment.interval.ms", 15000), bounded_only_if_set=True),
    GroupConfigDef("share.session.timeout.ms", _I, 45000, 1, "group.share.session.timeout.ms",
                   Bound("group.share.min.session.timeout.ms", 45000),
                   Bound("group.share.max.session.timeout.ms", 60000)),
    GroupConfigDef("share.heartbeat.interval.ms", _I, 5000, 1, "group.share.heartbeat.interval.ms",
                   Bound("group.share.min.heartbeat.interval.ms", 5000),
                   Bound("group.share.max.heartbeat.interval.ms", 15000)),
    GroupConfigDef("share.record.lock.duration.ms", _I, 30000, 1000, "group.share.record.lock.duration.ms",
                   Bound("group.share.min.record.lock.duration.ms", 15000),
                   Bound("group.share.max.record.lock.duration.ms", 60000)),
    GroupConfigDef("share.delivery.count.limit", _I, 5, 2, "group.share.delivery.count.limit",
                   Bound("group.share.min.delivery.count.limit", 2),
                   Bound("group.share.max.delivery.count.limit", 10)),
    GroupConfigDef("share.partition.max.record.locks", _I, 2000, 100, "group.share.partition.max.record.locks",
                   Bound("group.share.min.partition.max.record.locks", 100),
                   Bound("group.share.max.partition.max.record.locks", 4000)),
    GroupConfigDef("share.auto.offset.reset", _S, "latest", validator=_share_auto_offset_reset),
    GroupConfigDef("share.isolation.level", _S, "read_uncommitted", choices=("read_committed", "read_uncommitted")),
    GroupConfigDef("share.renew.acknowledge.enable", _B, True),
    GroupConfigDef("share.assignment.interval.ms", _I, 1000, 0, "group.share.assignment.interval.ms",
                   Bound("group.share.min.assignment.interval.ms", 0),
                   Bound("group.share.max.assignment.interval.ms", 15000), bounded_only_if_set=True),
    GroupConfigDef("streams.session.timeout.ms", _I, 45000, 1, "group.streams.session.timeout.ms",
                   Bound("group.streams.min.session.timeout.ms", 45000),
                   Bound("group.streams.max.session.timeout.ms", 60000)),
    GroupConfigDef("streams.heartbeat.interval.ms", _I, 5000, 1, "group.streams.heartbeat.interval.ms",
                   Bound("group.streams.min.heartbeat.interval.ms", 5000),
                   Bound("group.streams.max.heartbeat.interval.ms", 15000)),
    GroupConfigDef("streams.num.standby.replicas", _I, 0, 0, "group.streams.num.standby.replicas",
                   None, Bound("group.streams.max.standby.replicas", 2)),
    GroupConfigDef("streams.initial.rebalance.delay.ms", _I, 3000, 0, "group.streams.initial.rebalance.delay.ms"),
    GroupConfigDef("streams.assignment.interval.ms", _I, 1000, 0, "group.streams.assignment.interval.ms",
                   Bound("group.streams.min.assignment.interval.ms", 0),
                   Bound("group.streams.max.assignment.interval.ms", 15000), bounded_only_if_set=True),
)}

# The bound checks in GroupConfig.validateValues' order (it differs from the definition order).
_BOUND_ORDER = ("consumer.heartbeat.interval.ms", "consumer.session.timeout.ms", "consumer.assignment.interval.ms",
                "share.heartbeat.interval.ms", "share.session.timeout.ms", "share.record.lock.duration.ms",
                "share.delivery.count.limit", "share.partition.max.record.locks", "share.assignment.interval.ms",
                "streams.heartbeat.interval.ms", "streams.session.timeout.ms", "streams.num.standby.replicas",
                "streams.assignment.interval.ms")
_SESSION_OVER_HEARTBEAT = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                           ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
                           ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"))


class InvalidGroupConfig(ValueError):
    """Kafka's InvalidConfigurationException for a group config (INVALID_CONFIG), with its message."""


def parse(defn: GroupConfigDef, value: Any) -> Any:
    """ConfigDef.parseType then its validator, with Kafka's messages."""
    name = defn.name
    if defn.type == ConfigType.INT:
        if isinstance(value, bool):
            raise InvalidGroupConfig(f"Invalid value {value} for configuration {name}: Not a number of type INT")
        try:
            number = int(str(value).strip())
        except ValueError:
            raise InvalidGroupConfig(f"Invalid value {value} for configuration {name}: Not a number of type INT") \
                from None
        if not INT_MIN <= number <= INT_MAX:
            raise InvalidGroupConfig(f"Invalid value {value} for configuration {name}: Not a number of type INT")
        if defn.minimum is not None and number < defn.minimum:
            raise InvalidGroupConfig(f"Invalid value {number} for configuration {name}: Value must be at least "
                                     f"{defn.minimum}")
        return number
    if defn.type == ConfigType.BOOLEAN:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text not in ("true", "false"):
            raise InvalidGroupConfig(f"Invalid value {value} for configuration {name}: Expected value to be either "
                                     "true or false")
        return text == "true"
    text = str(value).strip()
    if defn.choices is not None and text not in defn.choices:
        raise InvalidGroupConfig(f"Invalid value {text} for configuration {name}: String must be one of: "
                                 f"{', '.join(defn.choices)}")
    if defn.validator is not None:
        problem = defn.validator(name, text)
        if problem is not None:
            raise InvalidGroupConfig(problem)
    return text


def validate_group_configs(overrides: Mapping[str, str], broker_config: Any) -> None:
    """GroupConfig.validate: ``overrides`` is the group's whole set of overrides after the change."""
    for name in overrides:
        if name not in GROUP_CONFIGS:
            raise InvalidGroupConfig(f"Unknown group config name: {name}")
    values: dict[str, Any] = {}
    for name, defn in GROUP_CONFIGS.items():
        values[name] = parse(defn, overrides[name]) if name in overrides else defn.broker_default(broker_config)
    for name in _BOUND_ORDER:
        defn = GROUP_CONFIGS[name]
        if defn.bounded_only_if_set and name not in overrides:
            continue
        if defn.low is not None and values[name] < defn.low.value(broker_config):
            raise InvalidGroupConfig(f"{name} must be greater than or equal to {defn.low.setting}")
        if defn.high is not None and values[name] > defn.high.value(broker_config):
            raise InvalidGroupConfig(f"{name} must be less than or equal to {defn.high.setting}")
    for session, heartbeat in _SESSION_OVER_HEARTBEAT:
        if values[session] <= values[heartbeat]:
            raise InvalidGroupConfig(f"{session} must be greater than {heartbeat}")


def validate_group_config(name: str, value: str, broker_config: Any = None) -> str | None:
    """One config on its own against the broker's settings: Kafka's message, or None when it is valid."""
    try:
        validate_group_configs({name: value}, broker_config)
    except InvalidGroupConfig as exc:
        return str(exc)
    return None


def effective_value(name: str, overrides: Mapping[str, str], broker_config: Any) -> Any:
    """GroupConfig.evaluate for one config: the group's override clamped into the broker's current bounds (they
    may have changed since it was set), else the broker's setting."""
    defn = GROUP_CONFIGS[name]
    if name not in overrides:
        return defn.broker_default(broker_config)
    try:
        value = parse(defn, overrides[name])
    except InvalidGroupConfig:
        return defn.broker_default(broker_config)
    if defn.low is not None:
        value = max(value, defn.low.value(broker_config))
    if defn.high is not None:
        value = min(value, defn.high.value(broker_config))
    return value


class GroupConfigSource:
    """What the group core reads per group: the effective consumer-group settings of a group id, from the
    persisted overrides (DynamicConfigs.groups) and the broker's settings."""

    def __init__(self, broker_config: Any, overrides: Callable[[str], Mapping[str, str]]) -> None:
        self._config = broker_config
        self._overrides = overrides

    def value(self, group_id: str, name: str) -> Any:
        overrides = self._overrides(group_id)
        if not overrides:
            return GROUP_CONFIGS[name].broker_default(self._config)
        effective = effective_value(name, overrides, self._config)
        # clamping must not leave a session at or below its heartbeat (checkSessionExceedsHeartbeat): the pair
        # falls back to the broker's values then
        for session, heartbeat in _SESSION_OVER_HEARTBEAT:
            if name in (session, heartbeat) and (session in overrides or heartbeat in overrides):
                pair = (effective_value(session, overrides, self._config),
                        effective_value(heartbeat, overrides, self._config))
                if pair[0] <= pair[1]:
                    return GROUP_CONFIGS[name].broker_default(self._config)
        return effective

    def consumer_session_timeout_ms(self, group_id: str) -> int:
        return int(self.value(group_id, "consumer.session.timeout.ms"))

    def consumer_heartbeat_interval_ms(self, group_id: str) -> int:
        return int(self.value(group_id, "consumer.heartbeat.interval.ms"))

    def consumer_assignment_interval_ms(self, group_id: str) -> int:
        return int(self.value(group_id, "consumer.assignment.interval.ms"))
