"""SyncGroup: the leader hands out the assignment; every member receives its own."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import SYNC_GROUP, SyncGroupRequestView, read_sync_group
from groupcoord.protocol.values import as_str

from ..groups.classic.responses import sync_error
from ..groups.requests import SyncGroup
from ..security.acl_codes import AclOperation, ResourceType
from ..server.dispatch import Lane, RequestContext, owed_answer_lane
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


def lane(services: Services) -> Lane | None:
    """The frame loop's own way for a dynamic member's SyncGroup v4-v5 (the leader's with the assignment, a
    follower's): read from the frame into the group service's request and handed to the service with an
    ``OwedAnswer`` for its reply, owed in request order and written, as the handler's answer would be, once
    the shard gives it (the leader's once the group's record is durable, a follower's with the leader's or at
    once) — no request context, handler call, future or done-callback. With an authorizer, only while it
    allows everything (READ on the group is then granted). A static member, a frame the fast reader declines
    or a very large one are left to `handle`."""
    make_sync = getattr(services.groups, "sync_lane", None)
    if make_sync is None:  # a stand-in group service (tests of other parts): the handler only
        return None

    def request_of(frame: bytes, version: int, _connection: Any) -> tuple[str | None, SyncGroup] | None:
        read = read_sync_group(frame, version)
        if read is None or read[4] is not None:  # declined by the fast reader, or a static member
            return None
        client_id, group_id, generation, member_id, _, protocol_type, protocol_name, assignments = read
        return client_id, SyncGroup(group_id, generation, member_id, assignments, None, protocol_type, protocol_name,
                                    version)

    return owed_answer_lane(API.key, SYNC_GROUP.versions, SYNC_GROUP, services.authorizer, request_of, make_sync())
