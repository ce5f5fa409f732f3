"""ConsumerGroupHeartbeat: KIP-848's one request to join, stay in, reconcile with and leave a consumer group."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.values import as_ms, as_str

from ..groups.consumer.heartbeat import error_response
from ..groups.requests import ConsumerGroupHeartbeat
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
        member_id = as_str(request.member_id)
        if member_id:
            auth.remember_member(member_id, ctx)  # its regex resolves to what this principal may DESCRIBE
        else:
            return _remembering(auth, ctx, services.groups.consumer_group_heartbeat(heartbeat_request(ctx, request)))
    return services.groups.consumer_group_heartbeat(heartbeat_request(ctx, request))


async def _remembering(auth: Any, ctx: RequestContext, reply: Any) -> dict:
    """v0: the coordinator names a joining member; remember its principal under that id."""
    response = await reply
    auth.remember_member(response.get("member_id") or "", ctx)
    return response
