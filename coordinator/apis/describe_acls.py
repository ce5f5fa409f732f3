"""DescribeAcls: the bindings one filter selects, grouped by resource pattern (DescribeAclsResponse.aclsResources).

DESCRIBE on the cluster first (a top-level CLUSTER_AUTHORIZATION_FAILED otherwise); no authorizer
configured: SECURITY_DISABLED, as Kafka's AclApis answers.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation
from ..server.dispatch import RequestContext
from .acl_requests import acl_fields, binding_filter, has_unknown, refuse_unparsable
from .api import Api
from .authz import CLUSTER_DENIED
from .services import Services

API = Api(ApiKey.DESCRIBE_ACLS, 1, 3)


def _error(error: int, message: str) -> dict:
    return {"throttle_time": 0, "error_code": error, "error_message": message, "resources": []}


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    r = request
    if has_unknown(r.resource_type_filter, r.pattern_type_filter, r.operation, r.permission_type):
        return refuse_unparsable(ctx, "DescribeAcls")
    auth = services.authorizer
    if auth is None:
        return _error(ErrorCode.security_disabled, "No Authorizer is configured on the broker")
    if not auth.authorize_cluster(ctx, AclOperation.DESCRIBE):
        return _error(ErrorCode.cluster_authorization_failed, CLUSTER_DENIED)
    flt = binding_filter(r.resource_type_filter, r.resource_name_filter, r.pattern_type_filter,
                         r.principal_filter, r.host_filter, r.operation, r.permission_type)
    grouped: dict[Any, list[dict]] = {}
    for b in auth.acls(flt):
        grouped.setdefault(b.pattern, []).append(acl_fields(b))
    resources = [{"resource_type": int(p.resource_type), "resource_name": p.name, "pattern_type": int(p.pattern_type),
                  "acls": acls} for p, acls in grouped.items()]
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "resources": resources}
