"""Turn a group description plus offsets into the rows of `groups describe`.

Same rules as kafka-consumer-groups --describe: every assigned partition gets a row with its consumer,
partitions with a committed offset but no owner get a row without one, members that own nothing get a row
without a partition, and lag is only shown when both offsets are known.
"""

from __future__ import annotations

from typing import Mapping

from .model import CommittedOffset, GroupDescription, LagRow, TopicPartition


def lag_rows(
    group: GroupDescription,
    committed: Mapping[TopicPartition, CommittedOffset],
    log_end: Mapping[TopicPartition, int],
) -> list[LagRow]:
    rows: list[LagRow] = []
    owned: set[TopicPartition] = set()

    def row(tp: TopicPartition, consumer: str | None, host: str | None, client: str | None) -> LagRow:
        commit = committed.get(tp)
        current = commit.offset if commit is not None else None
        end = log_end.get(tp)
        lag = end - current if end is not None and current is not None else None
        return LagRow(group.group_id, tp[0], tp[1], current, end, lag, consumer, host, client)

    for member in group.members:
        if not member.assignment:
            rows.append(LagRow(group.group_id, None, None, None, None, None, member.member_id, member.host, member.client_id))
        for tp in member.assignment:
            owned.add(tp)
            rows.append(row(tp, member.member_id, member.host, member.client_id))
    for tp in committed:
        if tp not in owned:
            rows.append(row(tp, None, None, None))
    rows.sort(key=lambda r: (r.topic is None, r.topic or "", -1 if r.partition is None else r.partition, r.consumer_id or ""))
    return rows
