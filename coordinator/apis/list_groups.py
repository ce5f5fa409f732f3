"""ListGroups: every group, filtered by state (v4+) and type (v5+)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.LIST_GROUPS, 0, 5)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    error, groups = services.groups.list_groups(tuple(getattr(request, "states_filter", ()) or ()),
                                                tuple(getattr(request, "types_filter", ()) or ()))
    auth = services.authorizer
    if auth is not None and not auth.authorize_cluster(ctx, AclOperation.DESCRIBE, log_if_denied=False):
        # KafkaApis: DESCRIBE on the cluster lists every group; otherwise those the principal may DESCRIBE.
        groups = [g for g in groups
                  if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g["group_id"], log_if_denied=False)]
    return {"throttle_time": 0, "error_code": error, "groups": groups}
