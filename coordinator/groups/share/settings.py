"""The settings a share group runs with: the broker's ``group.share.*`` values, overridden per group by the
``share.*`` group configs (IncrementalAlterConfigs on GROUP) where the shard is given a way to read them."""

from __future__ import annotations

from groupcoord.coordinator.groups.shard_state import ShardState


def _override(state: ShardState, group_id: str, name: str) -> int | None:
    read = getattr(state, "group_config", None)  # (group id, config name) -> str | None, when wired
    if read is None:
        return None
    value = read(group_id, name)
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


def session_timeout_ms(state: ShardState, group_id: str) -> int:
    value = _override(state, group_id, "share.session.timeout.ms")
    return value if value is not None else int(getattr(state.config, "group_share_session_timeout_ms", 45000))


def heartbeat_interval_ms(state: ShardState, group_id: str) -> int:
    value = _override(state, group_id, "share.heartbeat.interval.ms")
    return value if value is not None else int(getattr(state.config, "group_share_heartbeat_interval_ms", 5000))


def max_size(state: ShardState) -> int:
    return int(getattr(state.config, "group_share_max_size", 200))


def initialize_retry_interval_ms(state: ShardState) -> int:
    return int(getattr(state.config, "group_share_initialize_retry_interval_ms", 30000))
