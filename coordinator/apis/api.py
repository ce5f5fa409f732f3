"""What one API module declares: ``API = Api(ApiKey.X, lowest, highest)`` beside ``handle``.

A handler is ``handle(services, ctx, request)``: the broker's services, the request's context and the
kio request of the version asked for. It returns what the dispatcher encodes (see server/dispatch.py):
a version-neutral dict, a kio entity, an ``EncodedBody``, ``NO_RESPONSE``/``CLOSE_CONNECTION``, or a
future or coroutine of one of those.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.frozen import frozen_dataclass

if TYPE_CHECKING:
    from groupcoord.coordinator.server.dispatch import RequestContext

    from .services import Services


@frozen_dataclass
class Api:
    """An API key and the versions served, lowest and highest inclusive (ApiVersions advertises them)."""

    key: ApiKey
    min_version: int
    max_version: int


class ApiModule(Protocol):
    """The shape of every module in this package that serves an API."""

    API: Api

    def handle(self, services: Services, ctx: RequestContext, request: Any) -> Any: ...
