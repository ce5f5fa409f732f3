"""Kafka's ACL codes: resource types, pattern types, operations and permission types, with their wire codes.

Split from ``acl`` (which re-exports every name here) so that what every request's authorization check needs,
the codes, loads without the bindings and filters: those are six frozen dataclasses that only the ACL admin
APIs and a configured authorizer use, and the eager JoinGroup, Heartbeat and OffsetCommit handlers import
these codes at start-up (tests/coordinator/ops/test_daemon_imports.py holds ``acl`` out of the start).
"""

from __future__ import annotations

import enum
from typing import Self

WILDCARD_RESOURCE = "*"
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"


class _KafkaCode(enum.IntEnum):
    """What the four ACL enums share: Kafka's ``fromCode`` (an unknown code is UNKNOWN, never an error) and
    the name as Kafka prints it (``SecurityUtils.resourceTypeName``/``operationName``: ``Topic``,
    ``TransactionalId``, ``IdempotentWrite``, ``Allow``)."""

    @classmethod
    def from_code(cls, code: int) -> Self:
        try:
            return cls(code)
        except ValueError:
            return cls["UNKNOWN"]

    @property
    def title(self) -> str:
        return "".join(part.capitalize() for part in self.name.split("_"))


class ResourceType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(_KafkaCode):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# What AclEntry.supportedOperations lists for each concrete resource type: the operations an
# authorized-operations bitfield reports on, and the only ones that mean anything on that type.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE,
                         AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS,
                         AclOperation.ALTER_CONFIGS),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                         AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
    ResourceType.CLUSTER: (AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS,
                           AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER,
                           AclOperation.DESCRIBE),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.TWO_PHASE_COMMIT),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}


def to_bitfield(operations: "set[AclOperation] | frozenset[AclOperation]") -> int:
    """Kafka's ``Utils.to32BitField``: bit ``code`` set for each operation, as a signed int32."""
    field = 0
    for op in operations:
        field |= 1 << int(op)
    return field - (1 << 32) if field >= 1 << 31 else field
