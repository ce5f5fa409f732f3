"""OffsetCommit: a group's committed positions.

v10 names topics by id (KIP-848), which this coordinator does not serve; kio has no v0-1.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.encode import EncodedBody
from groupcoord.protocol.errors import ErrorCode, ProtocolError
from groupcoord.protocol.fast_codecs import (
    OFFSET_COMMIT, OffsetCommitRequestView, lane_memory, offset_commit_ok_frame, offset_commit_ok_parts,
    read_offset_commit_lane_at,
)
from groupcoord.protocol.registry import api_name
from groupcoord.protocol.sliced_requests import OffsetCommitAnswer, OffsetCommitSlices
from groupcoord.protocol.values import as_ms, as_str

from ..groups.requests import CommitPartition, OffsetCommit
from ..security.acl_codes import AclOperation, ResourceType
from ..server.dispatch import CLOSE_CONNECTION, HEAVY_REQUEST_BYTES, HeavyRequest, Lane, RequestContext
from .api import Api
from .heavy_requests import trim_later, turn
from .services import Services

FAST = OFFSET_COMMIT  # the common versions are read and answered without kio's entities (checked against kio)
API = Api(ApiKey.OFFSET_COMMIT, 2, 9)

SLICE_PARTITIONS = 1000
"""Partitions read, committed and answered per turn of the event loop by ``handle_heavy`` (a few ms)."""

log = structlog.get_logger("groupcoord.offset_commit")


def commit_request(ctx: RequestContext, r: Any) -> OffsetCommit:
    if type(r) is OffsetCommitRequestView:  # the fast reader's: fields already plain ints and strings
        retention = r.retention_time
        return OffsetCommit(
            r.group_id,
            tuple([(t.name, tuple([CommitPartition(p.partition_index, p.committed_offset, p.committed_leader_epoch,
                                                   p.committed_metadata) for p in t.partitions]))
                   for t in r.topics]),  # list comprehensions: a generator costs a frame per topic
            r.generation_id_or_member_epoch, r.member_id, r.group_instance_id,
            -1 if retention is None else retention, ctx.api_version)
    retention = getattr(r, "retention_time", None)
    return OffsetCommit(
        group_id=as_str(r.group_id),
        topics=tuple(
            (
                t.name,
                tuple(
                    CommitPartition(
                        int(p.partition_index),
                        int(p.committed_offset),
                        int(getattr(p, "committed_leader_epoch", -1)),
                        p.committed_metadata,
                    )
                    for p in t.partitions
                ),
            )
            for t in r.topics
        ),
        generation_id=int(r.generation_id_or_member_epoch),
        member_id=as_str(r.member_id),
        group_instance_id=getattr(r, "group_instance_id", None),
        retention_time_ms=-1 if retention is None else as_ms(retention),
        version=ctx.api_version,
    )


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    auth = services.authorizer
    if auth is None:
        return services.groups.commit_offsets(commit_request(ctx, request))
    return _authorized_commit(services, auth, ctx, request)


def _denied_topics(topics: Any, names: set[str] | None = None) -> list[dict]:
    return [{"name": t.name, "partitions": [{"partition_index": int(p.partition_index),
                                             "error_code": ErrorCode.topic_authorization_failed}
                                            for p in t.partitions]}
            for t in topics if names is None or t.name in names]


async def _authorized_commit(services: Services, auth: Any, ctx: RequestContext, request: Any) -> dict:
    """KafkaApis: READ on the group (else the whole answer is GROUP_AUTHORIZATION_FAILED), then READ on
    each topic; the partitions of the others answer TOPIC_AUTHORIZATION_FAILED and are not committed."""
    group_id = as_str(request.group_id)
    if not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, group_id):
        return {"throttle_time": 0, "topics": [
            {"name": t.name, "partitions": [{"partition_index": int(p.partition_index),
                                             "error_code": ErrorCode.group_authorization_failed}
                                            for p in t.partitions]} for t in request.topics]}
    allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    denied = {t.name for t in request.topics} - allowed
    if not denied:
        return await services.groups.commit_offsets(commit_request(ctx, request))
    errors = _denied_topics(request.topics, denied)
    req = commit_request(ctx, request)
    kept = tuple((name, parts) for name, parts in req.topics if name in allowed)
    if not kept:
        return {"throttle_time": 0, "topics": errors}
    response = await services.groups.commit_offsets(replace(req, topics=kept))
    return {**response, "topics": errors + list(response["topics"])}


async def handle_heavy(services: Services, ctx: RequestContext, request: HeavyRequest) -> Any:
    """A very large OffsetCommit (the dispatcher's HEAVY_REQUEST_BYTES or more: tens of thousands of
    partitions), read, committed and answered ``SLICE_PARTITIONS`` at a time with the event loop handed back
    in between, so that other clients' requests (a heartbeat on another connection) are served meanwhile and
    only one slice of Python objects is alive at once. The body is first checked whole, slice by slice, so
    a malformed request commits nothing (the connection is closed, as a request kio could not read).

    Each slice is one commit on the group's shard, answered once durable; the answer is the same as the
    ordinary path's, partition for partition. What differs: the slices are separate operations, so the
    group is checked for each slice (a member fenced half-way has the rest of its partitions refused) and
    another request on the same shard may run between two slices."""
    try:
        reader = OffsetCommitSlices(request.frame, request.body_offset, ctx.api_version)
        checking = reader.slices(SLICE_PARTITIONS, build=False)
        more = True
        while more:
            async with turn():
                more = next(checking, None) is not None
    except ProtocolError as exc:
        log.warning("closing connection", reason="undecodable request", api="OffsetCommit",
                    api_version=ctx.api_version, peer=ctx.client_host, connection=ctx.connection_id, error=str(exc))
        return CLOSE_CONNECTION
    head = reader.head
    answer = OffsetCommitAnswer(ctx.api_version, reader.topic_count)
    auth = services.authorizer
    group_allowed = auth is None or auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, head.group_id)
    topic_error: ErrorCode | None = None
    current = -1
    slices = reader.slices(SLICE_PARTITIONS)
    while True:
        async with turn():
            taken = next(slices, None)
            if taken is None:
                break
            position, name, count, entries = taken
            if position != current:
                current = position
                answer.topic(name, count)
                topic_error = None
                if not group_allowed:
                    topic_error = ErrorCode.group_authorization_failed
                elif auth is not None and not auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC,
                                                                     (name,)):
                    topic_error = ErrorCode.topic_authorization_failed
            if not entries:
                continue
            if topic_error is not None:
                answer.partitions([(e[0], topic_error) for e in entries])
                continue
            committed = services.groups.commit_offsets(OffsetCommit(
                group_id=head.group_id,
                topics=((name, tuple(CommitPartition(*e) for e in entries)),),
                generation_id=head.generation_id_or_member_epoch,
                member_id=head.member_id,
                group_instance_id=head.group_instance_id,
                retention_time_ms=head.retention_time_ms,
                version=ctx.api_version,
            ))
            del taken, entries
        response = await committed  # durable (or failed) before the next slice: memory stays one slice
        for topic in response["topics"]:
            answer.partitions([(p["partition_index"], p["error_code"]) for p in topic["partitions"]])
    trim_later()
    return EncodedBody(answer.body())


HEAVY = handle_heavy


LANE_VERSIONS = range(8, 10)  # what current clients send (read_offset_commit_at reads these)


def _answer(topics: list) -> dict:
    return {"throttle_time": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": p[0], "error_code": ErrorCode.none} for p in parts]}
        for name, parts in topics]}


_ONE_PARTITION: dict[tuple[str, int], tuple[dict, tuple[bytes, bytes] | None]] = {}
"""(topic, partition) -> the handler's answer to an accepted commit of that partition alone, and the
successful answer's bytes around the correlation id (``offset_commit_ok_parts``). The runtime copies, never
changes, a response (should the write fail), so one answer serves every commit of the partition."""
_API_NAME = api_name(ApiKey.OFFSET_COMMIT)
_NOT_DONE = False.__bool__  # (called: False)
_DONE = True.__bool__


class _LaneReply:
    """A lane commit's owed answer, answered by the group runtime as it answers a future: ``response`` (the
    handler's answer, every partition NONE) once the records are durable, else the same with errors."""

    __slots__ = ("connection", "slot", "correlation", "version", "topics", "response", "ok", "started", "observer",
                 "done")

    def __init__(self, connection: Any, correlation: bytes, version: int, topics: list, response: dict,
                 ok: tuple[bytes, bytes] | None, started: float, observer: Any) -> None:
        self.connection = connection
        self.slot: Any = None
        self.correlation = correlation
        self.version = version
        self.topics = topics
        self.response = response
        self.ok = ok
        self.started = started
        self.observer = observer
        # done(): False until set_result, then True (nothing else answers the slot). A C callable, not a
        # method: the runtime asks it of every reply it releases, and a Python call each was ~0.3 % of a commit.
        self.done = _NOT_DONE

    def set_result(self, response: dict) -> None:
        self.done = _DONE
        if response is self.response:
            ok = self.ok
            payload = (ok[0] + self.correlation + ok[1] if ok is not None
                       else offset_commit_ok_frame(self.correlation, self.topics))
        else:  # the write failed or timed out: the same answer with its errors, as the handler's would be
            correlation_id = int.from_bytes(self.correlation, "big", signed=True)
            payload = OFFSET_COMMIT.write(self.version, correlation_id, response)
            if payload is None:
                ctx = RequestContext(API.key, self.version, correlation_id, None, self.connection.peer,
                                     self.connection.id)
                payload = self.connection.server.dispatcher._encode(ctx, response)
        observer = self.observer
        if observer is not None:  # as Dispatcher._observe: no top-level error, the time since the request was read
            observer.observe_request(_API_NAME, 0, time.perf_counter() - self.started)
        self.connection.answer_later(self.slot, payload)


def lane(services: Services) -> Lane | None:
    """The frame loop's own way for the commonest commit (v8-v9, every partition accepted: a standalone
    commit, or a member's at its generation): read in place, checked and applied by the shard
    (``commit_lane``), its records queued for the shard's next append with the answer owed in request
    order and written, pre-encoded, once they are durable — no request object, no future, no encoder. With
    an authorizer, only while it allows everything (READ on the group and the topics is then granted).
    Anything else is left to `handle`, errors included."""
    make_commit = getattr(services.groups, "commit_lane", None)
    if make_commit is None:  # a stand-in group service (tests of other parts): the handler only
        return None
    commit = make_commit()
    auth = services.authorizer
    perf_counter = time.perf_counter
    one_partition = _ONE_PARTITION
    last_read = lane_memory()  # what the last frames read as (read_offset_commit_lane_at)

    def answer(connection: Any, data: bytes, start: int, end: int) -> bool:
        if (auth is not None and not auth.allows_everything()) or end - start >= HEAVY_REQUEST_BYTES:
            return False
        read = read_offset_commit_lane_at(data, start, end, last_read)
        if read is None:
            return False
        (_, group_id, generation, member_id, instance), topics = read
        version = data[start + 3]
        # The answer, looked up (built, for a partition not seen yet) before the commit: the shard queues it
        # with the records. Only an accepted commit's is remembered.
        cached = None
        if len(topics) == 1 and len(topics[0][1]) == 1:
            key = (topics[0][0], topics[0][1][0][0])
            cached = one_partition.get(key)
            if cached is None:
                response, ok = _answer(topics), offset_commit_ok_parts(*key)
            else:
                response, ok = cached
        else:
            response, ok = _answer(topics), None
        reply = _LaneReply(connection, data[start + 4:start + 8], version, topics, response, ok, perf_counter(),
                           connection.server.dispatcher.observer)
        if not commit(group_id, generation, member_id, instance, version, topics, reply, response):
            return False
        if cached is None and ok is not None and len(one_partition) < 4096:
            one_partition[key] = (response, ok)
        reply.slot = connection.owe()
        return True

    return Lane(API.key, LANE_VERSIONS, answer, deferred=True)
