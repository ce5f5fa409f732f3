"""DeleteTopics: by name, or from v6 by topic id."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.names import ZERO_UUID

from ..dataplane.topics import TopicResult
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import duplicates
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.DELETE_TOPICS, 1, 6)

BY_ID_VERSION = 6


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    if ctx.api_version >= BY_ID_VERSION:
        wanted = [(t.name, t.topic_id if t.topic_id not in (None, ZERO_UUID) else None)
                  for t in request.topics]
    else:
        wanted = [(name, None) for name in request.topic_names]
    dupes = duplicates(n if n is not None else i for n, i in wanted)
    responses = []
    for name, topic_id in wanted:
        if (name if name is not None else topic_id) in dupes:
            result = TopicResult(name, ErrorCode.invalid_request, "Duplicate topic in request.")
        else:
            refused = _refused(services, ctx, name, topic_id) if services.authorizer is not None else None
            result = refused if refused is not None else await services.dataplane.topics.delete(name, topic_id)
        responses.append({"name": result.name, "topic_id": (result.topic.topic_id if result.topic
                                                             else topic_id or ZERO_UUID),
                          "error_code": result.error, "error_message": result.message})
    return {"throttle_time": 0, "responses": responses}


def _refused(services: Services, ctx: RequestContext, name: str | None, topic_id: Any) -> TopicResult | None:
    """ControllerApis.deleteTopics' checks: DELETE on the cluster allows every topic; otherwise DESCRIBE
    and DELETE on the topic. Asked for by name without DESCRIBE: TOPIC_AUTHORIZATION_FAILED before whether
    it exists is looked at; by id: an unknown id is UNKNOWN_TOPIC_ID (ids are not secret), a known one
    without DELETE TOPIC_AUTHORIZATION_FAILED, its name given only with DESCRIBE. None: go ahead."""
    auth = services.authorizer
    if auth.authorize_cluster(ctx, AclOperation.DELETE, log_if_denied=False):
        return None
    catalog = services.dataplane.topics
    if topic_id is not None:
        topic = catalog.by_id(topic_id)
        if topic is None:
            return None
        if auth.authorize(ctx, AclOperation.DELETE, ResourceType.TOPIC, topic.name):
            return None
        shown = topic.name if auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name) else None
        return TopicResult(shown, ErrorCode.topic_authorization_failed, None)
    if not auth.authorize(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name):
        return TopicResult(name, ErrorCode.topic_authorization_failed, None)
    if catalog.get(name) is None:
        return None
    if not auth.authorize(ctx, AclOperation.DELETE, ResourceType.TOPIC, name):
        return TopicResult(name, ErrorCode.topic_authorization_failed, None)
    return None
