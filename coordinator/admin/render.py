"""Human tables and JSON documents for the admin commands.

Tables follow kafka-consumer-groups: upper-case headers, left-aligned columns as wide as their widest cell,
and `-` for anything unknown. JSON output is one document per command with null for unknown values, so
scripts never have to parse the table.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterable, Sequence

from .model import GroupDescription, GroupListing, LagRow
from .reset_plan import PlannedReset

MISSING_CELL = "-"

LAG_HEADERS = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
MEMBER_HEADERS = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
STATE_HEADERS = ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
RESET_HEADERS = ("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")
LIST_HEADERS = ("GROUP", "TYPE", "STATE")
# kafka-transactions.sh's columns.
TXN_LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
TXN_DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                        "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                        "TopicPartitions")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    cells = [[MISSING_CELL if v is None else str(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = [headers, *cells]
    return "\n".join(" ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def to_json(document: Any) -> str:
    return json.dumps(document, indent=2, sort_keys=False)


def lag_table(rows: Sequence[LagRow]) -> str:
    return table(
        LAG_HEADERS,
        [(r.group, r.topic, r.partition, r.current_offset, r.log_end_offset, r.lag, r.consumer_id, r.host, r.client_id)
         for r in rows],
    )


def lag_json(rows: Sequence[LagRow]) -> list[dict]:
    return [dataclasses.asdict(r) for r in rows]


def members_table(group: GroupDescription) -> str:
    return table(
        MEMBER_HEADERS,
        [(group.group_id, m.member_id, m.host, m.client_id, len(m.assignment)) for m in group.members],
    )


def members_json(group: GroupDescription) -> list[dict]:
    return [
        {
            "group": group.group_id,
            "consumer_id": m.member_id,
            "group_instance_id": m.group_instance_id,
            "host": m.host,
            "client_id": m.client_id,
            "partitions": len(m.assignment),
            "assignment": [{"topic": t, "partition": p} for t, p in m.assignment],
        }
        for m in group.members
    ]


def state_table(group: GroupDescription) -> str:
    return table(STATE_HEADERS, [_state_cells(group)])


def state_json(group: GroupDescription) -> dict:
    node, host, port = group.coordinator or (None, None, None)
    return {
        "group": group.group_id,
        "coordinator": None if node is None else {"id": node, "host": host, "port": port},
        "assignment_strategy": group.protocol or None,
        "state": group.state,
        "members": len(group.members),
    }


def _state_cells(group: GroupDescription) -> tuple:
    coordinator = None
    if group.coordinator is not None:
        node, host, port = group.coordinator
        coordinator = f"{host}:{port} ({node})"
    return (group.group_id, coordinator, group.protocol or None, group.state, len(group.members))


def groups_table(groups: Sequence[GroupListing]) -> str:
    return table(LIST_HEADERS, [(g.group_id, g.protocol_type or None, g.state) for g in groups])


def groups_json(groups: Sequence[GroupListing]) -> list[dict]:
    return [{"group": g.group_id, "protocol_type": g.protocol_type, "state": g.state} for g in groups]


def reset_table(group: str, plan: Sequence[PlannedReset]) -> str:
    return table(RESET_HEADERS, [(group, p.topic, p.partition, p.new_offset) for p in plan])


def reset_json(group: str, plan: Sequence[PlannedReset], executed: bool) -> dict:
    return {
        "group": group,
        "executed": executed,
        "offsets": [
            {"topic": p.topic, "partition": p.partition, "current_offset": p.current_offset, "new_offset": p.new_offset}
            for p in plan
        ],
    }


def transactions_table(listings: Sequence[Any]) -> str:
    return table(TXN_LIST_HEADERS, [(t.transactional_id, t.coordinator, t.producer_id, t.state) for t in listings])


def transactions_json(listings: Sequence[Any]) -> list[dict]:
    return [{"transactional_id": t.transactional_id, "coordinator": t.coordinator, "producer_id": t.producer_id,
             "state": t.state} for t in listings]


def transaction_table(d: Any, now_ms: int) -> str:
    """As kafka-transactions.sh describe: "None" for the start and duration when no transaction runs."""
    start = "None" if d.start_time_ms is None else d.start_time_ms
    duration = "None" if d.start_time_ms is None else now_ms - d.start_time_ms
    partitions = ",".join(f"{t}-{p}" for t, p in d.partitions)
    return table(TXN_DESCRIBE_HEADERS, [(d.coordinator, d.transactional_id, d.producer_id, d.producer_epoch, d.state,
                                         d.timeout_ms, start, duration, partitions)])


def transaction_json(d: Any, now_ms: int) -> dict:
    return {"coordinator": d.coordinator, "transactional_id": d.transactional_id, "producer_id": d.producer_id,
            "producer_epoch": d.producer_epoch, "state": d.state, "timeout_ms": d.timeout_ms,
            "start_time_ms": d.start_time_ms,
            "duration_ms": None if d.start_time_ms is None else now_ms - d.start_time_ms,
            "partitions": [{"topic": t, "partition": p} for t, p in d.partitions]}


# kafka-share-groups.sh's columns (ShareGroupCommand, Kafka 4.3.1).
SHARE_STATE_HEADERS = ("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS")
SHARE_MEMBER_HEADERS = ("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT")
SHARE_OFFSET_HEADERS = ("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")


def share_assignment(assignment: Sequence[tuple[str, int]]) -> str:
    """ShareGroupCommand.getAssignmentString: ``topic:0,1;other:2`` (topics sorted, partitions sorted)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in assignment:
        by_topic.setdefault(topic, []).append(partition)
    return ";".join(sorted(f"{t}:{','.join(str(p) for p in sorted(ps))}" for t, ps in by_topic.items()))


def share_state_table(group: Any) -> str:
    coordinator = None
    if group.coordinator is not None:
        node, host, port = group.coordinator
        coordinator = f"{host}:{port} ({node})"
    return table(SHARE_STATE_HEADERS, [(group.group_id, coordinator, group.state, group.group_epoch,
                                        group.assignment_epoch, len(group.members))])


def share_state_json(group: Any) -> dict:
    node, host, port = group.coordinator or (None, None, None)
    return {"group": group.group_id, "type": "share",
            "coordinator": None if node is None else {"id": node, "host": host, "port": port},
            "state": group.state, "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
            "members": len(group.members)}


def share_members_table(group: Any) -> str:
    return table(SHARE_MEMBER_HEADERS, [(group.group_id, m.member_id, m.host, m.client_id, len(m.assignment),
                                         m.member_epoch, share_assignment(m.assignment) or None) for m in group.members])


def share_members_json(group: Any) -> list[dict]:
    return [{"group": group.group_id, "consumer_id": m.member_id, "host": m.host, "client_id": m.client_id,
             "partitions": len(m.assignment), "member_epoch": m.member_epoch,
             "assignment": [{"topic": t, "partition": p} for t, p in m.assignment]} for m in group.members]


def share_offsets_table(rows: Sequence[Any]) -> str:
    return table(SHARE_OFFSET_HEADERS, [(r.group, r.topic, r.partition, r.leader_epoch, r.start_offset, r.lag)
                                        for r in rows])


def share_offsets_json(rows: Sequence[Any]) -> list[dict]:
    return [dataclasses.asdict(r) for r in rows]
