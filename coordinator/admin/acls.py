"""`groupcoord acls add|list|remove`: kafka-acls.sh over the wire (CreateAcls, DescribeAcls, DeleteAcls).

The options are kafka-acls.sh's (AclCommand): resources ``--topic``, ``--group``, ``--cluster``,
``--transactional-id`` (each repeatable, ``*`` for all) with ``--resource-pattern-type``; entries from
``--allow-principal``/``--deny-principal`` crossed with ``--operation`` (default All) and
``--allow-host``/``--deny-host`` (default ``*``); the ``--producer`` (WRITE, DESCRIBE, CREATE on topics;
WRITE, DESCRIBE on transactional ids; ``--idempotent``: IDEMPOTENT_WRITE on the cluster) and ``--consumer``
(READ, DESCRIBE on topics, READ on groups) conveniences. The text output is AclCommand's own
("Current ACLs for resource `ResourcePattern(...)`:" then one tab-indented entry per line), so scripts
written against kafka-acls.sh read it unchanged; ``--json`` prints the bindings as one document.
"""

from __future__ import annotations

import argparse
import sys
from typing import Iterable, TextIO

from groupcoord.protocol.errors import kafka_name

from ..security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from ..security.principal import KafkaPrincipal
from . import render
from .client import AdminClient, AdminError, ApiKey
from .commands import client_security

CLUSTER_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
PATTERN_TYPES = {"literal": PatternType.LITERAL, "prefixed": PatternType.PREFIXED, "match": PatternType.MATCH,
                 "any": PatternType.ANY}


class UsageError(AdminError):
    """What AclCommand refuses with printUsageAndExit."""


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--topic", action="append", default=[], help="topic ('*' for all); repeatable")
    parser.add_argument("--group", action="append", default=[], help="consumer group ('*' for all); repeatable")
    parser.add_argument("--cluster", action="store_true", help="the cluster resource")
    parser.add_argument("--transactional-id", action="append", default=[], help="transactional id; repeatable")
    parser.add_argument("--resource-pattern-type", default="literal", type=str.lower, choices=sorted(PATTERN_TYPES),
                        help="literal (default) or prefixed; list and remove also take match and any")
    parser.add_argument("--allow-principal", action="append", default=[], metavar="TYPE:NAME")
    parser.add_argument("--deny-principal", action="append", default=[], metavar="TYPE:NAME")
    parser.add_argument("--allow-host", action="append", default=[], help="default '*' with --allow-principal")
    parser.add_argument("--deny-host", action="append", default=[], help="default '*' with --deny-principal")
    parser.add_argument("--operation", action="append", default=[],
                        help="All (default), Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
                             "DescribeConfigs, AlterConfigs, IdempotentWrite; repeatable")
    parser.add_argument("--producer", action="store_true", help="WRITE, DESCRIBE, CREATE on topics (and ids)")
    parser.add_argument("--idempotent", action="store_true", help="with --producer: IDEMPOTENT_WRITE on the cluster")
    parser.add_argument("--consumer", action="store_true", help="READ, DESCRIBE on topics, READ on groups")


def parse_operation(name: str) -> AclOperation:
    """SecurityUtils.operation: ``Read``, ``IdempotentWrite``, ``describe_configs``, case-insensitive."""
    key = name.strip().replace("_", "").replace("-", "").lower()
    for op in AclOperation:
        if op.name.replace("_", "").lower() == key and op not in (AclOperation.UNKNOWN, AclOperation.ANY):
            return op
    raise UsageError(f"unknown operation {name!r}")


def _principals(values: Iterable[str]) -> list[str]:
    out = []
    for v in values:
        try:
            out.append(str(KafkaPrincipal.parse(v.strip())))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return out


def resource_filters(args: argparse.Namespace, required: bool = True) -> list[ResourcePatternFilter]:
    pattern = PATTERN_TYPES[args.resource_pattern_type]
    filters = [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pattern) for t in args.topic]
    if pattern == PatternType.LITERAL and (args.cluster or getattr(args, "idempotent", False)):
        filters.append(CLUSTER_FILTER)
    filters += [ResourcePatternFilter(ResourceType.GROUP, g.strip(), pattern) for g in args.group]
    filters += [ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pattern) for t in args.transactional_id]
    if not filters and required:
        raise UsageError("You must provide at least one resource: --topic <topic> or --cluster or --group <group>")
    return list(dict.fromkeys(filters))


def _entries(args: argparse.Namespace, operations: set[AclOperation]) -> set[AccessControlEntry]:
    allowed, denied = _principals(args.allow_principal), _principals(args.deny_principal)
    allow_hosts = [h.strip() for h in args.allow_host] or (["*"] if allowed else [])
    deny_hosts = [h.strip() for h in args.deny_host] or (["*"] if denied else [])
    entries = {AccessControlEntry(p, h, op, AclPermissionType.ALLOW) for p in allowed for op in operations for h in allow_hosts}
    entries |= {AccessControlEntry(p, h, op, AclPermissionType.DENY) for p in denied for op in operations for h in deny_hosts}
    return entries


def filter_entries(args: argparse.Namespace) -> dict[ResourcePatternFilter, set[AccessControlEntry]]:
    """AclCommand.getResourceFilterToAcls: what each resource (filter) gets, the conveniences included."""
    if args.idempotent and not args.producer:
        raise UsageError("The --idempotent option is only available if --producer is set")
    result: dict[ResourcePatternFilter, set[AccessControlEntry]] = {}
    filters = resource_filters(args)
    if not args.producer and not args.consumer:
        ops = {parse_operation(o) for o in (args.operation or ["All"])}
        result.update({f: _entries(args, ops) for f in filters})
    if args.producer:
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                result[f] = _entries(args, {AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.CREATE})
            elif f.resource_type == ResourceType.TRANSACTIONAL_ID:
                result[f] = _entries(args, {AclOperation.WRITE, AclOperation.DESCRIBE})
        if args.idempotent:
            result[CLUSTER_FILTER] = _entries(args, {AclOperation.IDEMPOTENT_WRITE})
    if args.consumer:
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                result[f] = result.get(f, set()) | _entries(args, {AclOperation.READ, AclOperation.DESCRIBE})
            elif f.resource_type == ResourceType.GROUP:
                result[f] = result.get(f, set()) | _entries(args, {AclOperation.READ})
    for f, entries in result.items():
        valid = set(SUPPORTED_OPERATIONS[f.resource_type]) | {AclOperation.ALL}
        if {e.operation for e in entries} - valid:
            raise UsageError(f"ResourceType {f.resource_type.name} only supports operations "
                             f"{', '.join(sorted(op.title for op in valid))}")
    return result


def entry_text(e: AccessControlEntry) -> str:
    """AccessControlEntry.toString."""
    return f"(principal={e.principal}, host={e.host}, operation={e.operation.name}, permissionType={e.permission_type.name})"


def pattern_text(pattern: ResourcePattern | ResourcePatternFilter) -> str:
    """ResourcePattern.toString (and ResourcePatternFilter's, which names no name ``<any>``)."""
    name = "<any>" if pattern.name is None else pattern.name
    return f"ResourcePattern(resourceType={pattern.resource_type.name}, name={name}, patternType={pattern.pattern_type.name})"


def resource_block(title: str, pattern: ResourcePattern | ResourcePatternFilter, entries: Iterable[AccessControlEntry]) -> str:
    """AclCommand's block: a title line naming the resource, one tab-indented entry per line, a blank line."""
    resource = pattern_text(pattern)
    lines = "\n".join("\t" + entry_text(e) for e in entries)
    return f"{title} `{resource}`: \n {lines} \n"


def _binding_json(pattern: ResourcePattern, e: AccessControlEntry) -> dict:
    return {"resource_type": pattern.resource_type.name, "resource_name": pattern.name,
            "pattern_type": pattern.pattern_type.name, "principal": e.principal, "host": e.host,
            "operation": e.operation.name, "permission_type": e.permission_type.name}


def _client(args: argparse.Namespace) -> AdminClient:
    """Authenticated as ``--command-config`` says (Kafka's client properties), as every admin command."""
    return AdminClient(args.bootstrap_server, timeout=args.timeout, security=client_security(args))


def _write(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")


async def create(client: AdminClient, bindings: list[AclBinding]) -> None:
    _, response = await client.request(ApiKey.CREATE_ACLS, {"creations": [
        {"resource_type": int(b.pattern.resource_type), "resource_name": b.pattern.name,
         "resource_pattern_type": int(b.pattern.pattern_type), "principal": b.entry.principal, "host": b.entry.host,
         "operation": int(b.entry.operation), "permission_type": int(b.entry.permission_type)} for b in bindings]})
    for b, r in zip(bindings, response.results):
        if int(r.error_code):
            raise AdminError(f"CreateAcls for {entry_text(b.entry)} failed with {kafka_name(int(r.error_code))}"
                             + (f": {r.error_message}" if r.error_message else ""))


async def describe(client: AdminClient, f: ResourcePatternFilter) -> list[AclBinding]:
    _, r = await client.request(ApiKey.DESCRIBE_ACLS, {
        "resource_type_filter": int(f.resource_type), "resource_name_filter": f.name,
        "pattern_type_filter": int(f.pattern_type), "principal_filter": None, "host_filter": None,
        "operation": int(AclOperation.ANY), "permission_type": int(AclPermissionType.ANY)})
    if int(r.error_code):
        raise AdminError(f"DescribeAcls failed with {kafka_name(int(r.error_code))}"
                         + (f": {r.error_message}" if r.error_message else ""))
    return [AclBinding(ResourcePattern(ResourceType.from_code(int(res.resource_type)), res.resource_name,
                                       PatternType.from_code(int(res.pattern_type))),
                       AccessControlEntry(a.principal, a.host, AclOperation.from_code(int(a.operation)),
                                          AclPermissionType.from_code(int(a.permission_type))))
            for res in r.resources for a in res.acls]


async def delete(client: AdminClient, f: ResourcePatternFilter, entries: set[AccessControlEntry]) -> list[AclBinding]:
    wanted = ([(e.principal, e.host, int(e.operation), int(e.permission_type)) for e in entries]
              or [(None, None, int(AclOperation.ANY), int(AclPermissionType.ANY))])
    _, r = await client.request(ApiKey.DELETE_ACLS, {"filters": [
        {"resource_type_filter": int(f.resource_type), "resource_name_filter": f.name,
         "pattern_type_filter": int(f.pattern_type), "principal_filter": p, "host_filter": h, "operation": op,
         "permission_type": perm} for p, h, op, perm in wanted]})
    removed = []
    for result in r.filter_results:
        if int(result.error_code):
            raise AdminError(f"DeleteAcls failed with {kafka_name(int(result.error_code))}"
                             + (f": {result.error_message}" if result.error_message else ""))
        removed += [AclBinding(ResourcePattern(ResourceType.from_code(int(m.resource_type)), m.resource_name,
                                               PatternType.from_code(int(m.pattern_type))),
                               AccessControlEntry(m.principal, m.host, AclOperation.from_code(int(m.operation)),
                                                  AclPermissionType.from_code(int(m.permission_type))))
                    for m in result.matching_acls]
    return removed


async def acls_add(args: argparse.Namespace, out: TextIO) -> None:
    pattern = PATTERN_TYPES[args.resource_pattern_type]
    if pattern not in (PatternType.LITERAL, PatternType.PREFIXED):
        raise UsageError(f"A '--resource-pattern-type' value of '{pattern.name}' is not valid when adding acls.")
    plan = filter_entries(args)
    if any(not entries for entries in plan.values()):
        raise UsageError("You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.")
    added = []
    async with _client(args) as client:
        for f, entries in plan.items():
            resource = ResourcePattern(f.resource_type, f.name or "", f.pattern_type)
            ordered = sorted(entries, key=entry_text)
            if not args.json:
                _write(out, resource_block("Adding ACLs for resource", resource, ordered))
            await create(client, [AclBinding(resource, e) for e in ordered])
            added += [_binding_json(resource, e) for e in ordered]
    if args.json:
        _write(out, render.to_json({"added": added}))


async def acls_list(args: argparse.Namespace, out: TextIO) -> None:
    filters = resource_filters(args, required=False) or [ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)]
    principals = _principals(args.principal or [])
    by_resource: dict[ResourcePattern, list[AccessControlEntry]] = {}
    async with _client(args) as client:
        for f in filters:
            for b in await describe(client, f):
                if not principals or b.entry.principal in principals:
                    entries = by_resource.setdefault(b.pattern, [])
                    if b.entry not in entries:
                        entries.append(b.entry)
    if args.json:
        _write(out, render.to_json([_binding_json(p, e) for p, entries in by_resource.items() for e in entries]))
        return
    for pattern, entries in by_resource.items():
        _write(out, resource_block("Current ACLs for resource", pattern, entries))


async def acls_remove(args: argparse.Namespace, out: TextIO) -> None:
    plan = filter_entries(args)
    removed = []
    async with _client(args) as client:
        for f, entries in plan.items():
            if not args.force:
                what = ("all ACLs for resource filter" if not entries
                        else "ACLs: \n " + "\n".join("\t" + entry_text(e) for e in sorted(entries, key=entry_text))
                        + " \n from resource filter")
                if not _confirm(f"Are you sure you want to delete {what} `{pattern_text(f)}`? (y/n)"):
                    continue
            removed += [_binding_json(b.pattern, b.entry) for b in await delete(client, f, entries)]
    if args.json:
        _write(out, render.to_json({"removed": removed}))


def _confirm(question: str) -> bool:
    print(question, file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")
