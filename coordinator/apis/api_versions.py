"""ApiVersions: what this broker serves, read from the dispatcher's registry (KIP-35, KIP-511).

The answer depends only on the version asked, whether the client named itself validly (v3+) and the
registry, so each combination is encoded once.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.client_software import valid_client_software
from groupcoord.protocol.encode import EncodedBody, encode_body
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.registry import ApiRegistry, response_class

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.API_VERSIONS, 0, 4)



def api_versions_response(registry: ApiRegistry) -> dict[str, Any]:
    return {
        "error_code": 0,
        "throttle_time": 0,
        "api_keys": [
            {"api_key": r.api_key, "min_version": r.min_version, "max_version": r.max_version}
            for r in registry.ranges()
        ],
    }


def handle(services: Services, ctx: RequestContext, request: Any) -> EncodedBody:
    error = ErrorCode.none if valid_client_software(request, ctx.api_version) else ErrorCode.invalid_request
    registry = services.registry

    def encode() -> EncodedBody:
        response = {**api_versions_response(registry), "error_code": error}
        return EncodedBody(encode_body(response_class(ApiKey.API_VERSIONS, ctx.api_version), response))

    return services.encoded.get(ApiKey.API_VERSIONS, (ctx.api_version, error, registry.generation), encode)
