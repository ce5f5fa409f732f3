"""The one path from a record to live state: ``apply_record`` on load, ``emit`` (write and apply) live.

Every record the coordinator writes and applies goes through ``emit``, whichever
API writes it (classic, consumer, offsets, retention, admin); a shard loading its
partition applies each record with ``apply_record``, the same appliers. So live
state is, by construction, what a replay of the log produces. (A classic group's
GroupMetadata value is the one record only written, with ``Effects.write``: it is
a snapshot of the live group, which already is its state.)
"""

from __future__ import annotations

import functools
from typing import Any

from groupcoord.coordinator.groups.classic.appliers import apply_group_metadata
from groupcoord.coordinator.groups.offsets.appliers import apply_offset
from groupcoord.coordinator.groups.offsets_records import GroupMetadataKey, OffsetCommitKey, UnknownKey
from groupcoord.coordinator.groups.runtime.effects import Effects
from groupcoord.coordinator.groups.shard_state import ShardState


def apply_record(state: ShardState, key: Any, value: Any, now: int) -> None:
    if isinstance(key, OffsetCommitKey):
        apply_offset(state, key, value, now)
    elif isinstance(key, GroupMetadataKey):
        apply_group_metadata(state, key, value, now)
    elif isinstance(key, UnknownKey):
        state.log.warning("skipping record of unknown type", record_type=key.record_type)
    else:
        _apply_other_record(state, key, value, now)


@functools.cache
def _other_appliers() -> tuple[Any, Any]:
    """The consumer and share groups' appliers, imported (with the groups' code) by the first such record applied,
    not with the group coordinator: a broker starts, and most serve, without those groups."""
    from groupcoord.coordinator.groups.consumer import appliers as consumer_appliers
    from groupcoord.coordinator.groups.share import appliers as share_appliers

    return consumer_appliers, share_appliers


def _apply_other_record(state: ShardState, key: Any, value: Any, now: int) -> None:
    """A record of a consumer or share group, or of a group type not served."""
    consumer_appliers, share_appliers = _other_appliers()
    if consumer_appliers.is_consumer_record(key):
        consumer_appliers.apply(state, key, value, now)
    elif share_appliers.is_share_record(key):
        share_appliers.apply(state, key, value, now)
    else:
        # Streams group records: those groups are not served by this coordinator; the records stay in the log.
        state.log.debug("skipping record of a group type not served", record=type(key).__name__)


def emit(state: ShardState, fx: Effects, record: tuple[Any, Any], now: int) -> None:
    """Write a record and apply it: live state is always what a replay of the log gives."""
    key, value = record
    fx.write(key, value)
    apply_record(state, key, value, now)
