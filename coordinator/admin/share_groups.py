"""Share groups (KIP-932) for the admin commands: what kafka-share-groups.sh shows.

``describe`` answers through ShareGroupDescribe (members, epochs, assignments by topic name) and, for the
offsets view, DescribeShareGroupOffsets (each share partition's start offset and lag) where the broker serves it.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

from groupcoord.protocol.frozen import frozen_dataclass

from .client import AdminClient, ApiKey, check_error

SHARE_PROTOCOL = "share"


@frozen_dataclass(slots=False)
class ShareMemberDescription:
    member_id: str
    client_id: str
    host: str
    member_epoch: int
    assignment: tuple[tuple[str, int], ...] = ()


@frozen_dataclass(slots=False)
class ShareGroupDescription:
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    members: tuple[ShareMemberDescription, ...] = ()
    coordinator: tuple[int, str, int] | None = None


@frozen_dataclass(slots=False)
class ShareOffsetRow:
    group: str
    topic: str
    partition: int
    leader_epoch: int | None
    start_offset: int | None
    lag: int | None


async def describe_share_group(client: AdminClient, group_id: str) -> ShareGroupDescription | None:
    """None when the id is not a share group (GROUP_ID_NOT_FOUND)."""
    node = await client.find_coordinator(group_id)
    _, response = await client.request(ApiKey.SHARE_GROUP_DESCRIBE,
                                       {"group_ids": [group_id], "include_authorized_operations": False}, node=node)
    (g,) = [g for g in response.groups if g.group_id == group_id]
    if int(g.error_code) == ErrorCode.group_id_not_found:
        return None
    check_error(g.error_code, f"ShareGroupDescribe for {group_id!r}", g.error_message)
    members = tuple(sorted((
        ShareMemberDescription(
            member_id=m.member_id, client_id=m.client_id, host=m.client_host, member_epoch=int(m.member_epoch),
            assignment=tuple(sorted((tp.topic_name, int(p)) for tp in m.assignment.topic_partitions
                                    for p in tp.partitions)))
        for m in g.members), key=lambda m: m.member_id))
    host, port = await client.broker_address(node)
    return ShareGroupDescription(group_id, g.group_state, int(g.group_epoch), int(g.assignment_epoch), members,
                                 (node, host, port))


async def describe_share_offsets(client: AdminClient, group_id: str) -> list[ShareOffsetRow] | None:
    """Every share partition's start offset and lag, or None where the broker has no DescribeShareGroupOffsets."""
    if ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS not in (await client.connection(None)).api_ranges:
        return None
    _, response = await client.group_request(
        group_id, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, {"groups": [{"group_id": group_id, "topics": None}]})
    (g,) = response.groups
    check_error(g.error_code, f"DescribeShareGroupOffsets for {group_id!r}", g.error_message)
    rows = []
    for t in g.topics:
        for p in t.partitions:
            check_error(p.error_code, f"DescribeShareGroupOffsets for {group_id!r} {t.topic_name}-{p.partition_index}",
                        p.error_message)
            rows.append(ShareOffsetRow(group_id, t.topic_name, int(p.partition_index),
                                       None if int(p.leader_epoch) < 0 else int(p.leader_epoch),
                                       None if int(p.start_offset) < 0 else int(p.start_offset),
                                       None if int(getattr(p, "lag", -1)) < 0 else int(p.lag)))
    return sorted(rows, key=lambda r: (r.topic, r.partition))
