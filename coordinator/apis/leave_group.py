"""LeaveGroup: one member (before v3) or a batch of members (v3+, KIP-345) leave a classic group."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.lazy_requests import LeaveGroup, LeavingMember
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.LEAVE_GROUP, 0, 5)


def leave_request(ctx: RequestContext, r: Any) -> LeaveGroup:
    if hasattr(r, "members"):
        members = tuple(LeavingMember(as_str(m.member_id), m.group_instance_id, getattr(m, "reason", None))
                        for m in r.members)
    else:
        members = (LeavingMember(as_str(r.member_id)),)
    return LeaveGroup(as_str(r.group_id), members, ctx.api_version)


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed, "members": []}
    return services.groups.leave_group(leave_request(ctx, request))
