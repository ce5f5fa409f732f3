"""OffsetCommit: a group's committed positions.

v10 names topics by id (KIP-848), which this coordinator does not serve; kio has no v0-1.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.fast_codecs import OFFSET_COMMIT
from groupcoord.protocol.values import as_ms, as_str

from ..groups.requests import CommitPartition, OffsetCommit
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
    return services.groups.commit_offsets(commit_request(ctx, request))
