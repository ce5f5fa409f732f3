"""ConsumerGroupDescribe: members, assignments and epochs of KIP-848 consumer groups."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .operations import group_operations
from .api import Api
from .services import Services

API = Api(ApiKey.CONSUMER_GROUP_DESCRIBE, 0, 1)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, the groups without DESCRIBE answer GROUP_AUTHORIZATION_FAILED (listed first)."""
    names = [as_str(g) for g in request.group_ids]
    include = bool(request.include_authorized_operations)
    auth = services.authorizer
    denied: list[dict] = []
    if auth is not None:
        allowed = [g for g in names if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g)]
        denied = [_denied(g) for g in names if g not in allowed]
        names = allowed
    groups = await services.groups.describe_consumer_groups(names, include) if names else []
    if include:
        groups = [{**g, "authorized_operations": group_operations(auth, ctx, g["group_id"])}
                  if g["error_code"] == ErrorCode.none else g for g in groups]
    return {"throttle_time": 0, "groups": denied + list(groups)}


def _denied(group_id: str) -> dict:
    """ConsumerGroupDescribeResponseData.DescribedGroup with only its id and the error (Kafka's defaults)."""
    return {"error_code": ErrorCode.group_authorization_failed, "error_message": None, "group_id": group_id,
            "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "", "members": [],
            "authorized_operations": -2147483648}
