"""The one registry of APIs: every API module registered once, what it binds is what ApiVersions
advertises, and every declared range is one kio can decode and encode."""

import importlib
import inspect
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


def test_the_static_table_is_what_each_module_declares():
    """API_TABLE repeats each module's key and versions so that start-up need not import the module."""
    from groupcoord.coordinator.apis.registry import API_TABLE

    assert [(name, m.API.key, m.API.min_version, m.API.max_version) for name, m in zip(API_MODULES, APIS)] \
        == list(API_TABLE)


def test_only_the_eager_modules_bind_anything_up_front():
    """A module imported on its first request cannot declare a codec, a heavy handler or a lane: those
    are bound at registration. So exactly the eager ones declare one."""
    from groupcoord.coordinator.apis.registry import EAGER_MODULES

    binding = {name for name, m in zip(API_MODULES, APIS)
               if any(hasattr(m, attr) for attr in ("FAST", "HEAVY", "lane"))}
    assert binding == set(EAGER_MODULES)


def test_registering_imports_no_lazy_module_and_api_versions_still_lists_every_api():
    """In a fresh interpreter: after register_apis, no API module outside EAGER_MODULES is imported, and
    ApiVersions (itself imported by its first request) answers every key of the table."""
    import subprocess
    import sys

    code = """
import sys
sys.modules["hypothesis"] = None
from groupcoord.coordinator.apis.registry import API_TABLE, EAGER_MODULES, register_apis
from groupcoord.coordinator.apis.services import Services
from groupcoord.coordinator.cluster import ClusterIdentity
from groupcoord.coordinator.server.dispatch import Dispatcher
from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.build import build
from groupcoord.protocol.headers import encode_request_header
from groupcoord.protocol.registry import encode_entity, is_flexible, request_class, response_reader
dispatcher = Dispatcher()
register_apis(dispatcher, Services(ClusterIdentity(1, "127.0.0.1", 9092, "c"), dispatcher.registry, None, None, None))
loaded = {n for n, *_ in API_TABLE if f"groupcoord.coordinator.apis.{n}" in sys.modules}
assert loaded == set(EAGER_MODULES), loaded
key = ApiKey.API_VERSIONS
request = build(request_class(key, 3), {"client_software_name": "t", "client_software_version": "1"})
frame = encode_request_header(key, 3, 1, "t", is_flexible(key, 3)) + encode_entity(request)
decoded = dispatcher.decode(frame, "127.0.0.1", 1)
answer, _ = response_reader(key, 3)(bytes(decoded.handler(decoded.ctx, decoded.request)), 0)
assert {k.api_key for k in answer.api_keys} == {int(k) for _, k, *_ in API_TABLE}
loaded = {n for n, *_ in API_TABLE if f"groupcoord.coordinator.apis.{n}" in sys.modules}
assert loaded == set(EAGER_MODULES) | {"api_versions"}, loaded
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


async def test_a_lazy_module_that_fails_to_import_fails_its_requests_loudly_and_is_retried(monkeypatch):
    from groupcoord.coordinator.apis import registry

    dispatcher, _ = served_dispatcher()
    key = ApiKey.DESCRIBE_CLUSTER
    request = build(request_class(key, 0), {"include_cluster_authorized_operations": False})
    frame = encode_request_header(key, 0, 1, "t", is_flexible(key, 0)) + encode_entity(request)
    real = registry.api_module
    calls = []

    def broken(name):
        calls.append(name)
        raise ImportError(f"cannot import {name}")

    monkeypatch.setattr(registry, "api_module", broken)
    decoded = dispatcher.decode(frame, "127.0.0.1", 1)
    try:
        decoded.handler(decoded.ctx, decoded.request)
    except ImportError as exc:
        assert "describe_cluster" in str(exc)
    else:
        raise AssertionError("the import failure was swallowed")
    answer = dispatcher.encode_failure(decoded, ImportError("x"))  # what the connection does with it
    assert answer is not None and len(answer) > 8  # answered UNKNOWN_SERVER_ERROR, not dropped

    monkeypatch.setattr(registry, "api_module", real)
    decoded = dispatcher.decode(frame, "127.0.0.1", 1)
    result = decoded.handler(decoded.ctx, decoded.request)  # imported now, and bound in its place
    if inspect.isawaitable(result):
        result = await result
    assert calls == ["describe_cluster"] and result is not None
    handler = dispatcher.decode(frame, "127.0.0.1", 1).handler
    assert isinstance(handler, registry._ImportOnFirstRequest) and handler.bound is not None  # imported once


async def test_a_handler_put_in_place_of_a_lazy_one_stays_there():
    """The first request of a lazy API does not rewrite the dispatcher's table (a test spying on a handler,
    as tests/integration/test_sasl_exchange.py does, keeps seeing every request)."""
    dispatcher, _ = served_dispatcher()
    key = ApiKey.DESCRIBE_CLUSTER
    original = dispatcher._handlers[key]
    seen = []

    def spy(ctx, request):
        seen.append(ctx.correlation_id)
        return original(ctx, request)

    dispatcher._handlers[key] = spy
    for correlation_id in (1, 2):
        request = build(request_class(key, 0), {"include_cluster_authorized_operations": False})
        frame = encode_request_header(key, 0, correlation_id, "t", is_flexible(key, 0)) + encode_entity(request)
        decoded = dispatcher.decode(frame, "127.0.0.1", 1)
        result = decoded.handler(decoded.ctx, decoded.request)
        if inspect.isawaitable(result):
            await result
    assert seen == [1, 2]
