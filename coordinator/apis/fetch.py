"""Fetch: raw batches from the logs, long polling and incremental fetch sessions (dataplane/fetch.py)."""

from __future__ import annotations

import dataclasses
from typing import Any

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.fetch_response import VERSIONS as FAST_VERSIONS, write_body

from ..dataplane.fetch import parse_request
from ..security.acl import AclOperation, ResourceType
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.FETCH, 4, 17)


async def handle(services: Services, ctx: RequestContext, request: Any) -> Any:
    """With an authorizer, the topics without READ answer TOPIC_AUTHORIZATION_FAILED, unread. On a listener whose
    bytes go to the socket as they are, large records are answered as file regions, sent with sendfile."""
    parsed = parse_request(request, ctx.api_version)
    quotas = services.quotas
    if quotas is not None and quotas.managers.fetch.enabled:
        parsed = _within_quota_window(parsed, quotas.managers.fetch, ctx)
    auth = services.authorizer
    regions = ctx.listener in services.sendfile_listeners
    if auth is None:
        answer = await services.dataplane.fetch.fetch(parsed, regions=regions)
    else:
        answer = await services.dataplane.fetch.fetch(
            parsed, authorize=lambda names: auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, names),
            regions=regions)
    return _written(services, ctx.api_version, answer)


def _written(services: Services, version: int, answer: dict) -> Any:
    """The answer's body written by the flexible versions' hand-written writer (protocol/fetch_response.py), or
    the dict for the general encoder: when the writer declines it, when it carries a top-level error (the
    dispatcher observes a written body as NONE) and while client quotas are enforced (the throttler reads the
    dict's records to charge them, and may answer another dict instead)."""
    if version not in FAST_VERSIONS or answer["error_code"]:
        return answer
    quotas = services.quotas
    if quotas is not None and quotas.managers.enabled:
        return answer
    written = write_body(version, answer)
    return answer if written is None else written


def _within_quota_window(parsed: Any, fetch_quota: Any, ctx: RequestContext) -> Any:
    """KafkaApis caps a consumer's fetch at what its consumer_byte_rate allows in one quota window
    (getMaxValueInQuotaWindow), so that one answer does not earn a throttle it could have avoided."""
    window = fetch_quota.max_value_in_window(ctx.principal.name, ctx.client_id or "")
    if window is None or window >= parsed.max_bytes:
        return parsed
    max_bytes = max(int(window), 0)
    return dataclasses.replace(parsed, max_bytes=max_bytes, min_bytes=min(parsed.min_bytes, max_bytes))
