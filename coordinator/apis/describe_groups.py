"""DescribeGroups: state, protocol and members of classic (and consumer) groups."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.admin import described_error
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .authz import GROUP_DENIED
from .operations import group_operations
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_GROUPS, 0, 6)


AUTHORIZED_OPERATIONS_VERSION = 3


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, the groups without DESCRIBE answer GROUP_AUTHORIZATION_FAILED (first, as
    KafkaApis adds them first) and are not looked up."""
    names = [as_str(g) for g in request.groups]
    include = bool(getattr(request, "include_authorized_operations", False))
    auth = services.authorizer
    denied: list[dict] = []
    if auth is not None:
        allowed = [g for g in names if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, g)]
        denied = [{**described_error(g, ErrorCode.group_authorization_failed), "error_message": GROUP_DENIED}
                  for g in names if g not in allowed]
        names = allowed
    groups = await services.groups.describe_groups(names, include_authorized_operations=include,
                                                   version=ctx.api_version) if names else []
    if include and ctx.api_version >= AUTHORIZED_OPERATIONS_VERSION:
        groups = [{**g, "authorized_operations": group_operations(auth, ctx, g["group_id"])}
                  if g["error_code"] == ErrorCode.none else g for g in groups]
    return {"throttle_time": 0, "groups": denied + list(groups)}
