"""Fetch: raw batches from the logs, long polling and incremental fetch sessions (dataplane/fetch.py)."""

from __future__ import annotations

from typing import Any

from groupcoord.protocol.api_keys import ApiKey

from ..dataplane.fetch import parse_request
from ..server.dispatch import RequestContext
from .api import Api
from .services import Services

# The lowest is Kafka 4.0's floor; the highest the spec's.
API = Api(ApiKey.FETCH, 4, 17)


async def handle(services: Services, ctx: RequestContext, request: Any) -> dict:
    return await services.dataplane.fetch.fetch(parse_request(request, ctx.api_version))
