"""Readings and answers the three ACL APIs share: a wire filter as an ``AclBindingFilter``, a binding as
DescribeAcls/DeleteAcls list it, and the checks Kafka's request classes make while parsing.

Kafka's CreateAclsRequest, DescribeAclsRequest and DeleteAclsRequest refuse, while parsing, an element
whose code is 0 (UNKNOWN): the broker cannot read the request and closes the connection. A code Kafka does
not know at all (say 99) parses, becomes UNKNOWN in the binding, and is refused later with INVALID_REQUEST
(create) or matches nothing (describe, delete) — the two paths are kept apart here as they are there.
"""

from __future__ import annotations

from typing import Any

import structlog

from groupcoord.protocol.errors import ErrorCode

from ..security.acl import (
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePatternFilter,
    ResourceType,
)
from ..server.dispatch import CLOSE_CONNECTION, RequestContext
from .authz import CLUSTER_DENIED

log = structlog.get_logger("groupcoord.acls")

UNKNOWN_CODE = 0
NO_AUTHORIZER = "No Authorizer is configured."


def has_unknown(resource_type: int, pattern_type: int, operation: int, permission_type: int) -> bool:
    return UNKNOWN_CODE in (int(resource_type), int(pattern_type), int(operation), int(permission_type))


def refuse_unparsable(ctx: RequestContext, api: str) -> Any:
    """Kafka cannot parse such a request (IllegalArgumentException in its constructor): it closes."""
    log.info("closing connection: ACL request with UNKNOWN elements", api=api, peer=ctx.client_host,
             client_id=ctx.client_id)
    return CLOSE_CONNECTION


def binding_filter(resource_type: int, name: str | None, pattern_type: int, principal: str | None,
                   host: str | None, operation: int, permission_type: int) -> AclBindingFilter:
    return AclBindingFilter(
        ResourcePatternFilter(ResourceType.from_code(int(resource_type)), name, PatternType.from_code(int(pattern_type))),
        AccessControlEntryFilter(principal, host, AclOperation.from_code(int(operation)),
                                 AclPermissionType.from_code(int(permission_type))))


def acl_fields(b: AclBinding) -> dict:
    return {"principal": b.entry.principal, "host": b.entry.host, "operation": int(b.entry.operation),
            "permission_type": int(b.entry.permission_type)}


def alter_refusal(auth: Any, ctx: RequestContext) -> tuple[ErrorCode, str] | None:
    """CreateAcls and DeleteAcls answer every element with the same refusal when no authorizer is configured
    (SECURITY_DISABLED) or the principal may not ALTER the cluster (CLUSTER_AUTHORIZATION_FAILED)."""
    if auth is None:
        return ErrorCode.security_disabled, NO_AUTHORIZER
    if not auth.authorize_cluster(ctx, AclOperation.ALTER):
        return ErrorCode.cluster_authorization_failed, CLUSTER_DENIED
    return None
