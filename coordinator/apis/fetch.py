"""Fetch: raw batches from the logs, long polling and incremental fetch sessions (dataplane/fetch.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..dataplane.fetch import parse_request
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.FETCH, 4, 17)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    """With an authorizer, the topics without READ answer TOPIC_AUTHORIZATION_FAILED, unread. On a listener whose
    bytes go to the socket as they are, large records are answered as file regions, sent with sendfile."""
    parsed = parse_request(request, ctx.api_version)
    quotas = services.quotas
    if quotas is not None and quotas.managers.fetch.enabled:
        parsed = _within_quota_window(parsed, quotas.managers.fetch, ctx)
    auth = services.authorizer
    regions = ctx.listener in services.sendfile_listeners
    if auth is None:
        return await services.dataplane.fetch.fetch(parsed, regions=regions)
    return await services.dataplane.fetch.fetch(
        parsed, authorize=lambda names: auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, names),
        regions=regions)


def _within_quota_window(parsed: Any, fetch_quota: Any, ctx: RequestContext) -> Any:
    """KafkaApis caps a consumer's fetch at what its consumer_byte_rate allows in one quota window
    (getMaxValueInQuotaWindow), so that one answer does not earn a throttle it could have avoided."""
    window = fetch_quota.max_value_in_window(ctx.principal.name, ctx.client_id or "")
    if window is None or window >= parsed.max_bytes:
        return parsed
    max_bytes = max(int(window), 0)
    return dataclasses.replace(parsed, max_bytes=max_bytes, min_bytes=min(parsed.min_bytes, max_bytes))
