"""Per-group configs (Kafka's GroupConfig, KIP-848): names, types and the bounds Kafka checks them against.

The bounds are Kafka's broker defaults for the consumer and share group timeouts (this broker does not
expose them as settings). Values are validated and persisted by IncrementalAlterConfigs and reported by
DescribeConfigs on GROUP resources.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GroupConfigDef:
    name: str
    default: int
    minimum: int
    low: tuple[str, int] | None = None   # (broker setting, value) the value may not go below
    high: tuple[str, int] | None = None  # (broker setting, value) the value may not exceed

    @property
    def broker_synonym(self) -> str:
        """The broker setting that supplies the default (``group.`` + the name, as Kafka's synonyms show)."""
        return f"group.{self.name}"


GROUP_CONFIGS: dict[str, GroupConfigDef] = {d.name: d for d in (
    GroupConfigDef("consumer.session.timeout.ms", 45000, 1, ("group.consumer.min.session.timeout.ms", 45000),
                   ("group.consumer.max.session.timeout.ms", 60000)),
    GroupConfigDef("consumer.heartbeat.interval.ms", 5000, 1, ("group.consumer.min.heartbeat.interval.ms", 5000),
                   ("group.consumer.max.heartbeat.interval.ms", 15000)),
    GroupConfigDef("share.session.timeout.ms", 45000, 1, ("group.share.min.session.timeout.ms", 45000),
                   ("group.share.max.session.timeout.ms", 60000)),
    GroupConfigDef("share.heartbeat.interval.ms", 5000, 1, ("group.share.min.heartbeat.interval.ms", 5000),
                   ("group.share.max.heartbeat.interval.ms", 15000)),
    GroupConfigDef("share.record.lock.duration.ms", 30000, 1000, ("group.share.min.record.lock.duration.ms", 15000),
                   ("group.share.max.record.lock.duration.ms", 60000)),
)}


def validate_group_config(name: str, value: str) -> str | None:
    """Kafka's message for an invalid group config, or None when it is valid."""
    defn = GROUP_CONFIGS.get(name)
    if defn is None:
        return f"Unknown group config name: {name}"
    try:
        number = int(value.strip())
        if not -2**31 <= number < 2**31:
            raise ValueError(value)
    except ValueError:
        return f"Invalid value {value} for configuration {name}: Not a number of type INT"
    if number < defn.minimum:
        return f"Invalid value {value} for configuration {name}: Value must be at least {defn.minimum}"
    if defn.low is not None and number < defn.low[1]:
        return f"{name} must be greater than or equal to {defn.low[0]}"
    if defn.high is not None and number > defn.high[1]:
        return f"{name} must be less than or equal to {defn.high[0]}"
    return None
