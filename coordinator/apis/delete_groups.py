"""DeleteGroups: remove empty groups and their offsets."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_GROUPS, 0, 2)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, as KafkaApis: the distinct names without DELETE answer
    GROUP_AUTHORIZATION_FAILED after the others' results."""
    names = [as_str(g) for g in request.groups_names]
    auth = services.authorizer
    if auth is None:
        return {"throttle_time": 0, "results": await services.groups.delete_groups(names)}
    distinct = list(dict.fromkeys(names))
    allowed = auth.filter_authorized(ctx, AclOperation.DELETE, ResourceType.GROUP, distinct)
    results = await services.groups.delete_groups([g for g in distinct if g in allowed]) if allowed else []
    denied = [{"group_id": g, "error_code": ErrorCode.group_authorization_failed} for g in distinct if g not in allowed]
    return {"throttle_time": 0, "results": list(results) + denied}
