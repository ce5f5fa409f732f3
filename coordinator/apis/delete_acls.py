"""DeleteAcls: remove the bindings each filter selects, reporting them per filter (AclControlManager.deleteAcls).

ALTER on the cluster first (CLUSTER_AUTHORIZATION_FAILED on every filter otherwise); no authorizer
configured: SECURITY_DISABLED on every filter. A filter whose resource or pattern type, operation or
permission Kafka does not know is refused with INVALID_REQUEST ("Unknown patternFilter." /
"Unknown entryFilter."), the others applied; all removals are persisted in one write.
"""

from __future__ import annotations

from typing import Any

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .acl_requests import acl_fields, alter_refusal, binding_filter, has_unknown, refuse_unparsable
from .api import Api
from .services import Services

API = Api(ApiKey.DELETE_ACLS, 1, 3)

log = structlog.get_logger("groupcoord.acls")


def _all(request: Any, error: int, message: str) -> dict:
    return {"throttle_time": 0, "filter_results": [{"error_code": error, "error_message": message, "matching_acls": []}
                                                   for _ in request.filters]}


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    if any(has_unknown(f.resource_type_filter, f.pattern_type_filter, f.operation, f.permission_type)
           for f in request.filters):
        return refuse_unparsable(ctx, "DeleteAcls")
    auth = services.authorizer
    refusal = alter_refusal(auth, ctx)
    if refusal is not None:
        return _all(request, *refusal)
    filters = [binding_filter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter,
                              f.principal_filter, f.host_filter, f.operation, f.permission_type)
               for f in request.filters]
    valid = [f for f in filters if not f.is_unknown()]
    try:
        removed = iter(auth.delete_acls(valid))
    except OSError as exc:  # the set could not be written: nothing was removed
        log.error("ACLs could not be persisted", error=repr(exc))
        return _all(request, ErrorCode.unknown_server_error, f"ACLs could not be persisted: {exc}")
    results = []
    for f in filters:
        if f.pattern.is_unknown():
            results.append({"error_code": ErrorCode.invalid_request, "error_message": "Unknown patternFilter.",
                            "matching_acls": []})
        elif f.entry.is_unknown():
            results.append({"error_code": ErrorCode.invalid_request, "error_message": "Unknown entryFilter.",
                            "matching_acls": []})
        else:
            results.append({"error_code": ErrorCode.none, "error_message": None, "matching_acls": [
                {"error_code": ErrorCode.none, "error_message": None, "resource_type": int(b.pattern.resource_type),
                 "resource_name": b.pattern.name, "pattern_type": int(b.pattern.pattern_type), **acl_fields(b)}
                for b in next(removed)]})
    return {"throttle_time": 0, "filter_results": results}
