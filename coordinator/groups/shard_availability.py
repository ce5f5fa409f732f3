"""Whether a coordinator shard (a group shard, a transaction shard) can answer for what it holds right now.

One rule for both coordinators that run on the shard runtime: a shard still replaying its partition's log
answers COORDINATOR_LOAD_IN_PROGRESS (the client retries), one whose log could not be loaded answers
COORDINATOR_NOT_AVAILABLE (the client looks for its coordinator again).
"""

from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode


def availability_error(loading: bool, unavailable: str | None) -> ErrorCode | None:
    if unavailable is not None:
        return ErrorCode.coordinator_not_available
    if loading:
        return ErrorCode.coordinator_load_in_progress
    return None
