"""Heartbeat: a classic group member says it is alive and learns whether a rebalance is under way."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import HEARTBEAT, HeartbeatMembers, heartbeat_ok_parts
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
    """The frame loop's own answer to the commonest heartbeats (a dynamic member of a Stable group, at its
    generation, in a loaded shard with no write pending): read in place, the session extended, and the
    pre-encoded NONE answer around the request's correlation id bytes. With an authorizer, only while it
    allows everything (no ACL and ``allow.everyone.if.no.acl.found``: READ on the group is then granted).
    Whatever it does not answer, the handler judges (`handle`), errors included.

    It answers a run of frames, not one (``Lane``): the heartbeats of one version that follow each other in
    one read, until one it declines, so the frame loop calls it once per run, the wall clock is read once per
    run (the frames of one read arrived together: each session is extended from the time of the read), and a
    member's repeated request is read once (``HeartbeatMembers``)."""
    make_beat = getattr(services.groups, "heartbeat_lane", None)
    if make_beat is None:  # a stand-in group service (tests of other parts): the handler only
        return None
    beat, wall_ms = make_beat()
    auth = services.authorizer
    answers = [heartbeat_ok_parts(version) for version in HEARTBEAT.versions]
    members = [HeartbeatMembers(version) for version in HEARTBEAT.versions]

    def answer(data: bytes, bounds: list[int], i: int, out: list[bytes]) -> int:
        if auth is not None and not auth.allows_everything():
            return i
        start = bounds[i]
        key = data[start:start + 4]  # the frame loop matched it: key 12, a version 0-4
        version = key[3]
        prefix, tail = answers[version]
        known = members[version]
        now = wall_ms()
        count = len(bounds)
        while True:
            body = data[start + 8:bounds[i + 1]]  # the request past its correlation id
            member = known.get(body)
            fresh = member is None
            if fresh:  # the member's first heartbeat at this generation (or one left to the handler)
                member = known.read(body)
                if member is None:
                    return i
            if not beat(member[0], member[1], member[2], now):
                return i
            if fresh:
                known.remember(body, member)
            out.append(prefix + data[start + 4:start + 8] + tail)
            i += 2
            if i == count:
                return i
            start = bounds[i]
            if data[start:start + 4] != key:
                return i

    return Lane(API.key, HEARTBEAT.versions, answer)
