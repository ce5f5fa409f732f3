"""Heartbeat: a classic group member says it is alive and learns whether a rebalance is under way."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import HEARTBEAT, heartbeat_ok_parts, read_heartbeat_at
from groupcoord.protocol.values import as_str

from ..groups.requests import Heartbeat
from ..security.acl_codes import AclOperation, ResourceType
from ..server.dispatch import Lane, RequestContext
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


def lane(services: Services) -> Lane | None:
    """The frame loop's own answer to the commonest heartbeat (a dynamic member of a Stable group, at its
    generation, in a loaded shard with no write pending): read in place, the session extended, and the
    pre-encoded NONE answer around the request's correlation id bytes. With an authorizer, only while it
    allows everything (no ACL and ``allow.everyone.if.no.acl.found``: READ on the group is then granted).
    Anything else returns None and `handle` judges it, errors included."""
    make_beat = getattr(services.groups, "heartbeat_lane", None)
    if make_beat is None:  # a stand-in group service (tests of other parts): the handler only
        return None
    beat = make_beat()
    auth = services.authorizer
    answers = [heartbeat_ok_parts(version) for version in HEARTBEAT.versions]

    def answer(data: bytes, start: int, end: int) -> bytes | None:
        if auth is not None and not auth.allows_everything():
            return None
        read = read_heartbeat_at(data, start, end)
        if read is None or read[4] is not None or not beat(read[1], read[2], read[3]):
            return None
        prefix, tail = answers[data[start + 3]]
        return prefix + data[start + 4:start + 8] + tail

    return Lane(API.key, HEARTBEAT.versions, answer)
