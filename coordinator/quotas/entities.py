"""Client quota entities and keys as Kafka defines them (ClientQuotaEntity, QuotaConfig, ClientQuotaControlManager's
validation, ClientQuotasImage's describe filter).

An entity is a set of (type, name) components: ``user`` and/or ``client-id``, or ``ip`` alone; a name of None
is that type's default entity (``--entity-default``). The keys an entity may carry depend on its kind:
user/client-id entities take ``producer_byte_rate``, ``consumer_byte_rate`` (LONG), ``request_percentage`` and
``controller_mutation_rate`` (DOUBLE); ip entities take ``connection_creation_rate`` (INT).
"""
from __future__ import annotations

import ipaddress
import socket
from typing import Iterable

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass

USER = "user"
CLIENT_ID = "client-id"
IP = "ip"

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

# key -> ConfigDef type, per entity kind (QuotaConfig.userAndClientQuotaConfigs / ipConfigs)
USER_CLIENT_KEYS = {PRODUCER_BYTE_RATE: "LONG", CONSUMER_BYTE_RATE: "LONG", REQUEST_PERCENTAGE: "DOUBLE",
                    CONTROLLER_MUTATION_RATE: "DOUBLE"}
IP_KEYS = {CONNECTION_CREATION_RATE: "INT"}

# The order Kafka's answers list the components of an entity and the values of a quota: both are Java
# HashMaps, iterated by bucket (client-id hashes before user; the five keys in the order below).
_COMPONENT_ORDER = {CLIENT_ID: 0, USER: 1, IP: 2}
_VALUE_ORDER = {CONNECTION_CREATION_RATE: 0, REQUEST_PERCENTAGE: 7, PRODUCER_BYTE_RATE: 11, CONSUMER_BYTE_RATE: 12,
                CONTROLLER_MUTATION_RATE: 14}


@frozen_dataclass
class QuotaEntity:
    """Components sorted by type, so equal entities are equal keys. A name of None is the default entity."""

    components: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, components: Iterable[tuple[str, str | None]]) -> "QuotaEntity":
        return cls(tuple(sorted(dict(components).items())))

    def get(self, entity_type: str, missing: object = ...) -> object:
        for kind, name in self.components:
            if kind == entity_type:
                return name
        return missing

    def has(self, entity_type: str) -> bool:
        return any(kind == entity_type for kind, _ in self.components)

    def as_wire(self) -> list[dict]:
        """The entity as Kafka's answers list it."""
        ordered = sorted(self.components, key=lambda c: _COMPONENT_ORDER.get(c[0], 9))
        return [{"entity_type": kind, "entity_name": name} for kind, name in ordered]

    def to_json(self) -> dict:
        return {kind: name for kind, name in self.components}

    def __str__(self) -> str:  # ClientQuotaEntity.toString, as Kafka's messages quote it
        ordered = sorted(self.components, key=lambda c: _COMPONENT_ORDER.get(c[0], 9))
        return "ClientQuotaEntity(entries={" + ", ".join(f"{k}={v}" for k, v in ordered) + "})"


def ordered_values(values: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(values.items(), key=lambda kv: _VALUE_ORDER.get(kv[0], 99))


class QuotaRefused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _resolvable(host: str) -> bool:
    """ClientQuotaControlManager.isValidIpEntity: InetAddress.getByName succeeds (an address, or a host name
    that resolves)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    try:
        socket.getaddrinfo(host, None)
        return True
    except (OSError, UnicodeError):
        return False


def validate_entity(raw: list[tuple[str, str | None]]) -> tuple[QuotaEntity, dict[str, str]]:
    """Kafka's validateEntity then configKeysForEntityType: the entity and the key → type table it allows."""
    if not raw:
        raise QuotaRefused(ErrorCode.invalid_request, "Invalid empty client quota entity")
    seen: dict[str, str | None] = {}
    for kind, name in raw:
        if kind in seen:
            raise QuotaRefused(ErrorCode.invalid_request, f"Invalid client quota entity, duplicate entity entry {kind}")
        if kind not in (USER, CLIENT_ID, IP):
            raise QuotaRefused(ErrorCode.invalid_request, f"Unhandled client quota entity type: {kind}")
        seen[kind] = name
        if name is not None and name == "":
            raise QuotaRefused(ErrorCode.invalid_request, f"Empty {kind} not supported")
    entity = QuotaEntity.of(seen.items())
    if IP in seen:
        if USER in seen or CLIENT_ID in seen:
            raise QuotaRefused(ErrorCode.invalid_request, "Invalid quota entity combination, IP entity should"
                                                          "not be combined with User or ClientId")
        if seen[IP] is not None and not _resolvable(seen[IP]):
            raise QuotaRefused(ErrorCode.invalid_request, f"{seen[IP]} is not a valid IP or resolvable host.")
        return entity, IP_KEYS
    return entity, USER_CLIENT_KEYS


def validate_value(keys: dict[str, str], key: str, value: float) -> None:
    """ClientQuotaControlManager.validateQuotaKeyValue."""
    kind = keys.get(key)
    if kind is None:
        raise QuotaRefused(ErrorCode.invalid_request, f"Invalid configuration key {key}")
    if value <= 0.0:
        raise QuotaRefused(ErrorCode.invalid_request, f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    if kind == "INT" and value > 2**31 - 1:
        raise QuotaRefused(ErrorCode.invalid_request, f"Proposed value for {key} is too large for an INT.")
    if kind == "LONG" and value > 2.0**63 - 1:
        raise QuotaRefused(ErrorCode.invalid_request, f"Proposed value for {key} is too large for a LONG.")
    if abs(value % 1.0) > 1e-6:
        raise QuotaRefused(ErrorCode.invalid_request, f"{key} cannot be a fractional value.")


# DescribeClientQuotas' filter (QuotaFilter, parse_filter, MATCH_*) is in quota_filter.py, imported by that API only.
_FILTER_NAMES = ("QuotaFilter", "parse_filter", "MATCH_EXACT", "MATCH_DEFAULT", "MATCH_SPECIFIED")


def __getattr__(name: str) -> object:
    if name in _FILTER_NAMES:
        from . import quota_filter

        return getattr(quota_filter, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
