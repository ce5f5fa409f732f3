"""Every API this broker serves: one line each, bound to the dispatcher in one call.

Adding an API is its own module (``API = Api(ApiKey.X, lowest, highest)`` beside ``handle``) and one
line here with the same key and versions (tests/coordinator/apis/test_registry.py checks they agree).
ApiVersions answers from what this binds, so nothing is advertised that is not served.

Why the versions are written here a second time: start-up. Importing every API module (and what each
imports: kio's schemas, admin and share-group code) was a large part of the daemon's exec-to-listening
time, and most brokers never see most of these APIs. So the dispatcher learns every key and version range
from this table, and an API's module is imported when its first request arrives (a one-time cost of a few
milliseconds for that request; later ones pay one extra call). The modules that declare a hand-written codec (``FAST``), a heavy-request
handler (``HEAVY``) or a frame-loop ``lane`` are imported at registration, since those are bound up front.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from typing import Any, Iterable, Protocol, cast

from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.fast_codecs import FastCodec

from ..server.dispatch import Handler
from .api import ApiModule
from .services import Services

# (module, key, lowest version, highest version), in the order they are registered.
API_TABLE: tuple[tuple[str, ApiKey, int, int], ...] = (
    ("produce", ApiKey.PRODUCE, 3, 11),
    ("fetch", ApiKey.FETCH, 4, 17),
    ("list_offsets", ApiKey.LIST_OFFSETS, 1, 10),
    ("metadata", ApiKey.METADATA, 0, 13),
    ("offset_commit", ApiKey.OFFSET_COMMIT, 2, 9),
    ("offset_fetch", ApiKey.OFFSET_FETCH, 1, 9),
    ("find_coordinator", ApiKey.FIND_COORDINATOR, 0, 6),
    ("join_group", ApiKey.JOIN_GROUP, 0, 9),
    ("heartbeat", ApiKey.HEARTBEAT, 0, 4),
    ("leave_group", ApiKey.LEAVE_GROUP, 0, 5),
    ("sync_group", ApiKey.SYNC_GROUP, 0, 5),
    ("describe_groups", ApiKey.DESCRIBE_GROUPS, 0, 6),
    ("list_groups", ApiKey.LIST_GROUPS, 0, 5),
    ("api_versions", ApiKey.API_VERSIONS, 0, 4),
    ("create_topics", ApiKey.CREATE_TOPICS, 2, 7),
    ("delete_topics", ApiKey.DELETE_TOPICS, 1, 6),
    ("init_producer_id", ApiKey.INIT_PRODUCER_ID, 0, 5),
    ("describe_configs", ApiKey.DESCRIBE_CONFIGS, 1, 4),
    ("create_partitions", ApiKey.CREATE_PARTITIONS, 0, 3),
    ("delete_groups", ApiKey.DELETE_GROUPS, 0, 2),
    ("offset_delete", ApiKey.OFFSET_DELETE, 0, 0),
    ("describe_cluster", ApiKey.DESCRIBE_CLUSTER, 0, 2),
    ("consumer_group_heartbeat", ApiKey.CONSUMER_GROUP_HEARTBEAT, 0, 1),
    ("consumer_group_describe", ApiKey.CONSUMER_GROUP_DESCRIBE, 0, 1),
    ("share_group_heartbeat", ApiKey.SHARE_GROUP_HEARTBEAT, 1, 1),
    ("share_group_describe", ApiKey.SHARE_GROUP_DESCRIBE, 1, 1),
    ("describe_acls", ApiKey.DESCRIBE_ACLS, 1, 3),
    ("create_acls", ApiKey.CREATE_ACLS, 1, 3),
    ("delete_acls", ApiKey.DELETE_ACLS, 1, 3),
    ("sasl_handshake", ApiKey.SASL_HANDSHAKE, 0, 1),
    ("sasl_authenticate", ApiKey.SASL_AUTHENTICATE, 0, 2),
    ("describe_user_scram_credentials", ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, 0),
    ("alter_user_scram_credentials", ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, 0),
    ("add_partitions_to_txn", ApiKey.ADD_PARTITIONS_TO_TXN, 0, 5),
    ("add_offsets_to_txn", ApiKey.ADD_OFFSETS_TO_TXN, 0, 4),
    ("end_txn", ApiKey.END_TXN, 0, 4),
    ("txn_offset_commit", ApiKey.TXN_OFFSET_COMMIT, 0, 4),
    ("write_txn_markers", ApiKey.WRITE_TXN_MARKERS, 1, 1),
    ("describe_transactions", ApiKey.DESCRIBE_TRANSACTIONS, 0, 0),
    ("list_transactions", ApiKey.LIST_TRANSACTIONS, 0, 1),
    ("describe_producers", ApiKey.DESCRIBE_PRODUCERS, 0, 0),
    ("delete_records", ApiKey.DELETE_RECORDS, 0, 2),
    ("describe_log_dirs", ApiKey.DESCRIBE_LOG_DIRS, 1, 5),
    ("share_fetch", ApiKey.SHARE_FETCH, 1, 2),
    ("share_acknowledge", ApiKey.SHARE_ACKNOWLEDGE, 1, 2),
    ("initialize_share_group_state", ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, 0),
    ("read_share_group_state", ApiKey.READ_SHARE_GROUP_STATE, 0, 0),
    ("write_share_group_state", ApiKey.WRITE_SHARE_GROUP_STATE, 0, 1),
    ("delete_share_group_state", ApiKey.DELETE_SHARE_GROUP_STATE, 0, 0),
    ("read_share_group_state_summary", ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, 1),
    ("describe_share_group_offsets", ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, 1),
    ("alter_share_group_offsets", ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, 0),
    ("delete_share_group_offsets", ApiKey.DELETE_SHARE_GROUP_OFFSETS, 0, 0),
    ("describe_topic_partitions", ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, 0),
    ("incremental_alter_configs", ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, 1),
    ("alter_configs", ApiKey.ALTER_CONFIGS, 0, 2),
    ("describe_client_quotas", ApiKey.DESCRIBE_CLIENT_QUOTAS, 0, 1),
    ("alter_client_quotas", ApiKey.ALTER_CLIENT_QUOTAS, 0, 1),
)

API_MODULES: tuple[str, ...] = tuple(name for name, *_ in API_TABLE)

EAGER_MODULES: frozenset[str] = frozenset({"heartbeat", "join_group", "offset_commit", "sync_group"})
"""Imported at registration: they declare ``FAST``, ``HEAVY`` or ``lane`` (the test checks no other does)."""

CODEC_MODULES: dict[str, str] = {"produce": "produce_codec"}
"""APIs imported on their first request whose hand-written codec is bound at registration all the same: it is
declared (``FAST``) in a light module of its own, named here, whose reader imports what it builds at its first
read; so start-up imports neither the handler nor the data plane's code it needs
(tests/coordinator/ops/test_daemon_imports.py)."""


class Registrar(Protocol):
    def register(self, api_key: int, handler: Handler, min_version: int, max_version: int,
                 fast: FastCodec | None = None, heavy: Handler | None = None) -> None: ...


def api_module(name: str) -> ApiModule:
    return cast("ApiModule", import_module(f"{__package__}.{name}"))


def _codec(name: str) -> FastCodec | None:
    """The codec ``CODEC_MODULES`` names for API module ``name``, if any."""
    module = CODEC_MODULES.get(name)
    return None if module is None else import_module(f"{__package__}.{module}").FAST


def _register_module(dispatcher: Registrar, services: Services, module: ApiModule) -> Handler:
    api = module.API
    extra = {}
    heavy = getattr(module, "HEAVY", None)
    if heavy is not None:
        extra["heavy"] = partial(heavy, services)
    handler = partial(module.handle, services)
    fast = getattr(module, "FAST", None) or _codec(module.__name__.rpartition(".")[2])
    dispatcher.register(api.key, handler, api.min_version, api.max_version, fast=fast, **extra)
    make_lane = getattr(module, "lane", None)
    add_lane = getattr(dispatcher, "add_lane", None)
    if make_lane is not None and add_lane is not None:
        lane = make_lane(services)
        if lane is not None:
            add_lane(lane)
    return handler


class _ImportOnFirstRequest:
    """The handler of an API whose module is not imported yet: the first request imports it and binds
    ``handle`` to the services, and every request is passed to that (one call more than an eager API; the
    dispatcher's table is not changed after registration, so whatever a caller put there stays). An import
    that fails is not hidden: it raises out of the handler, so the dispatcher logs it with its traceback
    ("handler failed") and answers UNKNOWN_SERVER_ERROR, and the next request tries again."""

    __slots__ = ("name", "services", "key", "min_version", "max_version", "bound")

    def __init__(self, name: str, services: Services, key: ApiKey, min_version: int, max_version: int) -> None:
        self.name, self.services = name, services
        self.key, self.min_version, self.max_version = key, min_version, max_version
        self.bound: Handler | None = None

    def __call__(self, ctx: Any, request: Any) -> Any:
        bound = self.bound
        if bound is None:
            module = api_module(self.name)
            api = module.API
            if (api.key, api.min_version, api.max_version) != (self.key, self.min_version, self.max_version):
                raise RuntimeError(f"apis/{self.name}.py declares {api}, the registry's table "
                                   f"{(self.key, self.min_version, self.max_version)}")
            bound = self.bound = partial(module.handle, self.services)
        return bound(ctx, request)


def __getattr__(name: str) -> Any:
    """``APIS``: every API module, imported (tests and tools that inspect them all; serving never asks)."""
    if name != "APIS":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return tuple(api_module(module) for module in API_MODULES)


def register_apis(dispatcher: Registrar, services: Services, apis: Iterable[ApiModule] | None = None) -> None:
    """Bind each API's handler to ``services`` and register it with its version range: every API of
    ``API_TABLE`` (those not in ``EAGER_MODULES`` imported on their first request), or exactly ``apis``,
    modules imported by the caller. A module may also declare ``FAST``, a hand-written codec
    (protocol/fast_codecs.py) for its hottest versions: the dispatcher reads and answers with it and calls the
    same ``handle``; what it declines takes the general path. And ``HEAVY``, ``heavy(services, ctx,
    HeavyRequest)``: the handler of its very large requests, read and answered a slice at a time so that one
    of them does not stall every other connection. And ``lane(services)``, a ``Lane`` (server/dispatch.py)
    through which the connection's frame loop answers the API's commonest request itself; whatever the lane
    declines takes the ordinary way."""
    if apis is not None:
        for module in apis:
            _register_module(dispatcher, services, module)
        return
    for name, key, lowest, highest in API_TABLE:
        if name in EAGER_MODULES:
            _register_module(dispatcher, services, api_module(name))
        else:
            dispatcher.register(key, _ImportOnFirstRequest(name, services, key, lowest, highest), lowest, highest,
                                fast=_codec(name))
