"""ACLs as Kafka models them: resource patterns, entries, bindings and the filters that select them.

The codes (in ``acl_codes``, re-exported here) are Kafka's wire codes (``ResourceType``, ``PatternType``,
``AclOperation``, ``AclPermissionType`` in org.apache.kafka.common), so a binding goes to and from CreateAcls,
DescribeAcls and DeleteAcls without translation tables. Filter matching follows ``ResourcePatternFilter.matches``
and ``AccessControlEntryFilter.matches`` exactly: MATCH selects the literal name, the ``*`` wildcard and every
prefix that covers the name; ANY selects by exact name whatever the pattern type.
"""

from __future__ import annotations

from groupcoord.protocol.frozen import frozen_dataclass

from .acl_codes import (  # noqa: F401 (re-exported: the codes are part of this module's interface)
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    to_bitfield,
)


@frozen_dataclass
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, patternType={self.pattern_type.name})"


@frozen_dataclass
class AccessControlEntry:
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


@frozen_dataclass
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def to_json(self) -> dict:
        return {"resource_type": self.pattern.resource_type.name, "resource_name": self.pattern.name,
                "pattern_type": self.pattern.pattern_type.name, "principal": self.entry.principal,
                "host": self.entry.host, "operation": self.entry.operation.name,
                "permission_type": self.entry.permission_type.name}

    @classmethod
    def from_json(cls, d: dict) -> "AclBinding":
        return cls(ResourcePattern(ResourceType[d["resource_type"]], d["resource_name"], PatternType[d["pattern_type"]]),
                   AccessControlEntry(d["principal"], d["host"], AclOperation[d["operation"]],
                                      AclPermissionType[d["permission_type"]]))


@frozen_dataclass
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None
    pattern_type: PatternType

    def is_unknown(self) -> bool:
        return self.resource_type == ResourceType.UNKNOWN or self.pattern_type == PatternType.UNKNOWN

    def matches(self, pattern: ResourcePattern) -> bool:
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type == PatternType.ANY or self.pattern_type == pattern.pattern_type:
            return self.name == pattern.name
        if pattern.pattern_type == PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD_RESOURCE
        if pattern.pattern_type == PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False


@frozen_dataclass
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def is_unknown(self) -> bool:
        return self.operation == AclOperation.UNKNOWN or self.permission_type == AclPermissionType.UNKNOWN

    def matches(self, entry: AccessControlEntry) -> bool:
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != entry.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or self.permission_type == entry.permission_type


@frozen_dataclass
class AclBindingFilter:
    pattern: ResourcePatternFilter
    entry: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)

    def is_unknown(self) -> bool:
        return self.pattern.is_unknown() or self.entry.is_unknown()


ANY_FILTER = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
                              AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY))


class AclValidationError(ValueError):
    """A binding Kafka's AclControlManager (or AclApis) refuses with INVALID_REQUEST; the message is Kafka's."""


def validate_new_binding(binding: AclBinding) -> None:
    """The checks of Kafka's AclApis.handleCreateAcls and AclControlManager.validateNewAcl, in their order."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        raise AclValidationError(f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}")
    if pattern.name == "":
        raise AclValidationError("Invalid empty resource name")
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        raise AclValidationError(f"Invalid resourceType {pattern.resource_type.name}")
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise AclValidationError(f"Invalid patternType {pattern.pattern_type.name}")
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        raise AclValidationError(f"Invalid operation {entry.operation.name}")
    if entry.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY):
        raise AclValidationError(f"Invalid permissionType {entry.permission_type.name}")
    if pattern.name is None:
        raise AclValidationError("Resource name should not be empty")
    principal_type, sep, _ = entry.principal.partition(":")
    if not sep or not principal_type:
        raise AclValidationError(f"Could not parse principal from `{entry.principal}` "
                                 "(no colon is present separating the principal type from the principal name)")
