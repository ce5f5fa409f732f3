"""CreateTopics: new topics with their partition count, assignments and configs (or only validated)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID

from ..dataplane.service import DataPlane
from ..dataplane.topics import TopicResult
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import duplicates
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.CREATE_TOPICS, 2, 7)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    dataplane = services.dataplane
    dupes = duplicates(t.name for t in request.topics)
    auth = services.authorizer
    creatable = describable = None
    if auth is not None:
        # ControllerApis.createTopics: CREATE on the cluster, else on each topic; DESCRIBE_CONFIGS on a
        # topic to be told its configs (neither refusal of those two logged as a denial).
        names = {t.name for t in request.topics if t.name not in dupes}
        creatable = (names if auth.authorize_cluster(ctx, AclOperation.CREATE, log_if_denied=False)
                     else auth.filter_authorized(ctx, AclOperation.CREATE, ResourceType.TOPIC, names))
        describable = auth.filter_authorized(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names,
                                             log_if_denied=False)
    results = []
    for topic in request.topics:
        if creatable is not None and topic.name not in dupes and topic.name not in creatable:
            results.append({"name": topic.name, "topic_id": ZERO_UUID, "error_code": ErrorCode.topic_authorization_failed,
                            "error_message": "Authorization failed.", "topic_config_error_code": 0,
                            "num_partitions": -1, "replication_factor": -1, "configs": None})
            continue
        if topic.name in dupes:
            result = TopicResult(topic.name, ErrorCode.invalid_request,
                                 "Create topics request from client contains multiple entries for the "
                                 f"following topics: {', '.join(sorted(dupes))}")
        else:
            assignments = {int(a.partition_index): [int(b) for b in a.broker_ids] for a in topic.assignments}
            result = await dataplane.topics.create(
                topic.name, int(topic.num_partitions), int(topic.replication_factor),
                {c.name: c.value for c in topic.configs}, assignments, bool(request.validate_only))
        created = _created(result, dataplane)
        if describable is not None and result.topic is not None and topic.name not in describable:
            created.update(topic_config_error_code=ErrorCode.topic_authorization_failed, num_partitions=-1,
                           replication_factor=-1, configs=[])
        results.append(created)
    return {"throttle_time": 0, "topics": results}


def _created(result: TopicResult, dataplane: DataPlane) -> dict:
    topic = result.topic
    if topic is None:
        return {"name": result.name, "topic_id": ZERO_UUID, "error_code": result.error,
                "error_message": result.message, "topic_config_error_code": 0, "num_partitions": -1,
                "replication_factor": -1, "configs": None}
    configs = [{"name": c["name"], "value": c["value"], "read_only": c["read_only"],
                "config_source": c["config_source"], "is_sensitive": c["is_sensitive"]}
               for c in dataplane.describe_configs.topic_configs(topic.configs, include_synonyms=False)]
    return {"name": topic.name, "topic_id": topic.topic_id, "error_code": ErrorCode.none, "error_message": None,
            "topic_config_error_code": 0, "num_partitions": topic.partitions, "replication_factor": 1,
            "configs": configs}
