"""ShareAcknowledge (KIP-932): acknowledge acquired records outside a fetch — ACCEPT, RELEASE, REJECT, and
(v2, KIP-1222, ``is_renew_ack``) RENEW — within the member's share session (epoch 0 cannot open one:
INVALID_SHARE_SESSION_EPOCH; -1 closes it and releases what the member still holds)."""

from __future__ import annotations

import uuid
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .share_common import NO_LEADER, apply_acks, group_and_member, group_denied, read_acks, topic_errors

API = Api(ApiKey.SHARE_ACKNOWLEDGE, 1, 2)


def _error(code: ErrorCode, lock_ms: int = 0) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": None, "acquisition_lock_timeout": lock_ms,
            "responses": [], "node_endpoints": []}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    manager = services.share_partitions
    if manager is None:
        return _error(ErrorCode.unsupported_version)
    group_id, member_id = group_and_member(request)
    if group_denied(services, ctx, group_id):
        return _error(ErrorCode.group_authorization_failed)
    lock_ms = manager.lock_duration_ms(group_id)
    if not member_id or not group_id:
        return _error(ErrorCode.invalid_request, lock_ms)
    use = manager.sessions.for_acknowledge(group_id, member_id, int(request.share_session_epoch))
    if use.error is not None:
        return _error(use.error, lock_ms)
    renew = ctx.api_version >= 2 and bool(getattr(request, "is_renew_ack", False))
    denied = topic_errors(services, ctx, {t.topic_id for t in request.topics})
    results: dict[tuple[uuid.UUID, int], ErrorCode] = {}
    acks = {}
    for t in request.topics:
        for p in t.partitions:
            tp = (t.topic_id, int(p.partition_index))
            if t.topic_id in denied:
                results[tp] = denied[t.topic_id]
                continue
            batches, error = read_acks(p, renew_allowed=renew)
            if error is not None:
                results[tp] = error
            else:
                acks[tp] = batches
    results.update(await apply_acks(services, group_id, member_id, acks))
    if use.final:
        await manager.release_member(group_id, member_id, list(use.session.partitions))
    responses: dict[uuid.UUID, list[dict]] = {}
    for (tid, p), code in results.items():
        responses.setdefault(tid, []).append({"partition_index": p, "error_code": code, "error_message": None,
                                              "current_leader": NO_LEADER})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "acquisition_lock_timeout": lock_ms,
            "responses": [{"topic_id": tid, "partitions": parts} for tid, parts in responses.items()],
            "node_endpoints": []}
