"""The include_*_authorized_operations bitfields (AuthHelper.authorizedOperations).

With no authorizer Kafka reports every operation the resource type supports; with one, those the
principal is allowed.
"""

from __future__ import annotations

from typing import Any

from ..security.acl import CLUSTER_NAME, SUPPORTED_OPERATIONS, ResourceType, to_bitfield
from ..server.dispatch import RequestContext

ALL_GROUP_OPERATIONS = to_bitfield(set(SUPPORTED_OPERATIONS[ResourceType.GROUP]))
ALL_TOPIC_OPERATIONS = to_bitfield(set(SUPPORTED_OPERATIONS[ResourceType.TOPIC]))
ALL_CLUSTER_OPERATIONS = to_bitfield(set(SUPPORTED_OPERATIONS[ResourceType.CLUSTER]))


def group_operations(auth: Any, ctx: RequestContext, group_id: str) -> int:
    return ALL_GROUP_OPERATIONS if auth is None else auth.authorized_operations(ctx, ResourceType.GROUP, group_id)


def topic_operations(auth: Any, ctx: RequestContext, topic: str) -> int:
    return ALL_TOPIC_OPERATIONS if auth is None else auth.authorized_operations(ctx, ResourceType.TOPIC, topic)


def cluster_operations(auth: Any, ctx: RequestContext) -> int:
    return ALL_CLUSTER_OPERATIONS if auth is None else auth.authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME)
