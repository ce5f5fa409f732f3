"""SyncGroup: the leader hands out the assignment; every member receives its own."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import SYNC_GROUP, SyncGroupRequestView
from groupcoord.protocol.values import as_str

from ..groups.classic.responses import sync_error
from ..groups.requests import SyncGroup
from ..security.acl_codes import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

FAST = SYNC_GROUP  # the flexible versions are read and answered without kio's entities (checked against kio)
API = Api(ApiKey.SYNC_GROUP, 0, 5)


def sync_request(ctx: RequestContext, r: Any) -> SyncGroup:
    if type(r) is SyncGroupRequestView:  # the fast reader's: plain str, int and bytes already, every field there
        return SyncGroup(r.group_id, r.generation_id, r.member_id, tuple((a.member_id, a.assignment) for a in r.assignments),
                         r.group_instance_id, r.protocol_type, r.protocol_name, ctx.api_version)
    return SyncGroup(
        group_id=as_str(r.group_id),
        generation_id=int(r.generation_id),
        member_id=as_str(r.member_id),
        assignments=tuple((a.member_id, bytes(a.assignment)) for a in r.assignments),
        group_instance_id=getattr(r, "group_instance_id", None),
        protocol_type=getattr(r, "protocol_type", None),
        protocol_name=getattr(r, "protocol_name", None),
        version=ctx.api_version,
    )


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
        return sync_error(ErrorCode.group_authorization_failed)
    return services.groups.sync_group(sync_request(ctx, request))
