"""Kafka's StandardAuthorizer: may this principal, from this host, do this operation on this resource?

The broker has one only when ``authorizer.class.name`` names Kafka's StandardAuthorizer (or the older
``kafka.security.authorizer.AclAuthorizer``); otherwise ``services.authorizer`` is None and every API skips
its checks after that one attribute test, as Kafka's ``AuthHelper`` does with no authorizer configured.

The decision is StandardAuthorizerData's:
- a principal named in ``super.users`` (``User:a;User:b``) may do anything;
- otherwise every ACL whose pattern covers the resource (its literal name, the ``*`` wildcard, any prefix)
  is looked at; a DENY whose principal (or ``User:*``), host (or ``*``) and operation (or ALL) match wins;
  else a matching ALLOW allows, where ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE and ALLOW
  of ALTER_CONFIGS also allows DESCRIBE_CONFIGS (a DENY implies nothing);
- if no ACL covers the resource at all, ``allow.everyone.if.no.acl.found`` decides (default: deny); if
  some do but none matched, deny.

The one entry point every API uses::

    auth = services.authorizer
    if auth is not None and not auth.authorize(ctx, AclOperation.READ, ResourceType.GROUP, group_id):
        ...GROUP_AUTHORIZATION_FAILED...

plus ``filter_authorized(ctx, op, type, names)`` (Kafka's ``filterByAuthorized``: the allowed subset),
``authorized_operations(ctx, type, name)`` (the include_*_authorized_operations bitfields) and
``authorize_by_resource_type`` (InitProducerId's "may write to some topic").

Transactions (Kafka 4.3 KafkaApis' exact checks, made by the transaction API modules here):
- InitProducerId with a transactional id: WRITE on TRANSACTIONAL_ID ``transactional_id`` else the whole
  response is TRANSACTIONAL_ID_AUTHORIZATION_FAILED (served here in apis/init_producer_id.py already).
- AddPartitionsToTxn v0-3 (client): WRITE on TRANSACTIONAL_ID else every partition
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then WRITE on each non-internal TOPIC (filter_authorized): the
  unauthorised partitions TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED (nothing added);
  an unknown topic UNKNOWN_TOPIC_OR_PARTITION, likewise failing the rest. v4+ (broker-to-broker batches):
  CLUSTER_ACTION on the CLUSTER first, else the top-level CLUSTER_AUTHORIZATION_FAILED; then the per
  transaction checks as for v3 on each transaction of the batch.
- AddOffsetsToTxn: WRITE on TRANSACTIONAL_ID else TRANSACTIONAL_ID_AUTHORIZATION_FAILED, then READ on
  GROUP ``group_id`` else GROUP_AUTHORIZATION_FAILED.
- EndTxn: WRITE on TRANSACTIONAL_ID else TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
- TxnOffsetCommit: WRITE on TRANSACTIONAL_ID else TRANSACTIONAL_ID_AUTHORIZATION_FAILED (whole response,
  every partition); then READ on GROUP else GROUP_AUTHORIZATION_FAILED (every partition); then READ on
  each TOPIC (filter_authorized): unauthorised topics' partitions TOPIC_AUTHORIZATION_FAILED, unknown
  ones UNKNOWN_TOPIC_OR_PARTITION, the rest committed.
- Produce with transactional records: WRITE on TRANSACTIONAL_ID (null id: refused) else the whole
  response TRANSACTIONAL_ID_AUTHORIZATION_FAILED (apis/produce.py does it).
- DescribeTransactions: per id, DESCRIBE on TRANSACTIONAL_ID else that state's error
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED; for an authorised one, its topic partitions are filtered to the
  topics with DESCRIBE on TOPIC (the others dropped silently).
- ListTransactions: only the ids with DESCRIBE on TRANSACTIONAL_ID are listed (no error, no log of the
  denials: ``filter_authorized(..., log_if_denied=False)``).
- WriteTxnMarkers: ALTER on CLUSTER (log_if_denied=False), else CLUSTER_ACTION on CLUSTER, else the request
  fails with CLUSTER_AUTHORIZATION_FAILED.
- FindCoordinator key_type 1 (transaction): DESCRIBE on TRANSACTIONAL_ID ``key`` else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED (apis/find_coordinator.py does it).

The admin APIs (Kafka 4.3's checks; their modules in apis/ make them):
- AlterConfigs/IncrementalAlterConfigs: ALTER_CONFIGS on the CLUSTER (broker, broker logger, client metrics
  resources; CLUSTER_AUTHORIZATION_FAILED), the TOPIC (TOPIC_AUTHORIZATION_FAILED) or the GROUP
  (GROUP_AUTHORIZATION_FAILED), per resource.
- DeleteRecords: DELETE on each TOPIC (TOPIC_AUTHORIZATION_FAILED per partition).
- DescribeLogDirs: DESCRIBE on the CLUSTER, else an empty answer with CLUSTER_AUTHORIZATION_FAILED.
- DescribeTopicPartitions: like Metadata, DESCRIBE on each TOPIC (refused ones TOPIC_AUTHORIZATION_FAILED,
  all-topics listings filtered silently).
- DescribeClientQuotas: DESCRIBE_CONFIGS on the CLUSTER; AlterClientQuotas: ALTER_CONFIGS on the CLUSTER.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

import structlog

from groupcoord.protocol.registry import api_name

from .acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    to_bitfield,
)
from .acl_store import AclStore
from .principal import KafkaPrincipal

if TYPE_CHECKING:
    from ..server.dispatch import RequestContext

log = structlog.get_logger("groupcoord.authorizer")

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
ACCEPTED_AUTHORIZERS = (STANDARD_AUTHORIZER, ACL_AUTHORIZER)

_IMPLIES_DESCRIBE = frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                               AclOperation.DELETE, AclOperation.ALTER})
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})

MEMBER_CONTEXTS = 100_000
DECISION_CACHE = 65_536
DENIAL_LOG_QUIET_S = 10.0
DENIAL_LOG_MAX_KEYS = 10_000


class DenialObserver(Protocol):
    def on_authorization_denied(self, api: str) -> None: ...


def parse_super_users(text: str | None) -> frozenset[str]:
    """Kafka's ``super.users``: principals separated by ``;`` (each must parse as ``Type:name``)."""
    users = set()
    for part in (text or "").split(";"):
        part = part.strip()
        if part:
            KafkaPrincipal.parse(part)
            users.add(part)
    return frozenset(users)


def _api_name(api_key: int) -> str:
    try:
        return api_name(api_key)
    except Exception:  # an unknown key is still worth a log line
        return str(api_key)


class Authorizer:
    def __init__(self, store: AclStore, super_users: Iterable[str] = (), allow_if_no_acl: bool = False,
                 observer: DenialObserver | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self.observer = observer
        self._clock = clock
        self._last_logged: dict[tuple, list] = {}
        self._members: dict[str, tuple[KafkaPrincipal, str]] = {}
        self._cache: dict[tuple, bool] = {}
        self._cache_generation = -1
        self._open_generation = -1  # the ACL generation at which the set was found empty with allow_if_no_acl

    def allows_everything(self) -> bool:
        """True while every decision is ALLOW whatever is asked: no ACL at all and
        ``allow.everyone.if.no.acl.found`` (Kafka's answer for a resource without ACLs, and there is none).
        Constant time: the request paths test this first, so an authorizer with nothing to enforce costs one
        comparison a check (and the hot lanes stay open)."""
        store = self.store
        if self._open_generation == store.generation:
            return True
        if self.allow_if_no_acl and len(store) == 0:
            self._open_generation = store.generation
            return True
        return False

    # -- decisions --------------------------------------------------------------------------------
    def decide(self, principal: KafkaPrincipal, host: str, op: AclOperation, rtype: ResourceType, name: str) -> bool:
        """StandardAuthorizerData.authorize for one literal resource, without logging. Decisions are
        remembered until the ACL set changes (a heartbeat's READ on its group is then one dict look-up)."""
        store = self.store
        if self._open_generation == store.generation:
            return True  # no ACL and allow.everyone.if.no.acl.found (allows_everything)
        if self._cache_generation != store.generation:
            self._cache.clear()
            self._cache_generation = store.generation
            if self.allows_everything():
                return True
        key = (principal, host, op, rtype, name)
        known = self._cache.get(key)
        if known is not None:
            return known
        result = self._decide(principal, host, op, rtype, name)
        if len(self._cache) >= DECISION_CACHE:
            self._cache.clear()
        self._cache[key] = result
        return result

    def _decide(self, principal: KafkaPrincipal, host: str, op: AclOperation, rtype: ResourceType, name: str) -> bool:
        own = f"{principal.principal_type}:{principal.name}"
        if own in self.super_users:
            return True
        has_resource_acls = False
        allowed = False
        for b in self.store.index.covering(rtype, name):
            has_resource_acls = True
            e = b.entry
            if e.principal != own and e.principal != WILDCARD_PRINCIPAL:
                continue
            if e.host != WILDCARD_HOST and e.host != host:
                continue
            if e.operation != AclOperation.ALL:
                if e.permission_type == AclPermissionType.ALLOW:
                    if op == AclOperation.DESCRIBE:
                        if e.operation not in _IMPLIES_DESCRIBE:
                            continue
                    elif op == AclOperation.DESCRIBE_CONFIGS:
                        if e.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                            continue
                    elif e.operation != op:
                        continue
                elif e.operation != op:
                    continue
            if e.permission_type == AclPermissionType.DENY:
                return False
            if e.permission_type == AclPermissionType.ALLOW:
                allowed = True
        if allowed:
            return True
        return False if has_resource_acls else self.allow_if_no_acl

    def authorize(self, ctx: "RequestContext", op: AclOperation, rtype: ResourceType, name: str,
                  log_if_denied: bool = True) -> bool:
        """AuthHelper.authorize: one operation on one literal resource; a denial is counted and logged."""
        if self._open_generation == self.store.generation:
            return True  # no ACL and allow.everyone.if.no.acl.found (allows_everything)
        ok = self.decide(ctx.principal, _host(ctx.client_host), op, rtype, name)
        if not ok and log_if_denied:
            self._denied(ctx, op, rtype, name)
        return ok

    def authorize_cluster(self, ctx: "RequestContext", op: AclOperation, log_if_denied: bool = True) -> bool:
        return self.authorize(ctx, op, ResourceType.CLUSTER, CLUSTER_NAME, log_if_denied)

    def filter_authorized(self, ctx: "RequestContext", op: AclOperation, rtype: ResourceType,
                          names: Iterable[str], log_if_denied: bool = True) -> set[str]:
        """AuthHelper.filterByAuthorized: the distinct names allowed (each decided once)."""
        return {n for n in set(names) if self.authorize(ctx, op, rtype, n, log_if_denied)}

    def authorized_operations(self, ctx: "RequestContext", rtype: ResourceType, name: str) -> int:
        """AuthHelper.authorizedOperations: the bitfield of the type's supported operations allowed."""
        principal, host = ctx.principal, _host(ctx.client_host)
        return to_bitfield({op for op in SUPPORTED_OPERATIONS[rtype] if self.decide(principal, host, op, rtype, name)})

    def authorize_by_resource_type(self, ctx: "RequestContext", op: AclOperation, rtype: ResourceType) -> bool:
        """Authorizer.authorizeByResourceType's default: allowed on some resource of the type, unless a
        dominating DENY covers it (a literal deny of the same name, a prefix deny covering the allow)."""
        principal, host = ctx.principal, _host(ctx.client_host)
        if self.decide(principal, host, op, rtype, "hardcode"):
            return True
        own = f"{principal.principal_type}:{principal.name}"
        deny_literal: set[str] = set()
        deny_prefixed: set[str] = set()
        allow_literal: set[str] = set()
        allow_prefixed: set[str] = set()
        wildcard_allow = False
        for b in self.store.bindings():
            if b.pattern.resource_type != rtype:
                continue
            e = b.entry
            if e.host != host and e.host != WILDCARD_HOST:
                continue
            if e.principal != own and e.principal != WILDCARD_PRINCIPAL:
                continue
            if e.operation != op and e.operation != AclOperation.ALL:
                continue
            literal = b.pattern.pattern_type == PatternType.LITERAL
            if e.permission_type == AclPermissionType.DENY:
                if literal and b.pattern.name == "*":
                    return False
                (deny_literal if literal else deny_prefixed).add(b.pattern.name)
            elif e.permission_type == AclPermissionType.ALLOW:
                if literal and b.pattern.name == "*":
                    wildcard_allow = True
                else:
                    (allow_literal if literal else allow_prefixed).add(b.pattern.name)
        if wildcard_allow:
            return True
        for kind, names in ((PatternType.LITERAL, allow_literal), (PatternType.PREFIXED, allow_prefixed)):
            for allowed in names:
                if kind == PatternType.LITERAL and allowed in deny_literal:
                    continue
                if not any(allowed[:i] in deny_prefixed for i in range(1, len(allowed) + 1)):
                    return True
        return False

    # -- regex subscriptions ------------------------------------------------------------------------------
    def remember_member(self, member_id: str, ctx: "RequestContext") -> None:
        """The principal and host a consumer group member last heartbeated as: its regex subscription
        resolves to what they may DESCRIBE (Kafka resolves it with the request context of the heartbeat
        that changed it). Kept for the last ``MEMBER_CONTEXTS`` members, in memory."""
        if not member_id:
            return
        self._members.pop(member_id, None)
        self._members[member_id] = (ctx.principal, _host(ctx.client_host))
        if len(self._members) > MEMBER_CONTEXTS:
            self._members.pop(next(iter(self._members)))

    def visible_to_member(self, member_id: str, topics: set[str]) -> set[str]:
        """The topics of a regex match the member's principal may DESCRIBE (denials not logged: a filter).
        A member not heard from since this broker started keeps the whole match, as its assignment did."""
        known = self._members.get(member_id)
        if known is None:
            return topics
        principal, host = known
        return {t for t in topics if self.decide(principal, host, AclOperation.DESCRIBE, ResourceType.TOPIC, t)}

    # -- the ACL set --------------------------------------------------------------------------------
    def acls(self, flt: AclBindingFilter) -> list[AclBinding]:
        return self.store.matching(flt)

    def create_acls(self, bindings: Iterable[AclBinding]) -> None:
        self.store.add(bindings)

    def delete_acls(self, filters: Iterable[AclBindingFilter]) -> list[list[AclBinding]]:
        return self.store.remove(filters)

    # -- denials ---------------------------------------------------------------------------------------
    def _denied(self, ctx: "RequestContext", op: AclOperation, rtype: ResourceType, name: str) -> None:
        api = _api_name(ctx.api_key)
        if self.observer is not None:
            self.observer.on_authorization_denied(api)
        key = (str(ctx.principal), ctx.client_host, api, op, rtype, name)
        now = self._clock()
        seen = self._last_logged.get(key)
        if seen is not None and now - seen[0] <= DENIAL_LOG_QUIET_S:
            seen[1] += 1  # the same denial again within the quiet spell: counted, not logged
            return
        if len(self._last_logged) >= DENIAL_LOG_MAX_KEYS:
            self._last_logged.clear()
        repeats = seen[1] if seen is not None else 0
        self._last_logged[key] = [now, 0]
        log.info("authorization denied", principal=str(ctx.principal), host=ctx.client_host, api=api,
                 operation=op.name, resource=f"{rtype.title}:LITERAL:{name}",
                 **({"repeats_since_last_line": repeats} if repeats else {}))


def _host(client_host: str) -> str:
    """The client's address as the authorizer compares it with an ACL's host (no leading ``/``)."""
    return client_host[1:] if client_host.startswith("/") else client_host


def authorizer_from_config(config: Any, data_dir: Any, observer: DenialObserver | None = None) -> Authorizer | None:
    """None unless ``authorizer.class.name`` names Kafka's StandardAuthorizer (or AclAuthorizer)."""
    name = (getattr(config, "authorizer_class_name", "") or "").strip()
    if not name:
        return None
    if name not in ACCEPTED_AUTHORIZERS:
        raise ValueError(f"authorizer.class.name {name!r} is not supported: use {STANDARD_AUTHORIZER}")
    return Authorizer(AclStore(data_dir), parse_super_users(getattr(config, "super_users", "")),
                      bool(getattr(config, "allow_everyone_if_no_acl_found", False)), observer)
