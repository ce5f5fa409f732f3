"""DescribeClientQuotas' filter (ClientQuotasImage.describe): parsed and checked as Kafka does, then matched
against the stored entities.

Apart from entities.py (which the broker's quota store and managers import at every start) because only a
DescribeClientQuotas request needs it: the daemon does not build its frozen dataclass before it listens.
"""

from __future__ import annotations

from typing import Iterable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass

from .entities import CLIENT_ID, IP, USER, QuotaEntity, QuotaRefused

MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_SPECIFIED = 2


@frozen_dataclass
class QuotaFilter:
    """A DescribeClientQuotas filter: exact component matches, components that must be present, strict or not."""
    exact: dict[str, str | None]
    specified: frozenset[str]
    strict: bool

    def matches(self, entity: QuotaEntity) -> bool:
        if self.strict and len(entity.components) != len(self.exact) + len(self.specified):
            return False
        for kind, name in self.exact.items():
            if not entity.has(kind) or entity.get(kind) != name:
                return False
        return all(entity.has(kind) for kind in self.specified)


def parse_filter(components: Iterable[tuple[str, int, str | None]], strict: bool) -> QuotaFilter:
    """``components``: (entity_type, match_type, match). Raises QuotaRefused as Kafka's describe throws."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for kind, match_type, match in components:
        if not kind:
            raise QuotaRefused(ErrorCode.invalid_request, "Invalid empty entity type.")
        if kind in exact or kind in specified:
            raise QuotaRefused(ErrorCode.invalid_request,
                               f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in (IP, USER, CLIENT_ID):
            raise QuotaRefused(ErrorCode.unsupported_version, f"Unsupported entity type {kind}")
        if match_type == MATCH_EXACT:
            if match is None:
                raise QuotaRefused(ErrorCode.invalid_request,
                                   "Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[kind] = match
        elif match_type == MATCH_DEFAULT:
            if match is not None:
                raise QuotaRefused(ErrorCode.invalid_request,
                                   "Request specified MATCH_TYPE_DEFAULT, but also specified a match string.")
            exact[kind] = None
        elif match_type == MATCH_SPECIFIED:
            if match is not None:
                raise QuotaRefused(ErrorCode.invalid_request,
                                   "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.")
            specified.add(kind)
        else:
            raise QuotaRefused(ErrorCode.invalid_request, f"Unknown match type {match_type}")
    if IP in exact or IP in specified:
        if USER in exact or USER in specified or CLIENT_ID in exact or CLIENT_ID in specified:
            raise QuotaRefused(ErrorCode.invalid_request,
                               "Invalid entity filter component combination. IP filter component should not be "
                               "used with user or clientId filter component.")
    return QuotaFilter(exact, frozenset(specified), strict)
