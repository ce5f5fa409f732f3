"""ShareGroupDescribe (KIP-932): members, their assignments and the epochs of share groups."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.share.describe import error_row
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .operations import group_operations
from .services import Services

API = Api(ApiKey.SHARE_GROUP_DESCRIBE, 1, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, the groups without DESCRIBE answer GROUP_AUTHORIZATION_FAILED (listed first), and a
    group whose members are assigned a topic the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED
    (KafkaApis)."""
    names = [as_str(g) for g in request.group_ids]
    include = bool(request.include_authorized_operations)
    auth = services.authorizer
    denied: list[dict] = []
    if auth is not None:
        allowed = [g for g in names if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g)]
        denied = [error_row(g, ErrorCode.group_authorization_failed, None) for g in names if g not in allowed]
        names = allowed
    groups = await services.groups.describe_share_groups(names, include) if names else []
    out = []
    for g in groups:
        if auth is not None and g["error_code"] == ErrorCode.none:
            topics = {tp["topic_name"] for m in g["members"] for tp in m["assignment"]["topic_partitions"]}
            if topics and len(auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topics)) < len(topics):
                out.append(error_row(g["group_id"], ErrorCode.topic_authorization_failed,
                                     "The group has described topic(s) that the client is not authorized to describe."))
                continue
        if include and g["error_code"] == ErrorCode.none:
            g = {**g, "authorized_operations": group_operations(auth, ctx, g["group_id"])}
        out.append(g)
    return {"throttle_time": 0, "groups": denied + out}
