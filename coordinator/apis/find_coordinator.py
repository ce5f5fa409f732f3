"""FindCoordinator: this broker coordinates every consumer group, and no transactions.

From v4 a client asks for several keys in one request (KIP-699) and gets one answer per key.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.FIND_COORDINATOR, 0, 6)

KEY_TYPE_GROUP = 0
BATCH_VERSION = 4


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    config = services.groups.config
    # The address of the listener this client came in on (a broker with one listener: the advertised one).
    me = services.identities.get(ctx.listener)
    host, port = (me.host, me.port) if me is not None else (config.advertised_host, config.advertised_port)
    key_type = int(getattr(request, "key_type", KEY_TYPE_GROUP))

    def answer(key: str) -> dict:
        if key_type != KEY_TYPE_GROUP:
            return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": ErrorCode.coordinator_not_available,
                    "error_message": "this broker only coordinates consumer groups"}
        return {"key": key, "node_id": config.node_id, "host": host, "port": port,
                "error_code": ErrorCode.none, "error_message": None}

    if ctx.api_version >= BATCH_VERSION:
        return {"throttle_time": 0, "coordinators": [answer(k) for k in request.coordinator_keys]}
    single = answer(as_str(request.key))
    del single["key"]
    return {"throttle_time": 0, **single}
