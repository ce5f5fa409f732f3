"""SaslAuthenticate as KafkaApis answers it: ILLEGAL_SASL_STATE.

The authenticator takes every SaslAuthenticate during an authentication (and a re-authentication, KIP-368);
one that reaches this handler came outside any exchange — a listener without SASL, or an authenticated
connection — and Kafka answers it with this error and text.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.SASL_AUTHENTICATE, 0, 2)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    return {"error_code": ErrorCode.illegal_sasl_state,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b"", "session_lifetime": 0}
