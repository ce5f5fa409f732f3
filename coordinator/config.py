"""Broker settings, named as Kafka names them, resolved flag > environment > TOML file > default.

Every setting is declared once in `SETTINGS`; its command-line flag (`--group-max-size`), environment
variable (`GROUPCOORD_GROUP_MAX_SIZE`), TOML key (`"group.max.size"`) and attribute on `BrokerConfig`
(`group_max_size`) are all derived from its dotted name, so the four spellings cannot drift apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import os
from pathlib import Path
from typing import Any, Callable, Mapping

from groupcoord.coordinator.loop_load import BUSY_SHARE, WINDOW_S
from groupcoord.protocol.frozen import frozen_dataclass

ENV_PREFIX = "GROUPCOORD_"


class Fsync(enum.StrEnum):
    ALWAYS = "always"
    BATCH = "batch"
    NEVER = "never"


class LogFormat(enum.StrEnum):
    AUTO = "auto"
    CONSOLE = "console"
    JSON = "json"


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def _host_port(value: Any) -> tuple[str, int]:
    if isinstance(value, (tuple, list)):
        return str(value[0]), int(value[1])
    text = str(value)
    host, sep, port = text.rpartition(":")
    if not sep:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    host = host.strip("[]")
    return host, int(port)


def per_host_limits(value: Any) -> dict[str, int]:
    """Kafka's max.connections.per.ip.overrides: "host:limit,host:limit" (a host name or an IP address)."""
    if isinstance(value, dict):
        return {str(k): int(v) for k, v in value.items()}
    out: dict[str, int] = {}
    for item in str(value or "").split(","):
        item = item.strip()
        if not item:
            continue
        host, sep, limit = item.rpartition(":")
        if not sep or not host:
            raise ValueError(f"expected HOST:LIMIT, got {item!r}")
        out[host.strip("[]")] = int(limit)
    return out


def _optional_host_port(value: Any) -> tuple[str, int] | None:
    if value in (None, ""):
        return None
    return _host_port(value)


def _optional_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


class Password(str):
    """A secret setting (Kafka's PASSWORD type): used as its text, shown as ``[hidden]`` in every repr, so a
    logged or printed config never carries it."""

    def __repr__(self) -> str:
        return "[hidden]"


def _optional_password(value: Any) -> Password | None:
    return None if value in (None, "") else Password(str(value))


LISTENER_PREFIX = "listener.name."


def _int_between(low: int, high: int) -> Callable[[Any], int]:
    """An int within [low, high], as Kafka's ConfigDef ``between`` (atLeast when high is the int maximum)."""

    def convert(value: Any) -> int:
        number = int(value)
        if not low <= number <= high:
            raise ValueError(f"value must be between {low} and {high}, got {number}")
        return number

    return convert


def is_listener_setting(name: str) -> bool:
    """``listener.name.<listener>.<setting>``: Kafka's per-listener overrides (``...scram-sha-512.sasl.jaas.config``)."""
    return name.startswith(LISTENER_PREFIX) and name.count(".") >= 3


def _listener_settings(value: Any) -> tuple[tuple[str, str], ...]:
    """As (key, value) pairs, so the frozen config stays hashable; ``BrokerConfig.listener_setting`` reads them."""
    if not value:
        return ()
    if isinstance(value, str):  # the environment: one KEY=VALUE a line (a JAAS value holds ';')
        value = [line for line in value.splitlines() if line.strip()]
    items = value.items() if isinstance(value, Mapping) else (str(v).partition("=")[::2] for v in value)
    out: dict[str, str] = {}
    for key, val in items:
        key = str(key).strip()
        if not is_listener_setting(key):
            raise ValueError(f"not a listener setting (listener.name.<listener>.<setting>): {key!r}")
        out[key] = Password(str(val)) if key.endswith(("jaas.config", "password", "keystore.key")) else str(val)
    return tuple(sorted(out.items()))


AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer")


def _authorizer_class(value: Any) -> str:
    """Kafka's StandardAuthorizer (or its older AclAuthorizer name) or nothing: refused at start, not later."""
    name = str(value or "").strip()
    if name and name not in AUTHORIZERS:
        raise ValueError(f"authorizer.class.name {name!r} is not supported: use {AUTHORIZERS[0]}")
    return name


def _super_users(value: Any) -> str:
    """``User:a;User:b``, each as Kafka's SecurityUtils.parseKafkaPrincipal accepts it (Type:name)."""
    text = str(value or "")
    for part in text.split(";"):
        kind, sep, _ = part.strip().partition(":")
        if part.strip() and (not sep or not kind):
            raise ValueError(f"super.users: expected principals as Type:name separated by ';', got {part.strip()!r}")
    return text


@frozen_dataclass(slots=False)
class Setting:
    """One broker setting: its dotted name, default, parser and help; its flag, environment variable and attribute
    derive from the name."""
    name: str  # dotted, Kafka's spelling where Kafka has the setting
    default: Any
    parse: Callable[[Any], Any]
    help: str
    kafka: bool = True  # False for settings of our own

    @property
    def attr(self) -> str:
        return self.name.replace(".", "_").replace("-", "_")

    @property
    def flag(self) -> str:
        return "--" + self.name.replace(".", "-").replace("_", "-")

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.attr.upper()


SETTINGS: tuple[Setting, ...] = (
    # ours
    Setting("listen", ("127.0.0.1", 9092), _host_port, "HOST:PORT to accept connections on (port 0 picks a free port)", False),
    Setting("advertised", None, _optional_host_port, "HOST:PORT clients are told to connect to (default: the listen address)", False),
    Setting("data.dir", "./data", str, "directory for the logs (every partition, __consumer_offsets included)", False),
    Setting("fsync", Fsync.BATCH, Fsync, "durability: always (fsync each append), batch (group commit), never (page cache)", False),
    Setting("metrics.port", 9404, int, "Prometheus metrics HTTP port on the listen host (0 = off, -1 = any free port)", False),
    Setting("log.level", "info", str, "debug, info, warning, error", False),
    Setting("log.format", LogFormat.AUTO, LogFormat, "console, json, or auto (console on a TTY, JSON otherwise)", False),
    Setting("connection.max.inflight.requests", 1000, int, "per connection: stop reading while this many requests await their answer", False),
    Setting("connection.max.buffered.bytes", 32 * 1024 * 1024, int, "per connection: stop reading while this many response bytes wait to be sent", False),
    Setting("socket.request.read.timeout.ms", 30000, int, "close a connection whose request frame is still "
            "incomplete this long after its first byte (a slow-loris client); as request.timeout.ms, a client "
            "has given up on such a request by then", False),
    Setting("cluster.id", None, lambda v: None if v in (None, "") else str(v), "cluster id (default: generated once and kept in DATA_DIR/meta.properties)", False),
    Setting("log.max.open.files", 0, int, "segment files kept open at once, least recently used closed first (0 = a quarter of ulimit -n)", False),
    Setting("log.flush.syncfs.min.partitions", 3, int, "fsync=batch: a group-commit round that wrote this many "
            "segment files or more makes them durable with one syncfs of the data directory's filesystem instead of "
            "an fdatasync each (0 = always fdatasync; syncfs also flushes other writers' pages on that filesystem)", False),
    Setting("fetch.busy.linger.ms", 25, int, f"while the event loop has been {BUSY_SHARE:.0%} busy or more over its "
            f"last {WINDOW_S} s, a Fetch woken by new data waits this long before it reads, so that its answer "
            "carries more and the client sends fewer requests (0 = answer at once, as Kafka; an idle broker always "
            "answers at once)", False),
    Setting("authentication.timeout.ms", 10000, int, "close a connection on a TLS or SASL listener that has not "
            "finished its TLS handshake and SASL authentication this long after it was accepted", False),
    Setting("override", (), _listener_settings, "Kafka's per-listener settings, "
            "listener.name.<listener>.<setting>=VALUE (e.g. listener.name.sasl_ssl.plain.sasl.jaas.config); "
            "in TOML write the keys themselves, on the command line --override KEY=VALUE (repeatable)", False),
    # Kafka's
    Setting("node.id", 1, int, "broker node id"),
    Setting("listeners", None, _optional_str, "named listeners, NAME://HOST:PORT,... "
            "(e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093; default: PLAINTEXT on --listen)"),
    Setting("advertised.listeners", None, _optional_str, "NAME://HOST:PORT told to clients per listener "
            "(default: --advertised, else each listener's own address)"),
    Setting("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            str, "listener name to security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"),
    Setting("inter.broker.listener.name", None, _optional_str, "accepted for server.properties compatibility "
            "(single node: must name a listener if set)"),
    Setting("security.inter.broker.protocol", None, _optional_str, "accepted for server.properties compatibility "
            "(single node: no inter-broker traffic)"),
    Setting("sasl.mechanism.inter.broker.protocol", None, _optional_str, "accepted for server.properties "
            "compatibility (single node: no inter-broker traffic)"),
    Setting("ssl.endpoint.identification.algorithm", None, _optional_str, "accepted for server.properties "
            "compatibility (a client-side check; the broker does not connect out)"),
    Setting("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512", str, "SASL mechanisms offered on SASL "
            "listeners: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (Kafka's default, GSSAPI, is not supported)"),
    Setting("sasl.server.max.receive.size", 524288, int, "largest frame accepted before SASL authentication completes"),
    Setting("connections.max.reauth.ms", 0, int, "SASL session lifetime: clients re-authenticate within it "
            "(KIP-368), expired sessions are closed (0 = no expiry)"),
    Setting("connection.failed.authentication.delay.ms", 100, int, "delay before a connection that failed "
            "authentication is closed (slows password guessing)"),
    Setting("ssl.keystore.type", "PEM", str, "PEM only: the key and certificate chain as PEM files or inline PEM"),
    Setting("ssl.keystore.location", None, _optional_str, "PEM file holding the broker's private key and certificate chain"),
    Setting("ssl.keystore.key", None, _optional_password, "the broker's private key as inline PEM (instead of a file)"),
    Setting("ssl.keystore.certificate.chain", None, _optional_str, "the broker's certificate chain as inline PEM"),
    Setting("ssl.key.password", None, _optional_password, "password of an encrypted private key"),
    Setting("ssl.keystore.password", None, _optional_password, "accepted as the key password when ssl.key.password is unset"),
    Setting("ssl.truststore.type", "PEM", str, "PEM only: the CA certificates clients are verified against"),
    Setting("ssl.truststore.location", None, _optional_str, "PEM file of CA certificates that sign client certificates"),
    Setting("ssl.truststore.certificates", None, _optional_str, "CA certificates as inline PEM"),
    Setting("ssl.truststore.password", None, _optional_password, "accepted and unused (PEM truststores have none)"),
    Setting("ssl.client.auth", "none", str, "client certificates: none, requested or required (mutual TLS)"),
    Setting("ssl.enabled.protocols", "TLSv1.2,TLSv1.3", str, "TLS versions accepted (TLSv1.2 and TLSv1.3 only)"),
    Setting("ssl.cipher.suites", None, _optional_str, "OpenSSL cipher list for TLS 1.2 (default: Python's)"),
    Setting("ssl.principal.mapping.rules", "DEFAULT", str, "certificate subject to principal name: "
            "RULE:pattern/replacement/[LU],...,DEFAULT as Kafka's SslPrincipalMapper"),
    Setting("max.connections", 10000, int, "maximum simultaneous client connections (Kafka's default is unlimited)"),
    Setting("max.connections.per.ip", 2147483647, int, "maximum simultaneous connections from one client address; "
            "further ones are closed at once"),
    Setting("max.connections.per.ip.overrides", "", per_host_limits, "per-address exceptions to "
            "max.connections.per.ip, as HOST:LIMIT,HOST:LIMIT (a host name is resolved once at start)"),
    Setting("connections.max.idle.ms", 600000, int, "close a connection that has sent nothing and is owed nothing "
            "for this long"),
    Setting("socket.request.max.bytes", 100 * 1024 * 1024, int, "largest request frame accepted"),
    Setting("group.initial.rebalance.delay.ms", 3000, int, "wait for more members before the first rebalance of an empty group"),
    Setting("group.min.session.timeout.ms", 6000, int, "smallest session timeout a member may ask for"),
    Setting("group.max.session.timeout.ms", 1800000, int, "largest session timeout a member may ask for"),
    Setting("group.max.size", 2147483647, int, "maximum members of a classic group"),
    Setting("group.consumer.session.timeout.ms", 45000, int, "consumer-protocol (KIP-848) member session timeout "
            "(a group's consumer.session.timeout.ms config overrides it)"),
    Setting("group.consumer.min.session.timeout.ms", 45000, int, "smallest consumer.session.timeout.ms a group config may set"),
    Setting("group.consumer.max.session.timeout.ms", 60000, int, "largest consumer.session.timeout.ms a group config may set"),
    Setting("group.consumer.heartbeat.interval.ms", 5000, int, "heartbeat interval told to consumer-protocol members "
            "(a group's consumer.heartbeat.interval.ms config overrides it)"),
    Setting("group.consumer.min.heartbeat.interval.ms", 5000, int, "smallest consumer.heartbeat.interval.ms a group config may set"),
    Setting("group.consumer.max.heartbeat.interval.ms", 15000, int, "largest consumer.heartbeat.interval.ms a group config may set"),
    Setting("group.consumer.max.size", 2147483647, int, "maximum members of a consumer-protocol group"),
    Setting("group.consumer.assignors", "uniform,range", str, "server-side assignors of consumer-protocol groups, the first is the default"),
    Setting("group.consumer.assignment.interval.ms", 1000, _int_between(0, 2**31 - 1), "least time between two "
            "target assignments of a consumer-protocol group (Kafka 4.3's default): epoch bumps within it share one "
            "computation, made by the first heartbeat after it (a group's consumer.assignment.interval.ms "
            "overrides it); 0 computes it in the heartbeat that bumps the group epoch, as Kafka before 4.3"),
    Setting("group.consumer.min.assignment.interval.ms", 0, _int_between(0, 2**31 - 1),
            "smallest consumer.assignment.interval.ms a group config may set"),
    Setting("group.consumer.max.assignment.interval.ms", 15000, _int_between(0, 2**31 - 1),
            "largest consumer.assignment.interval.ms a group config may set"),
    Setting("group.consumer.unreleased.heartbeat.interval.ms", 100, _int_between(0, 2**31 - 1),
            "heartbeat interval told to a consumer-protocol member that waits only for partitions other members "
            "have not released yet (Kafka's UNRELEASED_PARTITIONS), so it asks again soon after they are "
            "released instead of a whole heartbeat interval later (the Java client adopts each answer's "
            "interval); never more than the group's heartbeat interval; 0 = the group's interval, as Kafka", False),
    Setting("group.share.session.timeout.ms", 45000, _int_between(1, 2**31 - 1),
            "share-group (KIP-932) member session timeout"),
    Setting("group.share.heartbeat.interval.ms", 5000, _int_between(1, 2**31 - 1),
            "heartbeat interval told to share-group members"),
    Setting("group.share.max.size", 200, _int_between(1, 1000), "maximum members of a share group (1-1000)"),
    # The broker's bounds on the per-group share.* configs (IncrementalAlterConfigs on GROUP), Kafka 4.3.1's
    # GroupCoordinatorConfig and ShareGroupConfig names, defaults and ranges.
    Setting("group.share.min.session.timeout.ms", 45000, _int_between(1, 2**31 - 1),
            "smallest share.session.timeout.ms a share group config may set"),
    Setting("group.share.max.session.timeout.ms", 60000, _int_between(1, 2**31 - 1),
            "largest share.session.timeout.ms a share group config may set"),
    Setting("group.share.min.heartbeat.interval.ms", 5000, _int_between(1, 2**31 - 1),
            "smallest share.heartbeat.interval.ms a share group config may set"),
    Setting("group.share.max.heartbeat.interval.ms", 15000, _int_between(1, 2**31 - 1),
            "largest share.heartbeat.interval.ms a share group config may set"),
    Setting("group.share.min.record.lock.duration.ms", 15000, _int_between(1000, 30000),
            "smallest share.record.lock.duration.ms a share group config may set"),
    Setting("group.share.max.record.lock.duration.ms", 60000, _int_between(30000, 3600000),
            "largest share.record.lock.duration.ms a share group config may set"),
    Setting("group.share.min.delivery.count.limit", 2, _int_between(2, 5),
            "smallest share.delivery.count.limit a share group config may set"),
    Setting("group.share.max.delivery.count.limit", 10, _int_between(5, 25),
            "largest share.delivery.count.limit a share group config may set"),
    Setting("group.share.min.partition.max.record.locks", 100, _int_between(100, 2000),
            "smallest share.partition.max.record.locks a share group config may set"),
    Setting("group.share.max.partition.max.record.locks", 4000, _int_between(2000, 10000),
            "largest share.partition.max.record.locks a share group config may set"),
    Setting("group.share.initialize.retry.interval.ms", 30000, _int_between(1, 2**31 - 1), "how long a share partition may stay "
            "\"initializing\" before a heartbeat asks the share coordinator to initialise it again"),
    Setting("offsets.topic.num.partitions", 50, int, "partitions of __consumer_offsets (fixed once groups exist)"),
    Setting("offsets.topic.segment.bytes", 104857600, int, "segment size of __consumer_offsets"),
    Setting("offsets.topic.compression.codec", 0, int, "codec of the coordinator's own batches (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd)"),
    Setting("offsets.retention.minutes", 10080, int, "how long offsets outlive an empty group (or a standalone commit)"),
    Setting("offsets.retention.check.interval.ms", 600000, int, "how often expired offsets are looked for"),
    Setting("offsets.commit.timeout.ms", 5000, int, "how long an offset commit may wait for its write"),
    Setting("offset.metadata.max.bytes", 4096, int, "largest metadata string on a committed offset"),
    Setting("group.coordinator.append.linger.ms", 0, int, "how long the coordinator lets its writes accumulate before appending"),
    Setting("group.coordinator.snapshot.interval.records", 10000, int,
            "records appended to an offsets partition between snapshots of its state (at least half the state's "
            "size; 0 = never): a restart replays the snapshot and only the log past it", False),
    Setting("auto.create.topics.enable", True, _bool, "create unknown topics on Metadata/Produce"),
    Setting("num.partitions", 1, int, "partitions of an auto-created topic"),
    Setting("default.replication.factor", 1, int, "replication factor reported for auto-created topics (single node: 1)"),
    Setting("message.max.bytes", 1048588, int, "largest record batch accepted (topic max.message.bytes default)"),
    Setting("log.segment.bytes", 1073741824, int, "segment size of user topics"),
    Setting("log.roll.ms", 604800000, int, "roll a segment after this age"),
    Setting("log.retention.ms", 604800000, int, "delete-policy retention by time (-1 = forever)"),
    Setting("log.retention.bytes", -1, int, "delete-policy retention by size per partition (-1 = unlimited)"),
    Setting("log.retention.check.interval.ms", 300000, int, "how often retention runs"),
    Setting("log.index.interval.bytes", 4096, int, "bytes between offset index entries"),
    Setting("log.cleaner.enable", True, _bool, "run compaction for cleanup.policy=compact topics"),
    Setting("log.cleaner.delete.retention.ms", 86400000, int, "how long tombstones survive compaction"),
    Setting("log.cleaner.min.cleanable.ratio", 0.5, float, "dirty ratio that triggers compaction"),
    Setting("log.cleaner.min.compaction.lag.ms", 0, int, "records younger than this are never compacted"),
    Setting("log.cleaner.max.compaction.lag.ms", 9223372036854775807, int,
            "records older than this are compacted even below the dirty ratio"),
    Setting("log.cleaner.io.max.bytes.per.second", 64 * 1024 * 1024, float, "compaction throughput bound"),
    Setting("log.cleaner.backoff.ms", 15000, int, "pause between cleaner passes"),
    Setting("log.flush.offset.checkpoint.interval.ms", 60000, int,
            "how often logs are flushed and recovery-point-offset-checkpoint rewritten (a crash re-checks only what follows)"),
    Setting("max.broker.partitions", 100000, int,
            "partitions this broker hosts at most, __consumer_offsets included; CreateTopics past it gets POLICY_VIOLATION (KIP-578)"),
    Setting("producer.id.expiration.ms", 86400000, int, "forget an idempotent producer whose last batch is this old"),
    Setting("producer.id.expiration.check.interval.ms", 600000, int, "how often expired producer ids are looked for"),
    Setting("transaction.state.log.num.partitions", 50, int, "partitions of __transaction_state (fixed once transactions exist)"),
    Setting("transaction.state.log.segment.bytes", 104857600, int, "segment size of __transaction_state"),
    Setting("transaction.max.timeout.ms", 900000, int, "largest transaction timeout a producer may ask for "
            "(InitProducerId past it: INVALID_TRANSACTION_TIMEOUT)"),
    Setting("transactional.id.expiration.ms", 604800000, int, "forget a transactional id with no transaction for this long"),
    Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000, int,
            "how often transactions past their timeout are looked for and aborted"),
    Setting("transaction.remove.expired.transaction.cleanup.interval.ms", 3600000, int,
            "how often expired transactional ids are looked for"),
    Setting("transaction.partition.verification.enable", True, _bool,
            "a transactional Produce is refused for a partition not added to its transaction (KIP-890 part 1)"),
    Setting("quota.window.num", 11, int, "samples kept for client quotas (a rate is measured over them)"),
    Setting("quota.window.size.seconds", 1, int, "time span of one client quota sample"),
    # share groups (KIP-932), the share-partition side (coordinator/share/)
    Setting("group.share.record.lock.duration.ms", 30000, int, "how long a share-group member holds the records "
            "it acquired before they are delivered again (a group's share.record.lock.duration.ms overrides it)"),
    Setting("group.share.delivery.count.limit", 5, int, "deliveries of a record to a share group before it is archived"),
    Setting("group.share.partition.max.record.locks", 2000, int, "records in flight per share partition at most"),
    Setting("group.share.max.share.sessions", 2000, int, "share sessions (ShareFetch) kept at once by this broker"),
    Setting("share.coordinator.state.topic.num.partitions", 50, int,
            "partitions of __share_group_state (fixed once share groups exist)"),
    Setting("share.coordinator.state.topic.segment.bytes", 104857600, int, "segment size of __share_group_state"),
    Setting("share.coordinator.snapshot.update.records.per.snapshot", 500, int,
            "ShareUpdate records of a share partition between two ShareSnapshot records"),
    Setting("max.incremental.fetch.session.cache.slots", 1000, int, "incremental fetch sessions (KIP-227) kept at once"),
    Setting("min.incremental.fetch.session.eviction.ms", 120000, int,
            "a fetch session unused this long may be replaced; a younger one only by a larger one"),
    # authorisation (Kafka's names; coordinator/security/authorizer.py)
    Setting("authorizer.class.name", "", _authorizer_class, "org.apache.kafka.metadata.authorizer.StandardAuthorizer turns ACL "
            "enforcement on (empty: no authorisation, Kafka's default)"),
    Setting("super.users", "", _super_users, "principals allowed everything, separated by ';' (User:admin;User:ops)"),
    Setting("allow.everyone.if.no.acl.found", False, _bool, "allow an operation on a resource no ACL covers"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
BY_ATTR: dict[str, Setting] = {s.attr: s for s in SETTINGS}


def _make_config_class() -> type:
    """BrokerConfig's frozen dataclass base, a field per setting, made by protocol/frozen.py's frozen_dataclass
    (its ``__repr__``, ``__eq__`` and ``__hash__`` compiled by their first call, its ``__setattr__`` and
    ``__delattr__`` not compiled at all: the dataclass machinery writes each of them as source text with a term
    per field and compiles it at every start; for 127 fields that was ~5 % of the daemon's instructions up to
    ``listening on``). Its ``__init__`` is the loop below, not a compiled one for the same reason; it behaves as
    the generated one (tests/coordinator/test_config.py compares the class with a generated twin). It is given
    a docstring because without one the dataclass machinery writes it from ``inspect.signature``."""
    namespace: dict[str, Any] = {s.attr: dataclasses.field(default=s.default) for s in SETTINGS}
    namespace.update({"__annotations__": {s.attr: Any for s in SETTINGS}, "__module__": __name__,
                      "__doc__": "Every setting of SETTINGS, as a frozen dataclass.", "__init__": _config_init})
    return frozen_dataclass(type("_BrokerConfigBase", (), namespace), slots=False)


_ATTRS = tuple(s.attr for s in SETTINGS)
_DEFAULTS = {s.attr: s.default for s in SETTINGS}


def _config_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """The generated ``__init__(self, listen=<default>, advertised=<default>, ...)``: every setting by position or
    by name, each defaulting to its setting's default."""
    if len(args) > len(_ATTRS):
        raise TypeError(f"_BrokerConfigBase.__init__() takes from 1 to {len(_ATTRS) + 1} positional arguments "
                        f"but {len(args) + 1} were given")
    values = dict(_DEFAULTS)
    values.update(zip(_ATTRS, args))
    for name, value in kwargs.items():
        if name not in values:
            raise TypeError(f"_BrokerConfigBase.__init__() got an unexpected keyword argument {name!r}")
        if args and _ATTRS.index(name) < len(args):
            raise TypeError(f"_BrokerConfigBase.__init__() got multiple values for argument {name!r}")
        values[name] = value
    for name, value in values.items():
        object.__setattr__(self, name, value)


class BrokerConfig(_make_config_class()):  # type: ignore[misc]
    """All settings, resolved. Attribute names are the dotted names with `_` (e.g. `group_max_size`)."""

    @property
    def listen_host(self) -> str:
        return self.listen[0]

    @property
    def listen_port(self) -> int:
        return self.listen[1]

    @property
    def advertised_host(self) -> str:
        return (self.advertised or self.listen)[0]

    @property
    def advertised_port(self) -> int:
        return (self.advertised or self.listen)[1]

    def listener_setting(self, listener: str, name: str, mechanism: str | None = None) -> Any:
        """Kafka's look-up of a setting for one listener: ``listener.name.<listener>[.<mechanism>].<name>``
        (listener and mechanism in lower case), else the broker-wide ``<name>``, else None."""
        overrides = dict(self.override)
        prefix = f"{LISTENER_PREFIX}{listener.lower()}."
        if mechanism is not None and (prefix + f"{mechanism.lower()}.{name}") in overrides:
            return overrides[prefix + f"{mechanism.lower()}.{name}"]
        if prefix + name in overrides:
            return overrides[prefix + name]
        setting = BY_NAME.get(name)
        return getattr(self, setting.attr) if setting is not None else None

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    def replace(self, **changes: Any) -> "BrokerConfig":
        return dataclasses.replace(self, **_parse_values(changes))


def _parse_values(values: Mapping[str, Any]) -> dict[str, Any]:
    parsed = {}
    for key, value in values.items():
        setting = BY_ATTR.get(key) or BY_NAME.get(key)
        if setting is None:
            raise KeyError(f"unknown setting {key!r}")
        try:
            parsed[setting.attr] = setting.parse(value) if value is not None or setting.default is not None else None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{setting.name} ({setting.flag}, {setting.env}): {exc}") from exc
    return parsed


def load_toml(path: Path) -> dict[str, Any]:
    """TOML keys are the dotted names, quoted (`"group.max.size" = 10`); tables are flattened with dots.
    A file ending in ``.properties`` is read as Kafka reads ``server.properties`` instead (same names)."""
    if str(path).endswith(".properties"):
        from .properties_file import read_properties

        raw: Mapping[str, Any] = read_properties(Path(path).read_text())
    else:
        import tomllib  # only with a config file: not on every daemon's start-up

        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    flat: dict[str, Any] = {}

    def walk(prefix: str, node: Mapping[str, Any]) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, Mapping):
                walk(name, value)
            else:
                flat[name] = value

    walk("", raw)
    listener = {k: v for k, v in flat.items() if is_listener_setting(k)}
    flat = {k: v for k, v in flat.items() if not is_listener_setting(k)}
    if listener:
        flat["override"] = {**dict(flat.get("override", {})), **listener}
    unknown = sorted(k for k in flat if k not in BY_NAME)
    if unknown:
        raise KeyError(f"unknown settings in {path}: {', '.join(unknown)}")
    return flat


def resolve(
    flags: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> BrokerConfig:
    """flag > env > file > default; `flags` maps attribute names to values given on the command line."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    if config_file is not None:
        for name, value in load_toml(config_file).items():
            values[BY_NAME[name].attr] = value
    for setting in SETTINGS:
        if setting.env in env:
            values[setting.attr] = env[setting.env]
    for attr, value in (flags or {}).items():
        if value is not None:
            values[attr] = value
    return BrokerConfig(**_parse_values(values))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, default=None, help="TOML file of settings (keys are the dotted names), "
                        "or a Kafka server.properties file (FILE.properties)")
    for s in SETTINGS:
        if s.name == "override":
            parser.add_argument(s.flag, dest=s.attr, action="append", default=None, metavar="KEY=VALUE",
                                help=f"{s.help} [env {s.env}: one KEY=VALUE a line]".replace("%", "%%"))
            continue
        default = s.default if not isinstance(s.default, tuple) or len(s.default) != 2 else f"{s.default[0]}:{s.default[1]}"
        parser.add_argument(
            s.flag,
            dest=s.attr,
            default=None,
            metavar=s.attr.upper() if s.kafka else None,
            help=f"{s.help} [default: {default}; env {s.env}; TOML \"{s.name}\"]".replace("%", "%%"),
        )


def from_args(ns: argparse.Namespace) -> BrokerConfig:
    flags = {s.attr: getattr(ns, s.attr, None) for s in SETTINGS}
    return resolve(flags=flags, config_file=getattr(ns, "config", None))
