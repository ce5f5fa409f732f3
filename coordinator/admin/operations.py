"""Admin operations over the wire: each one is a few requests through `AdminClient` and returns model objects.

Group requests go to the group's coordinator, ListOffsets to each partition's leader, so the same code works on a
single groupcoord node and on a multi-broker Kafka cluster.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping

from kio.schema.errors import ErrorCode

from groupcoord.protocol.consumer_protocol import ConsumerProtocolError, decode_assignment

from .client import AdminClient, AdminError, ApiKey, KafkaApiError, TopicMetadata, check_error
from .lag import lag_rows
from .model import (
    CommittedOffset,
    GroupDescription,
    GroupListing,
    LagRow,
    MemberDescription,
    PartitionOffsets,
    TopicPartition,
)

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
CONSUMER_PROTOCOL = "consumer"
DEAD_STATE = "Dead"


async def list_groups(client: AdminClient, states: Iterable[str] = (), types: Iterable[str] = ()) -> list[GroupListing]:
    """Groups on every broker, optionally only those in `states` (filtered here too, for old brokers) and of
    `types` (classic, consumer, share: ListGroups v5's types filter)."""
    wanted = {s.lower() for s in states}
    cluster = await client.metadata([])
    found: dict[str, GroupListing] = {}
    body = {"states_filter": sorted(states), "types_filter": sorted(t.lower() for t in types)}
    for node in sorted(cluster.brokers) or [None]:
        _, response = await client.request(ApiKey.LIST_GROUPS, body, node=node)
        check_error(response.error_code, "ListGroups")
        for g in response.groups:
            state = getattr(g, "group_state", None) or None
            found[g.group_id] = GroupListing(g.group_id, g.protocol_type, state)
    listings = [g for g in found.values() if not wanted or (g.state or "").lower() in wanted]
    return sorted(listings, key=lambda g: g.group_id)


async def describe_group(client: AdminClient, group_id: str) -> GroupDescription:
    node = await client.find_coordinator(group_id)
    _, response = await client.request(
        ApiKey.DESCRIBE_GROUPS, {"groups": [group_id], "include_authorized_operations": False}, node=node
    )
    (described,) = [g for g in response.groups if g.group_id == group_id] or [None]
    if described is None:
        raise AdminError(f"DescribeGroups did not answer for group {group_id!r}")
    if int(described.error_code) == ErrorCode.group_id_not_found:
        # DescribeGroups v6+ reports an unknown group as an error; older versions as state Dead. One answer here.
        return GroupDescription(group_id, DEAD_STATE, "", "")
    check_error(described.error_code, f"DescribeGroups for {group_id!r}", getattr(described, "error_message", None))
    is_consumer = described.protocol_type in (CONSUMER_PROTOCOL, "")
    members = tuple(
        MemberDescription(
            member_id=m.member_id,
            group_instance_id=getattr(m, "group_instance_id", None),
            client_id=m.client_id,
            host=m.client_host,
            assignment=_assigned_partitions(m.member_assignment) if is_consumer else (),
        )
        for m in described.members
    )
    host, port = await client.broker_address(node)
    return GroupDescription(
        group_id=group_id,
        state=described.group_state,
        protocol_type=described.protocol_type,
        protocol=described.protocol_data,
        members=members,
        coordinator=(node, host, port),
    )


async def fetch_committed(client: AdminClient, group_id: str) -> dict[TopicPartition, CommittedOffset]:
    """Every offset the group has committed (partitions without a commit are left out)."""
    _, response = await client.group_request(
        group_id, ApiKey.OFFSET_FETCH, {"group_id": group_id, "topics": None, "require_stable": False}
    )
    check_error(getattr(response, "error_code", 0), f"OffsetFetch for {group_id!r}")
    result = {}
    for topic in response.topics:
        for p in topic.partitions:
            check_error(p.error_code, f"OffsetFetch for {group_id!r} {topic.name}-{p.partition_index}")
            offset = int(p.committed_offset)
            if offset < 0:
                continue
            result[(topic.name, int(p.partition_index))] = CommittedOffset(
                topic=topic.name,
                partition=int(p.partition_index),
                offset=offset,
                leader_epoch=int(getattr(p, "committed_leader_epoch", -1)),
                metadata=p.metadata or "",
            )
    return result


async def list_offsets(
    client: AdminClient, partitions: Iterable[TopicPartition], timestamp: int
) -> dict[TopicPartition, int | None]:
    """Offset per partition for `timestamp` (-1 latest, -2 earliest, else first offset at or after it in ms);
    None where no record is that recent."""
    partitions = sorted(set(partitions))
    if not partitions:
        return {}
    cluster = await client.metadata(sorted({t for t, _ in partitions}))
    by_leader: dict[int, list[TopicPartition]] = defaultdict(list)
    for topic, partition in partitions:
        meta = _topic(cluster.topics, topic)
        if partition not in meta.partitions:
            raise AdminError(f"partition {topic}-{partition} does not exist")
        by_leader[meta.partitions[partition].leader].append((topic, partition))
    result: dict[TopicPartition, int | None] = {}
    for leader, tps in sorted(by_leader.items()):
        topics: dict[str, list[dict]] = defaultdict(list)
        for topic, partition in tps:
            topics[topic].append({"partition_index": partition, "timestamp": timestamp, "current_leader_epoch": -1})
        body = {
            "replica_id": -1,
            "isolation_level": 0,
            "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
            "timeout": int(client.timeout * 1000),
        }
        _, response = await client.request(ApiKey.LIST_OFFSETS, body, node=leader)
        for topic in response.topics:
            for p in topic.partitions:
                check_error(p.error_code, f"ListOffsets {topic.name}-{p.partition_index}")
                offset = int(p.offset)
                result[(topic.name, int(p.partition_index))] = offset if offset >= 0 else None
    return result


async def describe_lag(client: AdminClient, group_id: str) -> tuple[GroupDescription, list[LagRow]]:
    group = await describe_group(client, group_id)
    committed = await fetch_committed(client, group_id)
    wanted = set(committed) | {tp for m in group.members for tp in m.assignment}
    ends = await list_offsets(client, wanted, LATEST_TIMESTAMP)
    log_end = {tp: end for tp, end in ends.items() if end is not None}
    return group, lag_rows(group, committed, log_end)


async def partition_offsets(
    client: AdminClient,
    partitions: Iterable[TopicPartition],
    committed: Mapping[TopicPartition, CommittedOffset],
    timestamp: int | None = None,
) -> dict[TopicPartition, PartitionOffsets]:
    """Log bounds (and, for --to-datetime, the offset at `timestamp`) of each partition, for reset planning."""
    partitions = sorted(set(partitions))
    earliest = await list_offsets(client, partitions, EARLIEST_TIMESTAMP)
    latest = await list_offsets(client, partitions, LATEST_TIMESTAMP)
    at_time = await list_offsets(client, partitions, timestamp) if timestamp is not None else {}
    result = {}
    for tp in partitions:
        commit = committed.get(tp)
        result[tp] = PartitionOffsets(
            earliest=earliest.get(tp) or 0,
            latest=latest.get(tp) or 0,
            current=None if commit is None else commit.offset,
            at_timestamp=at_time.get(tp),
        )
    return result


async def commit_offsets(client: AdminClient, group_id: str, offsets: Mapping[TopicPartition, int]) -> None:
    """Commit as an admin does: generation -1 and no member id, which the coordinator accepts only for an
    inactive group."""
    topics: dict[str, list[dict]] = defaultdict(list)
    for (topic, partition), offset in sorted(offsets.items()):
        topics[topic].append(
            {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
             "committed_metadata": ""}
        )
    body = {
        "group_id": group_id,
        "generation_id_or_member_epoch": -1,
        "member_id": "",
        "group_instance_id": None,
        "retention_time": -1,
        "topics": [{"name": t, "partitions": ps} for t, ps in topics.items()],
    }
    _, response = await client.group_request(group_id, ApiKey.OFFSET_COMMIT, body)
    for topic in response.topics:
        for p in topic.partitions:
            check_error(p.error_code, f"OffsetCommit for {group_id!r} {topic.name}-{p.partition_index}")


async def delete_groups(client: AdminClient, group_ids: Iterable[str]) -> dict[str, int]:
    """Error code per group (0 = deleted); each group is deleted through its own coordinator."""
    results = {}
    for group_id in group_ids:
        try:
            _, response = await client.group_request(group_id, ApiKey.DELETE_GROUPS, {"groups_names": [group_id]})
        except KafkaApiError as exc:
            results[group_id] = exc.code
            continue
        for r in response.results:
            results[r.group_id] = int(r.error_code)
    return results


async def list_topics(client: AdminClient) -> dict[str, TopicMetadata]:
    cluster = await client.metadata(None)
    return dict(sorted(cluster.topics.items()))


async def describe_topics(client: AdminClient, names: Iterable[str]) -> list[TopicMetadata]:
    cluster = await client.metadata(list(names))
    return [_topic(cluster.topics, name) for name in names]


async def create_topic(
    client: AdminClient, name: str, partitions: int, replication_factor: int, configs: Mapping[str, str]
) -> None:
    body = {
        "topics": [
            {
                "name": name,
                "num_partitions": partitions,
                "replication_factor": replication_factor,
                "assignments": [],
                "configs": [{"name": k, "value": v} for k, v in configs.items()],
            }
        ],
        "timeout": int(client.timeout * 1000),
        "validate_only": False,
    }
    _, response = await client.request(ApiKey.CREATE_TOPICS, body, node=await _controller_or_any(client))
    for topic in response.topics:
        check_error(topic.error_code, f"CreateTopics {topic.name!r}", getattr(topic, "error_message", None))


async def delete_topics(client: AdminClient, names: Iterable[str]) -> None:
    names = list(names)
    body = {"topic_names": names, "topics": [{"name": n} for n in names], "timeout": int(client.timeout * 1000)}
    _, response = await client.request(ApiKey.DELETE_TOPICS, body, node=await _controller_or_any(client))
    for result in response.responses:
        check_error(result.error_code, f"DeleteTopics {result.name!r}", getattr(result, "error_message", None))


async def _controller_or_any(client: AdminClient) -> int | None:
    """Topic changes go to the controller on old ZooKeeper clusters; KRaft brokers forward them anyway."""
    cluster = await client.metadata([])
    return cluster.controller_id if cluster.controller_id in cluster.brokers else None


def _topic(topics: Mapping[str, TopicMetadata], name: str) -> TopicMetadata:
    meta = topics.get(name)
    if meta is None:
        raise AdminError(f"topic {name!r} does not exist")
    check_error(meta.error_code, f"Metadata for topic {name!r}")
    return meta


__all__ = [
    "commit_offsets",
    "create_topic",
    "delete_groups",
    "delete_topics",
    "describe_group",
    "describe_lag",
    "describe_topics",
    "fetch_committed",
    "list_groups",
    "list_offsets",
    "list_topics",
    "partition_offsets",
]


def _assigned_partitions(blob: bytes | None) -> tuple[tuple[str, int], ...]:
    """(topic, partition) pairs of a member's consumer-protocol assignment; empty while it has none
    (between rebalances) or when the bytes are not the consumer protocol's."""
    if not blob:
        return ()
    try:
        assignment = decode_assignment(blob)
    except ConsumerProtocolError:
        return ()
    return tuple((topic, partition) for topic, partitions in assignment.partitions for partition in partitions)
