"""DescribeClientQuotas and AlterClientQuotas over the wire against a running broker (raw protocol client):
defaults and matching filters, Kafka's validation messages, validate_only, and quotas kept across a restart."""
from __future__ import annotations

import time

from kio.schema.alter_client_quotas.v1 import request as alter
from kio.schema.describe_client_quotas.v1 import request as describe
from kio.schema.errors import ErrorCode
from kio.static.primitive import f64, i8

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.pytest_plugin import TEST_DEFAULTS

from tests.conformance.wire import Connection

EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def entry(entity: dict, **ops) -> alter.EntryData:
    return alter.EntryData(
        entity=tuple(alter.EntityData(entity_type=k, entity_name=v) for k, v in entity.items()),
        ops=tuple(alter.OpData(key=k, value=f64(0.0 if v is None else float(v)), remove=v is None)
                  for k, v in ops.items()))


async def alter_quotas(conn, *entries, validate_only=False):
    response = await conn.send(alter.AlterClientQuotasRequest(entries=entries, validate_only=validate_only))
    return [({e.entity_type: e.entity_name for e in r.entity}, r.error_code, r.error_message) for r in response.entries]


async def describe_quotas(conn, *components, strict=False):
    response = await conn.send(describe.DescribeClientQuotasRequest(components=tuple(
        describe.ComponentData(entity_type=t, match_type=i8(m), match=n) for t, m, n in components), strict=strict))
    if response.error_code != ErrorCode.none:
        return response.error_code, response.error_message
    return sorted((tuple(sorted((e.entity_type, e.entity_name or "<default>") for e in item.entity)),
                   {v.key: v.value for v in item.values}) for item in response.entries)


async def test_alter_then_describe_with_each_match_type(groupcoord_broker):
    conn = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        assert await alter_quotas(
            conn, entry({"user": "alice"}, producer_byte_rate=1024, consumer_byte_rate=2048),
            entry({"user": "alice", "client-id": "app"}, request_percentage=12.5),
            entry({"client-id": None}, producer_byte_rate=4096),
            entry({"ip": "127.0.0.1"}, connection_creation_rate=100)) == [
            ({"user": "alice"}, ErrorCode.none, None), ({"user": "alice", "client-id": "app"}, ErrorCode.none, None),
            ({"client-id": None}, ErrorCode.none, None), ({"ip": "127.0.0.1"}, ErrorCode.none, None)]
        alice = (("user", "alice"),)
        assert await describe_quotas(conn, ("user", EXACT, "alice"), strict=True) == [
            (alice, {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0})]
        assert await describe_quotas(conn, ("user", EXACT, "alice")) == [
            ((("client-id", "app"), ("user", "alice")), {"request_percentage": 12.5}),
            (alice, {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0})]
        assert await describe_quotas(conn, ("client-id", DEFAULT, None)) == [
            ((("client-id", "<default>"),), {"producer_byte_rate": 4096.0})]
        assert len(await describe_quotas(conn, ("client-id", SPECIFIED, None))) == 2
        assert await describe_quotas(conn, ("ip", SPECIFIED, None)) == [
            ((("ip", "127.0.0.1"),), {"connection_creation_rate": 100.0})]
        assert len(await describe_quotas(conn)) == 4
        # removing the last key removes the entity
        assert (await alter_quotas(conn, entry({"client-id": None}, producer_byte_rate=None)))[0][1] == ErrorCode.none
        assert await describe_quotas(conn, ("client-id", DEFAULT, None)) == []
    finally:
        await conn.close()


async def test_validation_errors_are_kafkas(groupcoord_broker):
    conn = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        refused = await alter_quotas(
            conn, entry({}, producer_byte_rate=1),
            entry({"user": "u1"}, no_such_quota=1),
            entry({"user": "u2"}, producer_byte_rate=0),
            entry({"user": "u3"}, producer_byte_rate=1.5),
            entry({"client-id": ""}, producer_byte_rate=1),
            entry({"group": "g"}, producer_byte_rate=1),
            entry({"ip": "127.0.0.1", "user": "u4"}, connection_creation_rate=1),
            entry({"ip": "127.0.0.1"}, producer_byte_rate=1),
            entry({"ip": "no.such.host.invalid"}, connection_creation_rate=1),
            entry({"user": "u5"}, request_percentage=0.5))
        assert [(e, m) for _, e, m in refused] == [
            (ErrorCode.invalid_request, "Invalid empty client quota entity"),
            (ErrorCode.invalid_request, "Invalid configuration key no_such_quota"),
            (ErrorCode.invalid_request, "Quota producer_byte_rate must be greater than 0"),
            (ErrorCode.invalid_request, "producer_byte_rate cannot be a fractional value."),
            (ErrorCode.invalid_request, "Empty client-id not supported"),
            (ErrorCode.invalid_request, "Unhandled client quota entity type: group"),
            (ErrorCode.invalid_request, "Invalid quota entity combination, IP entity shouldnot be combined with "
                                        "User or ClientId"),
            (ErrorCode.invalid_request, "Invalid configuration key producer_byte_rate"),
            (ErrorCode.invalid_request, "no.such.host.invalid is not a valid IP or resolvable host."),
            (ErrorCode.none, None)]
        assert await describe_quotas(conn, ("user", EXACT, "u5")) == [((("user", "u5"),), {"request_percentage": 0.5})]
        assert await alter_quotas(conn, entry({"user": "dry"}, producer_byte_rate=5), validate_only=True) == [
            ({"user": "dry"}, ErrorCode.none, None)]
        assert await describe_quotas(conn, ("user", EXACT, "dry")) == []
        twice = await alter_quotas(conn, entry({"user": "x"}, producer_byte_rate=5),
                                   entry({"user": "x"}, consumer_byte_rate=5))
        assert twice == [({"user": "x"}, ErrorCode.invalid_request,
                          "Ignoring duplicate entity ClientQuotaEntity(entries={user=x})")]
        assert await describe_quotas(conn, ("user", EXACT, "x")) == [
            ((("user", "x"),), {"producer_byte_rate": 5.0})]  # Kafka applies the first of the two
        assert await describe_quotas(conn, ("user", EXACT, None)) == (
            ErrorCode.invalid_request, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
        assert await describe_quotas(conn, ("ip", SPECIFIED, None), ("user", SPECIFIED, None)) == (
            ErrorCode.invalid_request, "Invalid entity filter component combination. IP filter component should "
                                       "not be used with user or clientId filter component.")
        assert await describe_quotas(conn, ("group", SPECIFIED, None)) == (
            ErrorCode.unsupported_version, "Unsupported entity type group")
        assert await describe_quotas(conn, ("user", SPECIFIED, None), ("user", SPECIFIED, None)) == (
            ErrorCode.invalid_request, "Entity type user cannot appear more than once in the filter.")
    finally:
        await conn.close()


async def test_quotas_survive_a_restart_and_are_enforced_after_it(tmp_path):
    settings = dict(TEST_DEFAULTS, data_dir=str(tmp_path))
    with run_in_thread(**settings) as broker:
        conn = await Connection.open(broker.bootstrap_servers)
        await alter_quotas(conn, entry({"client-id": "slow"}, producer_byte_rate=1000),
                           entry({"user": None}, request_percentage=200))
        await conn.close()
    with run_in_thread(**settings) as broker:
        conn = await Connection.open(broker.bootstrap_servers)
        try:
            assert await describe_quotas(conn) == [
                ((("client-id", "slow"),), {"producer_byte_rate": 1000.0}),
                ((("user", "<default>"),), {"request_percentage": 200.0})]
        finally:
            await conn.close()
        assert broker.server.quotas is not None  # enforcement is on from the start
        assert broker.server.quotas.managers.produce.quota_limit(("", "slow")) == 1000.0


async def test_request_percentage_throttles_every_api_with_throttle_time_ms(groupcoord_broker):
    """A client-id held to 0.01 % of a second of request time: after a request or two each answer carries a
    throttle time (a cached Metadata answer included) and the connection is muted in between."""
    from kio.schema.metadata.v12.request import MetadataRequest

    from tests.conformance.wire import decode_response, encode_request

    admin = await Connection.open(groupcoord_broker.bootstrap_servers)
    try:
        await alter_quotas(admin, entry({"client-id": "busy"}, request_percentage=0.01))
    finally:
        await admin.close()
    busy = await Connection.open(groupcoord_broker.bootstrap_servers)
    request = MetadataRequest(topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    throttles = []
    started = time.monotonic()
    try:
        for correlation in range(1, 5):
            busy.writer.write(encode_request(request, correlation, client_id="busy"))
            await busy.writer.drain()
            _, response = decode_response(await busy._read_frame(), 3, 12)
            throttles.append(int(response.throttle_time.total_seconds() * 1000))
    finally:
        await busy.close()
    assert max(throttles) > 0
    assert time.monotonic() - started >= sum(throttles[:-1]) / 1000 * 0.9  # each next request waited the mute


async def test_connection_creation_rate_closes_connections_past_the_ips_rate(groupcoord_broker_factory):
    """ConnectionQuotas: past 127.0.0.1's connection_creation_rate a new connection is held unread for the
    throttle time and then closed; the connections already accepted keep working."""
    from kio.schema.api_versions.v0.request import ApiVersionsRequest

    from tests.conformance.wire import WireError

    broker = groupcoord_broker_factory(quota_window_num=2, quota_window_size_seconds=1)
    admin = await Connection.open(broker.bootstrap_servers)
    try:
        assert (await alter_quotas(admin, entry({"ip": "127.0.0.1"}, connection_creation_rate=3)))[0][1] == 0
    finally:
        await admin.close()
    answered, refused = [], 0
    for _ in range(8):
        conn = await Connection.open(broker.bootstrap_servers, timeout_s=5)
        try:
            await conn.send(ApiVersionsRequest())
            answered.append(conn)
        except (WireError, ConnectionError, TimeoutError):
            refused += 1
            await conn.close()
    try:
        assert answered and refused >= 2  # a refused one is held for its throttle time, during which the rate falls
        assert (await answered[0].send(ApiVersionsRequest())).error_code == ErrorCode.none
    finally:
        for conn in answered:
            await conn.close()
    assert broker.quotas.managers.connections.throttled >= refused
