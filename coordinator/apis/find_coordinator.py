"""FindCoordinator: this broker coordinates every consumer group (key type 0) and every transactional id
(key type 1, when its transaction coordinator runs).

From v4 a client asks for several keys in one request (KIP-699) and gets one answer per key.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .authz import DEFAULT_MESSAGES
from .api import Api
from .services import Services

API = Api(ApiKey.FIND_COORDINATOR, 0, 6)

KEY_TYPE_GROUP = 0
KEY_TYPE_TRANSACTION = 1
BATCH_VERSION = 4


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    config = services.groups.config
    # The address of the listener this client came in on (a broker with one listener: the advertised one).
    me = services.identities.get(ctx.listener)
    host, port = (me.host, me.port) if me is not None else (config.advertised_host, config.advertised_port)
    key_type = int(getattr(request, "key_type", KEY_TYPE_GROUP))

    auth = services.authorizer

    def refuse(key: str, error: ErrorCode, message: str) -> dict:
        return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": error, "error_message": message}

    def answer(key: str) -> dict:
        if auth is not None:
            # KafkaApis.getCoordinator: DESCRIBE on the group (or transactional id) before anything else.
            if key_type == KEY_TYPE_GROUP and not auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, key):
                return _refused(key, ErrorCode.group_authorization_failed, ctx.api_version)
            if key_type == KEY_TYPE_TRANSACTION and not auth.authorize(ctx, AclOperation.DESCRIBE,
                                                                       ResourceType.TRANSACTIONAL_ID, key):
                return _refused(key, ErrorCode.transactional_id_authorization_failed, ctx.api_version)
        if key_type == KEY_TYPE_TRANSACTION:
            if services.transactions is None:
                return refuse(key, ErrorCode.coordinator_not_available, "this broker runs no transaction coordinator")
            if not key:
                return refuse(key, ErrorCode.invalid_request, "the transactional id is empty")
            if not services.transactions.ensure_active():
                return refuse(key, ErrorCode.coordinator_not_available, "__transaction_state is being created")
        elif key_type != KEY_TYPE_GROUP:
            return refuse(key, ErrorCode.invalid_request, f"unknown coordinator key type {key_type}")
        return {"key": key, "node_id": config.node_id, "host": host, "port": port,
                "error_code": ErrorCode.none, "error_message": None}

    if ctx.api_version >= BATCH_VERSION:
        return {"throttle_time": 0, "coordinators": [answer(k) for k in request.coordinator_keys]}
    single = answer(as_str(request.key))
    del single["key"]
    return {"throttle_time": 0, **single}


def _refused(key: str, error: ErrorCode, version: int) -> dict:
    """Node.noNode() with the error; before v4 the error response carries the error's default message."""
    return {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": error,
            "error_message": DEFAULT_MESSAGES[error] if version < BATCH_VERSION else None}
