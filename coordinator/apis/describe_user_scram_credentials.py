"""DescribeUserScramCredentials: each user's SCRAM mechanisms and iteration counts (never salts or keys).

Kafka's ScramImage.describe: no users named means every user; a user named twice gets DUPLICATE_RESOURCE,
an unknown one RESOURCE_NOT_FOUND, each with Kafka's text. DESCRIBE on the cluster is checked first when ACLs are on (CLUSTER_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from ..security.acl import AclOperation
from ..server.dispatch import RequestContext
from .api import Api
from .authz import CLUSTER_DENIED
from .services import Services

API = Api(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0)


def handle(services: Services, ctx: RequestContext, request: Any) -> dict[str, Any]:
    auth = services.authorizer
    if auth is not None and not auth.authorize_cluster(ctx, AclOperation.DESCRIBE):
        return {"throttle_time": 0, "error_code": ErrorCode.cluster_authorization_failed,
                "error_message": CLUSTER_DENIED, "results": []}
    known = services.credentials.users()
    asked: dict[str, bool] = {}  # user -> named more than once
    if not request.users:
        asked = {user: False for user in sorted(known)}
    else:
        for user in request.users:
            asked[user.name] = user.name in asked
    results = []
    for user, duplicate in asked.items():
        if duplicate:
            results.append({"user": user, "error_code": ErrorCode.duplicate_resource,
                            "error_message": f"Cannot describe SCRAM credentials for the same user twice in a single request: {user}",
                            "credential_infos": []})
        elif user in known:
            results.append({"user": user, "error_code": ErrorCode.none, "error_message": None,
                            "credential_infos": [{"mechanism": m.wire_type, "iterations": i} for m, i in known[user]]})
        else:
            results.append({"user": user, "error_code": ErrorCode.resource_not_found,
                            "error_message": f"Attempt to describe a user credential that does not exist: {user}",
                            "credential_infos": []})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "results": results}
