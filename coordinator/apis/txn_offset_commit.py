"""TxnOffsetCommit: offsets committed inside a transaction, pending until its marker (KIP-98, KIP-447).

v3+ carries the consumer's group metadata (generation, member id, instance id), checked as Kafka checks
it for classic and consumer groups.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.values import as_str

from ..groups.requests import CommitPartition, TxnOffsetCommit
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.TXN_OFFSET_COMMIT, 0, 4)


def commit_request(ctx: RequestContext, r: Any) -> TxnOffsetCommit:
    return TxnOffsetCommit(
        transactional_id=as_str(r.transactional_id),
        group_id=as_str(r.group_id),
        producer_id=int(r.producer_id),
        producer_epoch=int(r.producer_epoch),
        topics=tuple(
            (t.name, tuple(CommitPartition(int(p.partition_index), int(p.committed_offset),
                                           int(getattr(p, "committed_leader_epoch", -1)), p.committed_metadata)
                           for p in t.partitions))
            for t in r.topics
        ),
        generation_id=int(getattr(r, "generation_id", -1)),
        member_id=as_str(getattr(r, "member_id", "")),
        group_instance_id=getattr(r, "group_instance_id", None),
        version=ctx.api_version,
    )


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    return services.groups.commit_transactional_offsets(commit_request(ctx, request))
