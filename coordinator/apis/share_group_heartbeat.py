"""ShareGroupHeartbeat (KIP-932): join, stay in and leave a share group; the assignment comes back with it."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.requests import ShareGroupHeartbeat
from ..groups.share.heartbeat import error_response
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import client_host
from .services import Services

API = Api(ApiKey.SHARE_GROUP_HEARTBEAT, 1, 1)


def heartbeat_request(ctx: RequestContext, r: Any) -> ShareGroupHeartbeat:
    names = r.subscribed_topic_names
    return ShareGroupHeartbeat(
        group_id=as_str(r.group_id),
        member_id=as_str(r.member_id),
        member_epoch=int(r.member_epoch),
        rack_id=r.rack_id,
        subscribed_topic_names=None if names is None else tuple(str(n) for n in names),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
    )


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """With an authorizer, as Kafka 4.3's KafkaApis: READ on the group (GROUP_AUTHORIZATION_FAILED), then
    DESCRIBE on every subscribed topic (any missing: TOPIC_AUTHORIZATION_FAILED, nothing changed)."""
    auth = services.authorizer
    if auth is not None:
        if not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
            return error_response(ErrorCode.group_authorization_failed, None)
        names = request.subscribed_topic_names
        if names:
            wanted = set(names)
            if len(auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)) < len(wanted):
                return error_response(ErrorCode.topic_authorization_failed, None)
    return services.groups.share_group_heartbeat(heartbeat_request(ctx, request))
