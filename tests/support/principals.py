"""Requests sent as a given principal, before authentication exists on a listener.

The dispatcher decodes the frame exactly as the server does; the context then carries the principal (and
client address) the test names, as a SASL or mTLS connection will once authenticated. The response is
encoded as the server would send it and read back with kio, so a test sees what a client would.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from groupcoord.coordinator.security.acl import (
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)
from groupcoord.coordinator.security.principal import KafkaPrincipal
from groupcoord.coordinator.server.dispatch import CLOSE_CONNECTION, NO_RESPONSE
from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header, parse_response_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, response_reader

CLOSED = "connection closed"


def allow(principal: str, rtype: ResourceType, name: str, op: AclOperation, pattern: PatternType = PatternType.LITERAL,
          perm: AclPermissionType = AclPermissionType.ALLOW, host: str = "*") -> AclBinding:
    """An ACL binding as a test writes it: ``allow("User:alice", RT.TOPIC, "orders", Op.READ)``."""
    return AclBinding(ResourcePattern(rtype, name, pattern), AccessControlEntry(principal, host, op, perm))


async def call_as(broker: Any, principal: str | KafkaPrincipal, api_key: int, version: int, body: dict,
                  host: str = "127.0.0.1") -> Any:
    """The kio response ``broker`` gives ``principal`` (``User:alice``) for this request, or CLOSED."""
    if isinstance(principal, str):
        principal = KafkaPrincipal.parse(principal)
    entity = build(request_class(api_key, version), body)
    frame = encode_request_header(api_key, version, 7, "acl-test", is_flexible(api_key, version)) + encode_entity(entity)
    decoded = broker.dispatcher.decode(frame, host, 1)
    decoded.ctx = dataclasses.replace(decoded.ctx, principal=principal)
    result = decoded.handler(decoded.ctx, decoded.request)
    if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
        result = await result
    if result is CLOSE_CONNECTION or result is NO_RESPONSE:
        return CLOSED
    payload = broker.dispatcher.encode_response(decoded, result)
    correlation, pos = parse_response_header(payload[4:], api_key, is_flexible(api_key, version))
    response, _ = response_reader(api_key, version)(payload[4:], pos)
    return response
