"""The persister's answers to a read of share-group state (ReadShareGroupState, ReadShareGroupStateSummary).

Apart from persister.py, which the broker builds at every start, because only a share partition's first load or
a summary read makes them: the daemon does not build these frozen dataclasses before it listens.
"""

from __future__ import annotations

from groupcoord.coordinator.share.records import StateBatch
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class StateSummary:
    """ReadShareGroupStateSummary's answer for one share partition."""
    error: ErrorCode
    start_offset: int
    state_epoch: int
    leader_epoch: int
    delivery_complete_count: int = -1


@frozen_dataclass
class ReadState:
    """ReadShareGroupState's answer for one share partition: epochs, start offset and state batches."""
    error: ErrorCode
    state_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...]
