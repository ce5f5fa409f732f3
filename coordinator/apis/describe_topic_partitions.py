"""DescribeTopicPartitions (KIP-966): topics and their partitions in name order, at most
``response_partition_limit`` partitions per answer, with a cursor to continue from — what the Java admin
client's ``describeTopics`` prefers to Metadata since 3.8, paging through topics with many partitions.

Follows Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache: no topics asked = every topic
(unknown ones then not reported); a cursor skips topics before its name and, in its topic, partitions
before its index; a cursor naming a topic not asked for, or a negative index, refuses the whole request
with INVALID_REQUEST on every topic asked for.
"""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID

from ..dataplane.names import is_internal, topic_name_error
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

API = Api(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, 0)

# Kafka's max.request.partition.size.limit default: the most partitions one answer carries.
MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000
# Every operation a topic supports (READ … ALTER_CONFIGS as a bit field), what Kafka reports without an
# authorizer.
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << code for code in (3, 4, 5, 6, 7, 8, 10, 11))


def _invalid(request: Any, message: str) -> dict:
    return {"throttle_time": 0, "next_cursor": None, "topics": [
        {"error_code": ErrorCode.invalid_request, "name": t.name, "topic_id": ZERO_UUID, "is_internal": False,
         "partitions": [], "topic_authorized_operations": -2147483648} for t in request.topics]}


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    catalog = services.topics
    every_topic = len(request.topics) == 0
    cursor = request.cursor
    cursor_topic = cursor.topic_name if cursor is not None else ""
    asked = catalog.names() if every_topic else {t.name for t in request.topics}
    names = sorted(name for name in asked if name >= cursor_topic)
    if cursor is not None and not every_topic and cursor.topic_name not in names:
        return _invalid(request, f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: "
                                 f"{cursor.topic_name}")
    if cursor is not None and cursor.partition_index < 0:
        return _invalid(request, "DescribeTopicPartitionsRequest cursor partition must be valid")

    auth = services.authorizer
    refused: list[dict] = []
    if auth is not None:
        # DescribeTopicPartitionsRequestHandler: DESCRIBE on each topic; asked-for ones refused are answered
        # TOPIC_AUTHORIZATION_FAILED (after the others), and a listing of every topic just leaves them out.
        allowed = auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, names)
        if not every_topic:
            refused = [{"error_code": ErrorCode.topic_authorization_failed, "name": name, "topic_id": ZERO_UUID,
                        "is_internal": False, "partitions": [],
                        "topic_authorized_operations": auth.authorized_operations(ctx, ResourceType.TOPIC, name)}
                       for name in names if name not in allowed]
        names = [name for name in names if name in allowed]

    def operations(name: str) -> int:
        return TOPIC_AUTHORIZED_OPERATIONS if auth is None else auth.authorized_operations(ctx, ResourceType.TOPIC,
                                                                                            name)

    node = services.identity.node_id
    remaining = max(min(MAX_REQUEST_PARTITION_SIZE_LIMIT, int(request.response_partition_limit)), 1)
    topics: list[dict] = []
    next_cursor = None
    for name in names:
        if remaining == 0:
            next_cursor = {"topic_name": name, "partition_index": 0}
            break
        topic = catalog.get(name)
        if topic is None:
            if not every_topic:
                error = (ErrorCode.invalid_topic_exception if topic_name_error(name) is not None
                         else ErrorCode.unknown_topic_or_partition)
                topics.append({"error_code": error, "name": name, "topic_id": ZERO_UUID,
                               "is_internal": is_internal(name), "partitions": [],
                               "topic_authorized_operations": operations(name)})
            continue
        start = cursor.partition_index if cursor is not None and name == cursor_topic else 0
        upper = min(topic.partitions, start + remaining)
        topics.append({"error_code": ErrorCode.none, "name": name, "topic_id": topic.topic_id,
                       "is_internal": topic.is_internal,
                       "topic_authorized_operations": operations(name),
                       "partitions": [{"error_code": ErrorCode.none, "partition_index": p, "leader_id": node,
                                       "leader_epoch": 0, "replica_nodes": (node,), "isr_nodes": (node,),
                                       "eligible_leader_replicas": (), "last_known_elr": (),
                                       "offline_replicas": ()} for p in range(start, upper)]})
        if upper < topic.partitions:
            next_cursor = {"topic_name": name, "partition_index": upper}
            break
        remaining -= max(upper - start, 0)
    return {"throttle_time": 0, "topics": topics + refused, "next_cursor": next_cursor}
