"""What a shard operation asks its runtime to do: append records, then release replies.

Replies are released only once the records of the same Effects (and of every
earlier Effects of the shard) are durable, which is how "answer only after the
write is as durable as the fsync policy promises" is kept without the core doing I/O.
An operation that wrote nothing may say its replies depend on no earlier write (``at_once``):
they are then released as soon as it returns, as Kafka completes a JoinGroup's response
future inside the operation instead of behind the shard's pending appends.

Besides plain records an operation may ask for records inside a transactional batch (a
TxnOffsetCommit: the producer's id and epoch, the transactional bit) and for a transaction's end
marker (a control batch); the runtime writes them in the order asked, each as its own batch.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.frozen import frozen_dataclass



@frozen_dataclass
class TransactionalRecords:
    """Records written in one transactional batch of the producer (they count once its COMMIT marker follows)."""

    producer_id: int
    producer_epoch: int
    records: tuple[tuple[Any, Any], ...]


@frozen_dataclass
class EndMarker:
    """A transaction's COMMIT or ABORT control batch."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool


Batch = TransactionalRecords | EndMarker


class Effects:
    """What one operation (or one timer tick) asks for. A plain slotted class with its own ``__init__``: one is
    made per JoinGroup and SyncGroup, and the dataclass's generated one called a default factory per list
    and tested each argument against its default marker."""

    __slots__ = ("records", "replies", "batches", "queued_at", "on_timeout", "at_once", "after")

    def __init__(self) -> None:
        self.records: list[tuple[Any, Any | None]] = []  # (key, value) of the shard's record codec
        self.replies: list[tuple[Any, dict]] = []
        self.batches: list[tuple[int, Batch]] = []  # (records written before it, batch)
        self.queued_at = 0.0  # the loop's time when it started waiting for its write (the write timeout counts from it)
        self.on_timeout: Any = None
        """``(response) -> response`` for its replies if that write is not durable in time (None: the runtime's
        timeout error in every error field)."""
        self.at_once = False
        """With no records or batches of its own: its replies are released when the operation returns, not
        behind the shard's earlier writes still pending (they depend on none of them). Ignored otherwise."""
        self.after: list[Any] | None = None
        """Operations ``(shard state, now, error) -> Effects`` to run once these writes are durable, or are not
        within the write timeout (``after_write``)."""

    def __repr__(self) -> str:
        return f"Effects(records={self.records!r}, replies={self.replies!r}, batches={self.batches!r})"

    def write(self, key: Any, value: Any | None) -> None:
        self.records.append((key, value))

    def write_batch(self, batch: Batch) -> None:
        """A transactional batch or an end marker, after the plain records written so far."""
        self.batches.append((len(self.records), batch))

    def after_write(self, operation: Any) -> None:
        """Run ``operation(state, now, error)`` on the shard once this Effects' writes are durable (``error`` None),
        or once they have not been within the write timeout (``error`` the runtime's timeout error; the write goes
        on, and the operation is not run again), as Kafka completes an operation's append future: for a change
        of state that must wait for its record (the leader's SyncGroup makes its group Stable only then). Not run
        if the write fails: the shard then reloads from its log. Only with a write of this Effects' own: one that
        writes nothing is not queued behind the shard's writes at all (``CoordinatorRuntime._submit``)."""
        if self.after is None:
            self.after = [operation]
        else:
            self.after.append(operation)

    def reply(self, token: Any, response: dict) -> None:
        if token is not None:
            self.replies.append((token, response))

    def extend(self, other: "Effects") -> None:
        base = len(self.records)
        self.records.extend(other.records)
        self.replies.extend(other.replies)
        if other.batches:  # (rare: a generator made per call otherwise, and a timer tick extends once per due operation)
            self.batches.extend((base + at, batch) for at, batch in other.batches)
        if other.after is not None:
            for operation in other.after:
                self.after_write(operation)

    def writes(self) -> list[tuple[Any, Any | None] | Batch]:
        """Everything to append, in the order asked: plain (key, value) records and batches."""
        if not self.batches:
            return list(self.records)
        out: list = []
        start = 0
        for at, batch in self.batches:
            out.extend(self.records[start:at])
            out.append(batch)
            start = at
        out.extend(self.records[start:])
        return out

    def __bool__(self) -> bool:
        return bool(self.records or self.replies or self.batches)
