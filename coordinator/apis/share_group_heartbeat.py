"""ShareGroupHeartbeat (KIP-932): join, stay in and leave a share group; the assignment comes back with it."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_str

from ..groups.lazy_requests import ShareGroupHeartbeat
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


MEMBER_ID_MAX_LENGTH = 36  # KafkaApis.isMemberIdValid: the Java client sends a 22-character Uuid


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """As Kafka 4.3's KafkaApis: with an authorizer READ on the group (GROUP_AUTHORIZATION_FAILED); a member id
    that is empty or longer than 36 characters is INVALID_REQUEST (Kafka's error response drops the message);
    with an authorizer DESCRIBE on every subscribed topic (any missing: TOPIC_AUTHORIZATION_FAILED)."""
    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
        return error_response(ErrorCode.group_authorization_failed, None)
    member_id = as_str(request.member_id)
    if not member_id or len(member_id) > MEMBER_ID_MAX_LENGTH:
        return error_response(ErrorCode.invalid_request, None)
    if auth is not None:
        names = request.subscribed_topic_names
        if names:
            wanted = set(names)
            if len(auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)) < len(wanted):
                return error_response(ErrorCode.topic_authorization_failed, None)
    return services.groups.share_group_heartbeat(heartbeat_request(ctx, request))
