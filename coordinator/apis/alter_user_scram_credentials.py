"""AlterUserScramCredentials: add, replace and delete SCRAM credentials (Kafka's admin clients, kafka-configs).

The client sends a salt and the salted password (never the password); the credential store derives StoredKey
and ServerKey, validates as Kafka's ScramControlManager does (iterations 4096..16384, a known mechanism, a
non-empty name, no user twice) and persists the change before answering. (ALTER on the cluster is the
authorizer's.) Connections already authenticated keep their sessions, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..security.credentials import Deletion, Upsertion
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    upsertions = [Upsertion(u.name, int(u.mechanism), int(u.iterations), bytes(u.salt), bytes(u.salted_password))
                  for u in request.upsertions]
    deletions = [Deletion(d.name, int(d.mechanism)) for d in request.deletions]
    results = services.credentials.alter(upsertions, deletions)
    return {"throttle_time": 0, "results": [
        {"user": r.user, "error_code": r.error_code, "error_message": r.error_message} for r in results]}
