"""The story every pipeline test reads: fifteen minutes in the life of an offsets log.

* `orders`   rebalances three times (a second member joins as a static member, then the leader
             leaves and a third static member arrives); it commits `orders` p0 steadily every 30s
             (OK) and keeps committing the same offset on p1 (STALL).
* `billing`  commits `invoices` p0 every 30s but its last commit goes backwards (WARN), and stopped
             committing `invoices` p1 after five minutes (STOP).
* `legacy`   commits once with an explicit expire time (OffsetCommit v2-v4 retention).
* `doomed`   has one generation and two offsets, then is deleted (tombstones).
* `storm`    goes through six generations in four minutes, the last one empty (a storm).
* `txn-app`  commits transactionally: one transaction commits, one aborts, one is still open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tests.pipeline.offsets_history import Member, OffsetsHistory

T0 = 1_700_000_000_000
SECOND = 1000
REFERENCE = T0 + 900 * SECOND  # "now" for history: the end of the story


@dataclass
class Timeline:
    """Operations applied in time order, as one coordinator would write them."""

    steps: list[tuple[int, int, Callable[[], None]]] = field(default_factory=list)

    def at(self, when: int, step: Callable[[], None]) -> None:
        self.steps.append((when, len(self.steps), step))

    def play(self) -> None:
        for _, _, step in sorted(self.steps, key=lambda item: item[:2]):
            step()


def build_story(data_dir: Path) -> OffsetsHistory:
    history = OffsetsHistory(data_dir, num_partitions=3, batches_per_segment=25)
    timeline = Timeline()

    m1 = Member("orders-m1", ("orders",), (("orders", (0, 1)),), client_id="orders-app")
    m2 = Member("orders-m2", ("orders",), (("orders", (1,)),), instance_id="orders-2", client_id="orders-app")
    m3 = Member("orders-m3", ("orders",), (("orders", (0,)),), instance_id="orders-3", client_id="orders-app")
    timeline.at(T0, lambda: history.rebalance("orders", 1, [m1], T0))
    timeline.at(T0 + 60 * SECOND, lambda: history.rebalance("orders", 2, [m1, m2], T0 + 60 * SECOND))
    timeline.at(T0 + 120 * SECOND, lambda: history.rebalance("orders", 3, [m2, m3], T0 + 120 * SECOND))
    for i in range(1, 31):
        at = T0 + 30 * SECOND * i
        timeline.at(at, lambda at=at, i=i: history.commit("orders", {("orders", 0): 100 * i, ("orders", 1): 500}, at,
                                                          leader_epoch=3, metadata="orders-app"))

    for i in range(1, 29):
        at = T0 + 30 * SECOND * i
        offset = 40 * i if i < 28 else 900  # the last commit goes back from 1080 to 900
        offsets = {("invoices", 0): offset}
        if i <= 10:
            offsets[("invoices", 1)] = 7 * i
        timeline.at(at, lambda at=at, offsets=offsets: history.commit("billing", offsets, at))

    timeline.at(T0 + 100 * SECOND,
                lambda: history.commit("legacy", {("old-topic", 0): 42}, T0 + 100 * SECOND, expire_at=T0 + 400 * SECOND))

    doomed = Member("doomed-m1", ("audit",), (("audit", (0, 1)),))
    timeline.at(T0 + 40 * SECOND, lambda: history.rebalance("doomed", 1, [doomed], T0 + 40 * SECOND))
    timeline.at(T0 + 50 * SECOND, lambda: history.commit("doomed", {("audit", 0): 7, ("audit", 1): 9}, T0 + 50 * SECOND))
    timeline.at(T0 + 500 * SECOND,
                lambda: history.delete_group("doomed", [("audit", 0), ("audit", 1)], T0 + 500 * SECOND))

    for k in range(6):
        at = T0 + 200 * SECOND + 40 * SECOND * k
        members = [] if k == 5 else [Member(f"storm-m{k}", ("events",), (("events", (0,)),))]
        timeline.at(at, lambda at=at, k=k, members=members: history.rebalance("storm", k + 1, members, at))

    timeline.at(T0 + 600 * SECOND, lambda: history.transactional_commit(
        "txn-app", {("payments", 0): 1000}, T0 + 600 * SECOND, producer_id=77))
    timeline.at(T0 + 610 * SECOND, lambda: history.end_transaction(77, "commit", T0 + 610 * SECOND))
    timeline.at(T0 + 620 * SECOND, lambda: history.transactional_commit(
        "txn-app", {("payments", 0): 2000}, T0 + 620 * SECOND, producer_id=77))
    timeline.at(T0 + 630 * SECOND, lambda: history.end_transaction(77, "abort", T0 + 630 * SECOND))
    timeline.at(T0 + 640 * SECOND, lambda: history.transactional_commit(
        "txn-app", {("payments", 1): 5}, T0 + 640 * SECOND, producer_id=78))

    timeline.play()
    history.write()
    return history
