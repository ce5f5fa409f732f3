"""Every API this broker serves: one line each, bound to the dispatcher in one call.

Adding an API is its own module (``API = Api(ApiKey.X, lowest, highest)`` beside ``handle``) and one
line here. ApiVersions answers from what this binds, so nothing is advertised that is not served.
"""

from __future__ import annotations

from functools import partial
from importlib import import_module
from typing import Iterable, Protocol, cast

from groupcoord.protocol.fast_codecs import FastCodec

from ..server.dispatch import Handler
from .api import ApiModule
from .services import Services

API_MODULES: tuple[str, ...] = (
    "produce",
    "fetch",
    "list_offsets",
    "metadata",
    "offset_commit",
    "offset_fetch",
    "find_coordinator",
    "join_group",
    "heartbeat",
    "leave_group",
    "sync_group",
    "describe_groups",
    "list_groups",
    "api_versions",
    "create_topics",
    "delete_topics",
    "init_producer_id",
    "describe_configs",
    "create_partitions",
    "delete_groups",
    "offset_delete",
    "describe_cluster",
    "consumer_group_heartbeat",
    "consumer_group_describe",
    "share_group_heartbeat",
    "share_group_describe",
    "describe_acls",
    "create_acls",
    "delete_acls",
    "sasl_handshake",
    "sasl_authenticate",
    "describe_user_scram_credentials",
    "alter_user_scram_credentials",
    "add_partitions_to_txn",
    "add_offsets_to_txn",
    "end_txn",
    "txn_offset_commit",
    "write_txn_markers",
    "describe_transactions",
    "list_transactions",
    "describe_producers",
    "delete_records",
    "describe_log_dirs",
    "share_fetch",
    "share_acknowledge",
    "initialize_share_group_state",
    "read_share_group_state",
    "write_share_group_state",
    "delete_share_group_state",
    "read_share_group_state_summary",
    "describe_share_group_offsets",
    "alter_share_group_offsets",
    "delete_share_group_offsets",
    "describe_topic_partitions",
    "incremental_alter_configs",
    "alter_configs",
    "describe_client_quotas",
    "alter_client_quotas",
)

APIS: tuple[ApiModule, ...] = tuple(cast("ApiModule", import_module(f"{__package__}.{name}")) for name in API_MODULES)


class Registrar(Protocol):
    def register(self, api_key: int, handler: Handler, min_version: int, max_version: int,
                 fast: FastCodec | None = None, heavy: Handler | None = None) -> None: ...


def register_apis(dispatcher: Registrar, services: Services, apis: Iterable[ApiModule] = APIS) -> None:
    """Bind each API's handler to ``services`` and register it with its version range. A module may also
    declare ``FAST``, a hand-written codec (protocol/fast_codecs.py) for its hottest versions: the dispatcher
    reads and answers with it and calls the same ``handle``; what it declines takes the general path. And
    ``HEAVY``, ``heavy(services, ctx, HeavyRequest)``: the handler of its very large requests, read and
    answered a slice at a time so that one of them does not stall every other connection. And
    ``lane(services)``, a ``Lane`` (server/dispatch.py) through which the connection's frame loop answers the
    API's commonest request itself; whatever the lane declines takes the ordinary way."""
    for module in apis:
        api = module.API
        extra = {}
        heavy = getattr(module, "HEAVY", None)
        if heavy is not None:
            extra["heavy"] = partial(heavy, services)
        dispatcher.register(api.key, partial(module.handle, services), api.min_version, api.max_version,
                            fast=getattr(module, "FAST", None), **extra)
        make_lane = getattr(module, "lane", None)
        add_lane = getattr(dispatcher, "add_lane", None)
        if make_lane is not None and add_lane is not None:
            lane = make_lane(services)
            if lane is not None:
                add_lane(lane)
