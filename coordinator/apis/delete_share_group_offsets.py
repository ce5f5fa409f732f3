"""DeleteShareGroupOffsets (KIP-932): delete the share-partition state of topics of an empty share group
(coordinator/share/offsets_admin.py). DELETE on the group, READ on each topic, as Kafka 4.3's KafkaApis."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from ..share.offsets_admin import delete_error
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, 0)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    group_id = as_str(request.group_id)
    if auth is not None and not auth.authorize(ctx, AclOperation.DELETE, ResourceType.GROUP, group_id):
        return delete_error(ErrorCode.group_authorization_failed)
    names = [str(t.topic_name) for t in request.topics]
    denied = []
    if auth is not None:
        allowed = auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, set(names))
        denied = [{"topic_name": n, "topic_id": ZERO_UUID, "error_code": ErrorCode.topic_authorization_failed,
                   "error_message": None} for n in names if n not in allowed]
        names = [n for n in names if n in allowed]
    answer = await services.share_offsets.delete(group_id, names)
    if answer["error_code"] == ErrorCode.none:
        answer["responses"].extend(denied)
    return answer
