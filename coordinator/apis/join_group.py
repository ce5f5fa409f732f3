"""JoinGroup: a member joins a classic group, or rejoins it for a rebalance."""

from __future__ import annotations

from typing import Any

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode, ProtocolError
from groupcoord.protocol.fast_codecs import JOIN_GROUP, JoinGroupRequestView, read_join_group
from groupcoord.protocol.sliced_requests import JoinGroupSlices
from groupcoord.protocol.values import as_ms, as_str

from ..groups.classic.responses import join_error
from ..groups.requests import JoinGroup
from ..security.acl_codes import AclOperation, ResourceType
from ..server.dispatch import CLOSE_CONNECTION, HeavyRequest, Lane, RequestContext, owed_answer_lane
from .api import Api
from .heavy_requests import trim_later, turn
from .requests import client_host, member_host
from .services import Services

FAST = JOIN_GROUP  # the flexible versions are read and answered without kio's entities (checked against kio)
API = Api(ApiKey.JOIN_GROUP, 0, 9)

SLICE_PROTOCOLS = 2000
"""Protocols read per turn of the event loop by ``handle_heavy``."""

log = structlog.get_logger("groupcoord.join_group")

NULLABLE_PROTOCOL_VERSION = 7


def join_request(ctx: RequestContext, r: Any) -> JoinGroup:
    if type(r) is JoinGroupRequestView:  # the fast reader's: plain str, int and bytes already, every field there
        return _request(ctx, r.group_id, r.member_id, r.protocol_type, tuple((p.name, p.metadata) for p in r.protocols),
                        r.session_timeout, r.rebalance_timeout, r.group_instance_id, r.reason)
    return _request(ctx, as_str(r.group_id), as_str(r.member_id), as_str(r.protocol_type),
                    tuple((p.name, bytes(p.metadata)) for p in r.protocols), as_ms(r.session_timeout),
                    as_ms(getattr(r, "rebalance_timeout", r.session_timeout)), getattr(r, "group_instance_id", None),
                    getattr(r, "reason", None))


def _request(ctx: RequestContext, group_id: str, member_id: str, protocol_type: str,
             protocols: tuple[tuple[str, bytes], ...], session: int, rebalance: int, group_instance_id: str | None,
             reason: str | None) -> JoinGroup:
    return group_join(ctx.api_version, ctx.client_id, client_host(ctx), group_id, member_id, protocol_type, protocols,
                      session, rebalance, group_instance_id, reason)


def group_join(version: int, client_id: str | None, host: str, group_id: str, member_id: str, protocol_type: str,
               protocols: tuple[tuple[str, bytes], ...], session: int, rebalance: int, group_instance_id: str | None,
               reason: str | None) -> JoinGroup:
    """The group service's request, from the handler's reading or the lane's (``host`` as ``client_host``
    gives it)."""
    if version == 0 or rebalance < 0:
        rebalance = session  # JoinGroup v0 has no rebalance timeout: Kafka uses the session timeout
    # Positional, in the fields' order: a class called with keywords is handed a dict of them (every JoinGroup).
    return JoinGroup(group_id, member_id, protocol_type, protocols, session, rebalance, group_instance_id,
                     client_id or "", host, reason, version)


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """From v7 (nothing left to do to the answer): the group service's future itself, which the connection
    waits on directly, with no task per JoinGroup (most are answered at once: MEMBER_ID_REQUIRED, or the
    join that completes the phase), or the authorization error. Below v7, `_answer`'s coroutine."""
    req = join_request(ctx, request)
    if ctx.api_version < NULLABLE_PROTOCOL_VERSION:
        return _answer(services, ctx, req)
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return join_error("", ErrorCode.group_authorization_failed)  # as _answer: asked once, answered at once
    return services.groups.join_group(req)


async def _answer(services: Services, ctx: RequestContext, req: JoinGroup) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        response = join_error("", ErrorCode.group_authorization_failed)  # JoinGroupRequest.getErrorResponse
    else:
        response = await services.groups.join_group(req)
    if ctx.api_version < NULLABLE_PROTOCOL_VERSION and response["protocol_name"] is None:
        response = {**response, "protocol_name": ""}  # not nullable before v7: Kafka sends ""
    return response


async def handle_heavy(services: Services, ctx: RequestContext, request: HeavyRequest) -> Any:
    """A very large JoinGroup (many protocols, or large metadata): its protocols are read ``SLICE_PROTOCOLS``
    at a time with the event loop handed back in between (heavy requests taking turns), instead of kio's
    reader, the bounds walk before it and the conversion after it each walking all of them in one call.
    The whole body is read before the group sees anything; a malformed one closes the connection."""
    try:
        reader = JoinGroupSlices(request.frame, request.body_offset, ctx.api_version)
        protocols: list[tuple[str, bytes]] = []
        slices = reader.protocols(SLICE_PROTOCOLS)
        more = True
        while more:
            async with turn():
                taken = next(slices, None)
                if taken is None:
                    more = False
                else:
                    protocols.extend(taken)
    except ProtocolError as exc:
        log.warning("closing connection", reason="undecodable request", api="JoinGroup",
                    api_version=ctx.api_version, peer=ctx.client_host, connection=ctx.connection_id, error=str(exc))
        return CLOSE_CONNECTION
    req = _request(ctx, reader.group_id, reader.member_id, reader.protocol_type, tuple(protocols),
                   reader.session_timeout_ms, reader.rebalance_timeout_ms, reader.group_instance_id, reader.reason)
    del protocols, reader
    try:
        return await _answer(services, ctx, req)
    finally:
        trim_later()


HEAVY = handle_heavy


LANE_VERSIONS = range(NULLABLE_PROTOCOL_VERSION, 10)
"""From v7 `handle` returns the group service's answer as it is (below, `_answer` mends it): the lane's."""


def lane(services: Services) -> Lane | None:
    """The frame loop's own way for a dynamic member's JoinGroup v7-v9 (every one a group forming sends: the
    member-id round, the join, a rejoin): read from the frame into the group service's request and handed
    to the service with an ``OwedAnswer`` for its reply, owed in request order and written, as the handler's
    answer would be, once the shard gives it (at once, or when the join phase completes) — no request
    context, handler call, future or done-callback. With an authorizer, only while it allows everything
    (READ on the group is then granted). A static member (KIP-345), a frame the fast reader declines or a
    very large one (its heavy handler's) are left to `handle`."""
    make_join = getattr(services.groups, "join_lane", None)
    if make_join is None:  # a stand-in group service (tests of other parts): the handler only
        return None

    def request_of(frame: bytes, version: int, connection: Any) -> tuple[str | None, JoinGroup] | None:
        read = read_join_group(frame, version)
        if read is None or read[5] is not None:  # declined by the fast reader, or a static member
            return None
        client_id, group_id, session, rebalance, member_id, _, protocol_type, protocols, reason = read
        return client_id, group_join(version, client_id, member_host(connection.peer), group_id, member_id,
                                     protocol_type, protocols, session, rebalance, None, reason)

    return owed_answer_lane(API.key, LANE_VERSIONS, JOIN_GROUP, services.authorizer, request_of, make_join())
