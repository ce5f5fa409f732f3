"""DescribeLogDirs: the data directory, its partitions and their sizes (``kafka-log-dirs --describe``)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import CLUSTER_NAME, AclOperation, ResourceType

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# Kafka 4.3 serves 1-5 (4.0 removed v0; v4 added total and usable bytes; v5 changed nothing on the wire).
API = Api(ApiKey.DESCRIBE_LOG_DIRS, 1, 5)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        # KafkaApis.handleDescribeLogDirsRequest: DESCRIBE on the cluster, else the error and no directories
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed, "results": []}
    wanted = None if request.topics is None else [(t.topic, t.partitions) for t in request.topics]
    return services.dataplane.log_dirs.describe(wanted)
