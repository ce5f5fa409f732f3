"""OffsetDelete: drop a group's committed offsets for partitions it no longer consumes."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.lazy_requests import OffsetDelete
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.OFFSET_DELETE, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, as KafkaApis: DELETE on the group (else a top-level GROUP_AUTHORIZATION_FAILED),
    then READ on each topic: the partitions of the others answer TOPIC_AUTHORIZATION_FAILED; the group is
    still asked about the rest (even none), and its own error wins, as OffsetDeleteResponse.Builder.merge."""
    group_id = as_str(request.group_id)
    topics = tuple((t.name, tuple(int(p.partition_index) for p in t.partitions)) for t in request.topics)
    auth = services.authorizer
    if auth is None:
        return await services.groups.delete_offsets(OffsetDelete(group_id, topics))
    if not auth.authorize(ctx, AclOperation.DELETE, ResourceType.GROUP, group_id):
        return {"error_code": ErrorCode.group_authorization_failed, "throttle_time": 0, "topics": []}
    allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (name for name, _ in topics))
    denied = [{"name": name, "partitions": [{"partition_index": p, "error_code": ErrorCode.topic_authorization_failed}
                                            for p in parts]} for name, parts in topics if name not in allowed]
    kept = tuple(t for t in topics if t[0] in allowed)
    if not denied:
        return await services.groups.delete_offsets(OffsetDelete(group_id, topics))
    response = await services.groups.delete_offsets(OffsetDelete(group_id, kept))
    if response["error_code"] != ErrorCode.none:
        return response
    return {**response, "topics": denied + list(response["topics"])}
