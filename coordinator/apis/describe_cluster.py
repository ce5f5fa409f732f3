"""DescribeCluster (KIP-700): the cluster id, its controller and its one broker."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..server.dispatch import RequestContext
from .api import Api
from ..security.acl import AclOperation
from .metadata import AUTHORIZED_OPERATIONS_OMITTED, broker_entry
from .operations import cluster_operations
from .services import Services

API = Api(ApiKey.DESCRIBE_CLUSTER, 0, 2)

ENDPOINT_TYPE_BROKERS = 1


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    identity = services.identity_for(ctx.listener)
    ops = AUTHORIZED_OPERATIONS_OMITTED
    if request.include_cluster_authorized_operations:
        auth = services.authorizer
        ops = cluster_operations(auth, ctx) if auth is None or auth.authorize_cluster(ctx, AclOperation.DESCRIBE) else 0
    return {
        "throttle_time": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": ENDPOINT_TYPE_BROKERS,
        "cluster_id": identity.cluster_id,
        "controller_id": identity.controller_id,
        "brokers": [broker_entry(identity)],
        "cluster_authorized_operations": ops,
    }
