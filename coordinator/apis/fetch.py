"""Fetch: raw batches from the logs, long polling and incremental fetch sessions (dataplane/fetch.py)."""

from __future__ import annotations

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
    """With an authorizer, the topics without READ answer TOPIC_AUTHORIZATION_FAILED, unread."""
    auth = services.authorizer
    if auth is None:
        return await services.dataplane.fetch.fetch(parse_request(request, ctx.api_version))
    return await services.dataplane.fetch.fetch(
        parse_request(request, ctx.api_version),
        authorize=lambda names: auth.filter_authorized(ctx, AclOperation.READ, ResourceType.TOPIC, names))
