"""DescribeClientQuotas (``kafka-configs --describe --entity-type users/clients/ips``, the admin client's
``describeClientQuotas``): the quotas whose entity matches the filter, as Kafka's ClientQuotasImage.describe."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..quotas.entities import QuotaRefused, ordered_values
from ..quotas.quota_filter import parse_filter
from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, 1)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis.handleDescribeClientQuotasRequest: DESCRIBE_CONFIGS on the cluster (getErrorResponse: the
        # error's default message, no entries)
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": "Cluster authorization failed.", "entries": None}
    try:
        quota_filter = parse_filter(((c.entity_type, int(c.match_type), c.match) for c in request.components),
                                    bool(request.strict))
    except QuotaRefused as refused:
        return {"throttle_time": 0, "error_code": refused.error, "error_message": refused.message, "entries": None}
    entries = [{"entity": entity.as_wire(),
                "values": [{"key": key, "value": float(value)} for key, value in ordered_values(values)]}
               for entity, values in services.quotas.describe(quota_filter)]
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": "", "entries": entries}
