"""AddOffsetsToTxn: a group's ``__consumer_offsets`` partition joins the transaction, so that the
TxnOffsetCommit that follows is settled by the transaction's marker. The group need not exist."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import OFFSETS_TOPIC

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .transactions import older_fenced

API = Api(ApiKey.ADD_OFFSETS_TO_TXN, 0, 4)

PRODUCER_FENCED_VERSION = 2


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None:  # KafkaApis: WRITE on the transactional id, then READ on the group
        if not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, str(request.transactional_id)):
            return {"throttle_time": 0, "error_code": ErrorCode.transactional_id_authorization_failed}
        if not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, str(request.group_id)):
            return {"throttle_time": 0, "error_code": ErrorCode.group_authorization_failed}
    if services.transactions is None:
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available}
    partition = (OFFSETS_TOPIC, services.groups.partition_for(str(request.group_id)))
    answer = services.transactions.add_partitions(str(request.transactional_id), int(request.producer_id),
                                                  int(request.producer_epoch), [partition])
    if not isinstance(answer, dict):
        answer = await answer
    error = older_fenced(ErrorCode(answer["error_code"]), ctx.api_version, PRODUCER_FENCED_VERSION)
    return {"throttle_time": 0, "error_code": error}
