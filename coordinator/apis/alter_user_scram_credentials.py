"""AlterUserScramCredentials: add, replace and delete SCRAM credentials (Kafka's admin clients, kafka-configs).

The client sends a salt and the salted password (never the password); the credential store derives StoredKey
and ServerKey, validates as Kafka's ScramControlManager does (iterations 4096..16384, a known mechanism, a
non-empty name, no user twice) and persists the change before answering. ALTER on the cluster is
checked first when ACLs are on. Connections already authenticated keep their sessions, as in Kafka.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.credential_changes import Deletion, Upsertion
from ..security.acl import AclOperation
from ..server.dispatch import RequestContext
from .api import Api
from .authz import CLUSTER_DENIED
from .services import Services

API = Api(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    auth = services.authorizer
    if auth is not None and not auth.authorize_cluster(ctx, AclOperation.ALTER):
        # ControllerApis: ALTER on the cluster, else every user named answers CLUSTER_AUTHORIZATION_FAILED.
        users = dict.fromkeys([d.name for d in request.deletions] + [u.name for u in request.upsertions])
        return {"throttle_time": 0, "results": [
            {"user": u, "error_code": ErrorCode.cluster_authorization_failed, "error_message": CLUSTER_DENIED}
            for u in users]}
    upsertions = [Upsertion(u.name, int(u.mechanism), int(u.iterations), bytes(u.salt), bytes(u.salted_password))
                  for u in request.upsertions]
    deletions = [Deletion(d.name, int(d.mechanism)) for d in request.deletions]
    results = services.credentials.alter(upsertions, deletions)
    return {"throttle_time": 0, "results": [
        {"user": r.user, "error_code": r.error_code, "error_message": r.error_message} for r in results]}
