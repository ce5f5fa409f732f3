"""EndTxn: commit or abort the producer's transaction.

Served up to v4 (transaction version 0/1: the epoch stays across transactions). v5 is the
Transactions V2 form (KIP-890 part 2, an epoch bump on every EndTxn), which this broker does not
advertise: ApiVersions finalizes no ``transaction.version``, so a 4.x client uses Transactions V1.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services
from .transactions import older_fenced

API = Api(ApiKey.END_TXN, 0, 4)

PRODUCER_FENCED_VERSION = 2


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID,
                                               str(request.transactional_id)):
        return {"throttle_time": 0, "error_code": ErrorCode.transactional_id_authorization_failed}
    if services.transactions is None:
        return {"throttle_time": 0, "error_code": ErrorCode.coordinator_not_available}
    answer = services.transactions.end_transaction(str(request.transactional_id), int(request.producer_id),
                                                   int(request.producer_epoch), bool(request.committed))
    if not isinstance(answer, dict):
        answer = await answer
    return {"throttle_time": 0,
            "error_code": older_fenced(ErrorCode(answer["error_code"]), ctx.api_version, PRODUCER_FENCED_VERSION)}
