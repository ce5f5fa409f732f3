"""DescribeShareGroupOffsets (KIP-932; v1 adds the lag, KIP-1226): each share partition's start offset, leader
epoch and lag (coordinator/share/offsets_admin.py). DESCRIBE on the group (else the group answers
GROUP_AUTHORIZATION_FAILED), DESCRIBE on each topic (else that topic's partitions answer TOPIC_AUTHORIZATION_FAILED)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    groups = []
    for g in request.groups:
        group_id = as_str(g.group_id)
        if auth is not None and not auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
            groups.append({"group_id": group_id, "topics": [], "error_code": ErrorCode.group_authorization_failed,
                           "error_message": None})
            continue
        topics = None if g.topics is None else [(str(t.topic_name), [int(p) for p in t.partitions]) for t in g.topics]
        denied: list[dict] = []
        if auth is not None and topics is not None:
            allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, {n for n, _ in topics})
            denied = [{"topic_name": n, "topic_id": ZERO_UUID, "partitions": [
                {"partition_index": p, "start_offset": -1, "leader_epoch": 0, "lag": -1,
                 "error_code": ErrorCode.topic_authorization_failed, "error_message": None} for p in parts]}
                for n, parts in topics if n not in allowed]
            topics = [(n, parts) for n, parts in topics if n in allowed]
        described = await services.share_offsets.describe(group_id, topics)
        described["topics"].extend(denied)
        groups.append(described)
    return {"throttle_time": 0, "groups": groups}
