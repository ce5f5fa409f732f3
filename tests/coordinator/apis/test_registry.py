"""The one registry of APIs: every API module registered once, what it binds is what ApiVersions
advertises, and every declared range is one kio can decode and encode."""

import importlib
import pkgutil

from groupcoord.coordinator import apis
from groupcoord.coordinator.apis.metadata import TopicInfo
from groupcoord.coordinator.apis.registry import API_MODULES, APIS, register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.cluster import ClusterIdentity
from groupcoord.coordinator.server.dispatch import Dispatcher
from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.build import build
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, kio_versions, request_class, response_reader

# The ranges served before the registry existed (groups/handlers.py, dataplane/handlers.py,
# cluster_apis.py): moving the handlers must not move a single version.
SERVED = {
    0: (3, 11), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4),
    13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 18: (0, 4), 19: (2, 7), 20: (1, 6), 22: (0, 5), 32: (1, 4),
    17: (0, 1), 29: (1, 3), 30: (1, 3), 31: (1, 3), 36: (0, 2), 37: (0, 3), 42: (0, 2), 47: (0, 0), 50: (0, 0),
    51: (0, 0), 60: (0, 2), 61: (0, 0), 68: (0, 1), 69: (0, 1),
    21: (0, 2), 33: (0, 2), 35: (1, 5), 44: (0, 1), 75: (0, 0),
    48: (0, 1), 49: (0, 1),  # DescribeClientQuotas, AlterClientQuotas
    # transactions (Transactions V1: EndTxn up to v4)
    24: (0, 5), 25: (0, 4), 26: (0, 4), 27: (1, 1), 28: (0, 4), 65: (0, 0), 66: (0, 1),
    # share groups, the group side (KIP-932)
    76: (1, 1), 77: (1, 1),
    # share partitions and share-group state (KIP-932)
    78: (1, 2), 79: (1, 2), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1), 90: (0, 1), 91: (0, 0), 92: (0, 0),
}


class NoTopics:
    def describe(self, names, auto_create):
        return [] if names is None else [TopicInfo(n, ZERO_UUID, 0, error_code=3) for n in names]


def served_dispatcher() -> tuple[Dispatcher, Services]:
    dispatcher = Dispatcher()
    services = Services(ClusterIdentity(1, "127.0.0.1", 9092, "c"), dispatcher.registry, NoTopics(), None, None)
    register_apis(dispatcher, services)
    return dispatcher, services


def test_every_api_module_is_registered_exactly_once():
    modules = [importlib.import_module(f"{apis.__name__}.{m.name}") for m in pkgutil.iter_modules(apis.__path__)]
    serving = sorted(m.__name__.rsplit(".", 1)[1] for m in modules if hasattr(m, "API"))
    assert sorted(API_MODULES) == serving
    assert len(set(API_MODULES)) == len(API_MODULES) == 58
    keys = [m.API.key for m in APIS]
    assert len(set(keys)) == len(keys)
    assert all(callable(m.handle) and isinstance(m.API.key, ApiKey) for m in APIS)


def test_the_served_versions_are_unchanged():
    assert {int(m.API.key): (m.API.min_version, m.API.max_version) for m in APIS} == SERVED


def test_each_declared_range_is_within_kios_versions():
    for module in APIS:
        api = module.API
        covered = kio_versions(api.key)
        assert covered.start <= api.min_version <= api.max_version < covered.stop, api


def test_the_registry_table_is_what_api_versions_answers():
    dispatcher, services = served_dispatcher()
    table = {int(m.API.key): (m.API.min_version, m.API.max_version) for m in APIS}
    key = ApiKey.API_VERSIONS
    for version in range(0, 5):
        request = build(request_class(key, version), {"client_software_name": "t", "client_software_version": "1"})
        frame = encode_request_header(key, version, 1, "t", is_flexible(key, version)) + encode_entity(request)
        decoded = dispatcher.decode(frame, "127.0.0.1", 1)
        body = decoded.handler(decoded.ctx, decoded.request)
        answer, _ = response_reader(key, version)(bytes(body), 0)
        assert {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys} == table
        assert decoded.handler(decoded.ctx, decoded.request) is body  # encoded once, then reused


async def test_a_metadata_answer_is_encoded_once_per_question():
    dispatcher, _ = served_dispatcher()
    key = ApiKey.METADATA
    request = build(request_class(key, 12), {"topics": [{"name": "t", "topic_id": ZERO_UUID}],
                                             "allow_auto_topic_creation": False,
                                             "include_topic_authorized_operations": False})
    frame = encode_request_header(key, 12, 1, "t", is_flexible(key, 12)) + encode_entity(request)
    decoded = dispatcher.decode(frame, "127.0.0.1", 1)
    first = await decoded.handler(decoded.ctx, decoded.request)
    assert await decoded.handler(decoded.ctx, decoded.request) is first
