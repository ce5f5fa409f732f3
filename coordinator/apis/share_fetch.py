"""ShareFetch (KIP-932): acquire records for a share-group member, in its share session, with piggy-backed
acknowledgements and a long poll (Kafka's KafkaApis.handleShareFetchRequest and DelayedShareFetch).

Order as Kafka: READ on the group (else GROUP_AUTHORIZATION_FAILED for the whole request), acknowledgements
at epoch 0 are an INVALID_REQUEST, the share session (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH,
SHARE_SESSION_LIMIT_REACHED), then the acknowledgements, then acquisition over every partition of the
session, waiting up to max_wait_ms for records to become acquirable (an append, a release, a lock expiry
wakes it). Epoch -1 closes the session: its acknowledgements are applied, what the member still holds in
the session's partitions is released, and nothing is fetched. ``is_renew_ack`` (v2) only acknowledges.
"""

from __future__ import annotations

import uuid
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_ms

from ..dataplane.fetch_purgatory import WakeReason
from ..server.dispatch import RequestContext
from ..share.sessions import FINAL_EPOCH, INITIAL_EPOCH
from .api import Api
from .services import Services
from .share_common import NO_LEADER, apply_acks, group_and_member, group_denied, read_acks, topic_errors

API = Api(ApiKey.SHARE_FETCH, 1, 2)


def _error(code: ErrorCode, lock_ms: int = 0, message: str | None = None) -> dict:
    return {"throttle_time": 0, "error_code": code, "error_message": message, "acquisition_lock_timeout": lock_ms,
            "responses": [], "node_endpoints": []}


def _partition(index: int) -> dict:
    return {"partition_index": index, "error_code": ErrorCode.none, "error_message": None,
            "acknowledge_error_code": ErrorCode.none, "acknowledge_error_message": None,
            "current_leader": NO_LEADER, "records": b"", "acquired_records": []}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    manager = services.share_partitions
    if manager is None:
        return _error(ErrorCode.unsupported_version)
    group_id, member_id = group_and_member(request)
    if request.group_id is None:
        return _error(ErrorCode.invalid_request, 0, "Invalid group id in the request.")
    if group_denied(services, ctx, group_id):
        return _error(ErrorCode.group_authorization_failed)
    lock_ms = manager.lock_duration_ms(group_id)
    epoch = int(request.share_session_epoch)
    if not member_id or len(member_id) > 36:
        return _error(ErrorCode.invalid_request, lock_ms, "Invalid member id in the request.")
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    if epoch == INITIAL_EPOCH and has_acks:
        return _error(ErrorCode.invalid_request, lock_ms, "Acknowledge data present in initial fetch request")
    renew = bool(getattr(request, "is_renew_ack", False))
    if renew and (request.max_bytes or request.min_bytes or getattr(request, "max_records", 0) or as_ms(request.max_wait)):
        return _error(ErrorCode.invalid_request, lock_ms, "maxBytes, minBytes, maxRecords and maxWaitMs must be set "
                                                          "to 0 if isRenewAck is true.")
    wanted = [(t.topic_id, int(p.partition_index)) for t in request.topics for p in t.partitions]
    forget = [(t.topic_id, int(p)) for t in request.forgotten_topics_data for p in t.partitions]
    use = manager.sessions.for_fetch(group_id, member_id, epoch, ctx.connection_id,
                                     [] if epoch == FINAL_EPOCH else wanted, forget)
    if use.error is not None:
        return _error(use.error, lock_ms)
    session = use.session
    entries: dict[tuple[uuid.UUID, int], dict] = {}

    def entry(tp: tuple[uuid.UUID, int]) -> dict:
        if tp not in entries:
            entries[tp] = _partition(tp[1])
        return entries[tp]

    topics = {tid for tid, _ in wanted} | {tid for tid, _ in session.partitions}
    denied = topic_errors(services, ctx, topics)
    acks = {}
    for t in request.topics:
        for p in t.partitions:
            if not p.acknowledgement_batches:
                continue
            tp = (t.topic_id, int(p.partition_index))
            if t.topic_id in denied:
                entry(tp)["acknowledge_error_code"] = denied[t.topic_id]
                continue
            batches, error = read_acks(p, renew_allowed=ctx.api_version >= 2 and renew)
            if error is not None:
                entry(tp)["acknowledge_error_code"] = error
            else:
                acks[tp] = batches
    for tp, code in (await apply_acks(services, group_id, member_id, acks)).items():
        entry(tp)["acknowledge_error_code"] = code
    if use.final:
        await manager.release_member(group_id, member_id, list(session.partitions))
    elif not renew:
        await _fetch(services, request, group_id, member_id, list(session.partitions), denied, entry)
    responses: dict[uuid.UUID, list[dict]] = {}
    for (tid, _p), e in entries.items():
        responses.setdefault(tid, []).append(e)
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "acquisition_lock_timeout": lock_ms,
            "responses": [{"topic_id": tid, "partitions": parts} for tid, parts in responses.items()],
            "node_endpoints": []}


async def _fetch(services: Services, request: Any, group_id: str, member_id: str, partitions: list,
                 denied: dict, entry: Any) -> None:
    manager = services.share_partitions
    dataplane = services.dataplane
    clock = dataplane.clock
    readable = []
    for tid, p in partitions:
        if tid in denied:
            entry((tid, p))["error_code"] = denied[tid]
        else:
            readable.append((tid, p))
    if not readable:
        return
    max_wait = max(0, as_ms(request.max_wait))
    min_bytes = max(1, int(request.min_bytes))
    deadline = clock.monotonic_ms() + max_wait
    max_records = int(getattr(request, "max_records", 500)) or 500
    while True:
        budget_records = max_records
        budget_bytes = int(request.max_bytes) if int(request.max_bytes) > 0 else 2**31 - 1
        total = 0
        keys = []
        for tid, p in readable:
            if budget_records <= 0 or budget_bytes <= 0:
                break
            got = await manager.acquire(group_id, member_id, tid, p, budget_records, budget_bytes,
                                        record_limit=int(getattr(request, "share_acquire_mode", 0)) == 1)
            if got.error != ErrorCode.none:
                entry((tid, p))["error_code"] = got.error
                continue
            topic = dataplane.topics.by_id(tid)
            if topic is not None:
                keys.append((topic.name, p))
            if got.acquired:
                e = entry((tid, p))
                e["records"] = got.records
                e["acquired_records"] = [{"first_offset": a.first_offset, "last_offset": a.last_offset,
                                          "delivery_count": a.delivery_count} for a in got.acquired]
                budget_records -= sum(a.last_offset - a.first_offset + 1 for a in got.acquired)
                budget_bytes -= len(got.records)
                total += len(got.records)
        if total >= min_bytes or total > 0 or not keys or clock.monotonic_ms() >= deadline:
            return
        reason = await dataplane.purgatory.park(keys, deadline)
        if reason is WakeReason.SHUTDOWN:
            return
