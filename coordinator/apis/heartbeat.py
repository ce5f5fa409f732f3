"""Heartbeat: a classic group member says it is alive and learns whether a rebalance is under way."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import HEARTBEAT
from groupcoord.protocol.values import as_str

from ..groups.requests import Heartbeat
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

FAST = HEARTBEAT  # the common versions are read and answered without kio's entities (checked against kio)
API = Api(ApiKey.HEARTBEAT, 0, 4)


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """Returns the answer itself when the shard knows it at once (nearly always), else its future. READ on
    the group is checked first when an authorizer is configured (GROUP_AUTHORIZATION_FAILED)."""
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
        return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed}
    req = Heartbeat(as_str(request.group_id), int(request.generation_id), as_str(request.member_id),
                    getattr(request, "group_instance_id", None))
    return services.groups.heartbeat_inline(req)
