"""AlterShareGroupOffsets (KIP-932): set the start offset of share partitions of an empty share group
(coordinator/share/offsets_admin.py). READ on the group, READ on each topic, as Kafka 4.3's KafkaApis."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from ..share.offsets_admin import alter_error
from .api import Api
from .services import Services

API = Api(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    group_id = as_str(request.group_id)
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, group_id):
        return alter_error(ErrorCode.group_authorization_failed)
    topics = [(str(t.topic_name), [(int(p.partition_index), int(p.start_offset)) for p in t.partitions])
              for t in request.topics]
    denied = []
    if auth is not None:
        allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, {n for n, _ in topics})
        denied = [{"topic_name": n, "topic_id": ZERO_UUID, "partitions": [
            {"partition_index": p, "error_code": ErrorCode.topic_authorization_failed, "error_message": None}
            for p, _o in parts]} for n, parts in topics if n not in allowed]
        topics = [(n, parts) for n, parts in topics if n in allowed]
    answer = await services.share_offsets.alter(group_id, topics)
    if answer["error_code"] == ErrorCode.none:
        answer["responses"].extend(denied)
    return answer
