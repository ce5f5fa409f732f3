"""AlterClientQuotas (``kafka-configs --alter --add-config producer_byte_rate=… --entity-type users``, the admin
client's ``alterClientQuotas``): validated as Kafka's controller validates quotas, persisted before the answer,
enforced from then on."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..quotas.alterations import Alteration
from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.ALTER_CLIENT_QUOTAS, 0, 1)


def _entity(entry: Any) -> list[tuple[str, str | None]]:
    return [(e.entity_type, e.entity_name) for e in entry.entity]


def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.ALTER_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        # ControllerApis.handleAlterClientQuotas: ALTER_CONFIGS on the cluster, else every entry refused with
        # the error's default message (AlterClientQuotasRequest.getErrorResponse)
        return {"throttle_time": 0, "entries": [
            {"error_code": ErrorCode.cluster_authorization_failed, "error_message": "Cluster authorization failed.",
             "entity": [{"entity_type": t, "entity_name": n} for t, n in _entity(entry)]}
            for entry in request.entries]}
    alterations = [Alteration(_entity(entry), [(op.key, None if op.remove else float(op.value)) for op in entry.ops])
                   for entry in request.entries]
    outcomes = services.quotas.alter(alterations, bool(request.validate_only))
    return {"throttle_time": 0, "entries": [
        {"error_code": o.error, "error_message": o.message,
         "entity": [{"entity_type": t, "entity_name": n} for t, n in o.entity]} for o in outcomes]}
