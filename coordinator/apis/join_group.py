"""JoinGroup: a member joins a classic group, or rejoins it for a rebalance."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_ms, as_str

from ..groups.classic.responses import join_error
from ..groups.requests import JoinGroup
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import client_host
from .services import Services

API = Api(ApiKey.JOIN_GROUP, 0, 9)

NULLABLE_PROTOCOL_VERSION = 7


def join_request(ctx: RequestContext, r: Any) -> JoinGroup:
    session = as_ms(r.session_timeout)
    rebalance = as_ms(getattr(r, "rebalance_timeout", session))
    if ctx.api_version == 0 or rebalance < 0:
        rebalance = session  # JoinGroup v0 has no rebalance timeout: Kafka uses the session timeout
    return JoinGroup(
        group_id=as_str(r.group_id),
        member_id=as_str(r.member_id),
        protocol_type=as_str(r.protocol_type),
        protocols=tuple((p.name, bytes(p.metadata)) for p in r.protocols),
        session_timeout_ms=session,
        rebalance_timeout_ms=rebalance,
        group_instance_id=getattr(r, "group_instance_id", None),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        reason=getattr(r, "reason", None),
        version=ctx.api_version,
    )


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
        response = join_error("", ErrorCode.group_authorization_failed)  # JoinGroupRequest.getErrorResponse
    else:
        response = await services.groups.join_group(join_request(ctx, request))
    if ctx.api_version < NULLABLE_PROTOCOL_VERSION and response["protocol_name"] is None:
        response = {**response, "protocol_name": ""}  # not nullable before v7: Kafka sends ""
    return response
