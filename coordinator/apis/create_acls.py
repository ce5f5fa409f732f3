"""CreateAcls: add ACL bindings (Kafka's AclApis.handleCreateAcls and AclControlManager.createAcls).

ALTER on the cluster first (CLUSTER_AUTHORIZATION_FAILED on every creation otherwise); no authorizer
configured: SECURITY_DISABLED on every creation. Each binding is then validated on its own
(INVALID_REQUEST with Kafka's message); the valid ones are added and persisted in one write. A value
Kafka cannot even build a binding from (ANY or MATCH where a concrete value is needed) fails the whole
request with UNKNOWN_SERVER_ERROR, as there.
"""

from __future__ import annotations

from typing import Any

import structlog

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    AclValidationError,
    PatternType,
    ResourcePattern,
    ResourceType,
    validate_new_binding,
)
from ..server.dispatch import RequestContext
from .acl_requests import alter_refusal, has_unknown, refuse_unparsable
from .api import Api
from .services import Services

API = Api(ApiKey.CREATE_ACLS, 1, 3)

log = structlog.get_logger("groupcoord.acls")

def _all(request: Any, error: int, message: str | None) -> dict:
    return {"throttle_time": 0, "results": [{"error_code": error, "error_message": message}
                                            for _ in request.creations]}


def _unconstructible(c: Any) -> bool:
    """ANY resource type, MATCH/ANY pattern type, ANY operation or ANY permission in a binding."""
    return (int(c.resource_type) == ResourceType.ANY
            or int(c.resource_pattern_type) in (PatternType.MATCH, PatternType.ANY)
            or int(c.operation) == AclOperation.ANY or int(c.permission_type) == AclPermissionType.ANY)


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    if any(has_unknown(c.resource_type, c.resource_pattern_type, c.operation, c.permission_type)
           for c in request.creations):
        return refuse_unparsable(ctx, "CreateAcls")
    auth = services.authorizer
    refusal = alter_refusal(auth, ctx)
    if refusal is not None:
        return _all(request, *refusal)
    if any(_unconstructible(c) for c in request.creations):
        # Kafka builds every AclBinding before validating any, and ResourcePattern/AccessControlEntry refuse
        # these values in their constructors: the whole request fails with UNKNOWN_SERVER_ERROR.
        return _all(request, ErrorCode.unknown_server_error, "Unexpected server error while creating ACLs.")
    results = []
    valid = []
    for c in request.creations:
        binding = AclBinding(
            ResourcePattern(ResourceType.from_code(int(c.resource_type)), c.resource_name,
                            PatternType.from_code(int(c.resource_pattern_type))),
            AccessControlEntry(c.principal, c.host, AclOperation.from_code(int(c.operation)),
                               AclPermissionType.from_code(int(c.permission_type))))
        try:
            validate_new_binding(binding)
        except AclValidationError as exc:
            results.append({"error_code": ErrorCode.invalid_request, "error_message": str(exc)})
            continue
        valid.append(binding)
        results.append({"error_code": ErrorCode.none, "error_message": None})
    try:
        auth.create_acls(valid)
    except OSError as exc:  # the set could not be written: nothing changed, the valid ones failed
        log.error("ACLs could not be persisted", error=repr(exc))
        results = [{"error_code": ErrorCode.unknown_server_error, "error_message": f"ACLs could not be persisted: {exc}"}
                   if r["error_code"] == ErrorCode.none else r for r in results]
    return {"throttle_time": 0, "results": results}
