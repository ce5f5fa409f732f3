"""OffsetCommit: a group's committed positions.

v10 names topics by id (KIP-848), which this coordinator does not serve; kio has no v0-1.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.fast_codecs import OFFSET_COMMIT
from groupcoord.protocol.values import as_ms, as_str

from ..groups.requests import CommitPartition, OffsetCommit
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

FAST = OFFSET_COMMIT  # the common versions are read and answered without kio's entities (checked against kio)
API = Api(ApiKey.OFFSET_COMMIT, 2, 9)


def commit_request(ctx: RequestContext, r: Any) -> OffsetCommit:
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
