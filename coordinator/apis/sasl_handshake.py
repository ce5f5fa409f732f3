"""SaslHandshake as KafkaApis answers it: ILLEGAL_SASL_STATE.

On a SASL listener the connection's authenticator (coordinator/security/authenticator.py) takes every
SaslHandshake before authentication and, with ``connections.max.reauth.ms``, the one that begins a
re-authentication; a handshake that reaches this handler came on a listener without SASL or after the
connection authenticated without re-authentication enabled, and Kafka refuses it with no mechanisms.
Declaring the API here is also what makes ApiVersions advertise it.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.SASL_HANDSHAKE, 0, 1)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": []}
