"""ConsumerGroupHeartbeat: KIP-848's one request to join, stay in, reconcile with and leave a consumer group."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_ms, as_str

from ..groups.consumer.heartbeat import error_response
from ..groups.lazy_requests import ConsumerGroupHeartbeat
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .requests import client_host
from .services import Services

API = Api(ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, 1)


def heartbeat_request(ctx: RequestContext, r: Any) -> ConsumerGroupHeartbeat:
    owned = r.topic_partitions
    names = r.subscribed_topic_names
    return ConsumerGroupHeartbeat(
        group_id=as_str(r.group_id),
        member_id=as_str(r.member_id),
        member_epoch=int(r.member_epoch),
        instance_id=r.instance_id,
        rack_id=r.rack_id,
        rebalance_timeout_ms=as_ms(r.rebalance_timeout),
        subscribed_topic_names=None if names is None else tuple(str(n) for n in names),
        subscribed_topic_regex=getattr(r, "subscribed_topic_regex", None),
        server_assignor=r.server_assignor,
        topic_partitions=None if owned is None else tuple((tp.topic_id, tuple(int(p) for p in tp.partitions)) for tp in owned),
        client_id=ctx.client_id or "",
        client_host=client_host(ctx),
        version=ctx.api_version,
    )


def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """With an authorizer, as Kafka 4.3's KafkaApis: READ on the group (GROUP_AUTHORIZATION_FAILED), then
    DESCRIBE on every subscribed topic name (any missing: TOPIC_AUTHORIZATION_FAILED, nothing changed)."""
    auth = services.authorizer
    if auth is not None:
        if not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, as_str(request.group_id)):
            return error_response(ErrorCode.group_authorization_failed, None)
        names = request.subscribed_topic_names
        if names:
            wanted = set(names)
            if len(auth.filter_authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted)) < len(wanted):
                return error_response(ErrorCode.topic_authorization_failed, None)
        # Its regex (v1+, where the client names the member) resolves to what this principal may DESCRIBE.
        auth.remember_member(as_str(request.member_id), ctx)
    return services.groups.consumer_group_heartbeat(heartbeat_request(ctx, request))
