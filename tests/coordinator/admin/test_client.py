"""The admin client against an in-process fake broker: framing, headers, version negotiation, failures."""

from __future__ import annotations

import asyncio

import pytest

from groupcoord.coordinator.admin.client import (
    AdminClient,
    AdminError,
    ApiKey,
    BrokerConnection,
    KafkaApiError,
    choose_version,
    parse_bootstrap,
)
from groupcoord.coordinator.admin.operations import describe_topics, list_groups

from .fake_broker import FakeBroker, FakeCluster, FakeGroup


async def test_negotiates_the_highest_common_version_per_api():
    async with FakeBroker(FakeCluster(groups={"g": FakeGroup()})) as broker:
        async with AdminClient(broker.bootstrap) as client:
            conn = await client.connection()
            assert conn.version_for(ApiKey.DESCRIBE_GROUPS) == 5  # broker max 5, kio max 6
            assert conn.version_for(ApiKey.FIND_COORDINATOR) == 3  # capped: v4+ batches keys
            assert conn.version_for(ApiKey.OFFSET_FETCH) == 7  # capped: v8+ batches groups
            await list_groups(client)
    api_keys = [key for key, *_ in broker.requests]
    assert api_keys[0] == ApiKey.API_VERSIONS
    assert ApiKey.LIST_GROUPS in api_keys


async def test_correlation_ids_increase_and_client_id_is_sent():
    async with FakeBroker(FakeCluster(groups={"g": FakeGroup()})) as broker:
        async with AdminClient(broker.bootstrap, client_id="ops-team") as client:
            for _ in range(3):
                await list_groups(client)
    correlation_ids = [cid for _, _, cid, _ in broker.requests]
    assert correlation_ids == sorted(correlation_ids) and len(set(correlation_ids)) == len(correlation_ids)
    assert {client_id for *_, client_id in broker.requests} == {"ops-team"}


async def test_old_broker_answering_unsupported_version_is_retried_with_its_api_versions_version():
    ranges = {ApiKey.API_VERSIONS: (0, 2), ApiKey.LIST_GROUPS: (0, 2), ApiKey.METADATA: (1, 9)}
    async with FakeBroker(FakeCluster(groups={"g": FakeGroup()}), ranges=ranges) as broker:
        async with AdminClient(broker.bootstrap) as client:
            groups = await list_groups(client)
    assert [g.group_id for g in groups] == ["g"]
    assert [(k, v) for k, v, *_ in broker.requests[:2]] == [(ApiKey.API_VERSIONS, 3), (ApiKey.API_VERSIONS, 2)]
    assert (ApiKey.LIST_GROUPS, 2) in [(k, v) for k, v, *_ in broker.requests]


async def test_non_flexible_versions_use_header_v1_and_still_decode():
    ranges = {ApiKey.API_VERSIONS: (0, 2), ApiKey.METADATA: (1, 8), ApiKey.LIST_GROUPS: (0, 2)}
    async with FakeBroker(FakeCluster(topics={"orders": [(0, 5)]}), ranges=ranges) as broker:
        async with AdminClient(broker.bootstrap) as client:
            cluster = await client.metadata(None)
    assert list(cluster.topics) == ["orders"]
    assert cluster.brokers == {1: ("127.0.0.1", broker.port)}


def test_no_common_version_is_a_clear_error():
    with pytest.raises(AdminError, match="no common version for API describe_groups"):
        choose_version(ApiKey.DESCRIBE_GROUPS, (7, 9))
    with pytest.raises(AdminError, match="does not support API 42"):
        choose_version(ApiKey.DELETE_GROUPS, None)


async def test_a_slow_broker_times_out_instead_of_hanging():
    async with FakeBroker(FakeCluster()) as broker:
        async with AdminClient(broker.bootstrap, timeout=0.2) as client:
            await client.connection()
            broker.answer_delay = 1.0
            with pytest.raises(AdminError, match="timed out after 0.2s"):
                await client.metadata(None)


async def test_a_mismatched_correlation_id_is_rejected():
    async with FakeBroker(FakeCluster()) as broker:
        async with AdminClient(broker.bootstrap) as client:
            await client.connection()
            broker.corrupt_correlation = True
            with pytest.raises(AdminError, match="correlation id mismatch"):
                await client.metadata(None)


async def test_unreachable_bootstrap_server_names_the_address():
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    with pytest.raises(AdminError, match=f"cannot connect to 127.0.0.1:{port}"):
        await BrokerConnection.open("127.0.0.1", port, timeout=1.0)


async def test_broker_error_codes_surface_with_kafka_names():
    async with FakeBroker(FakeCluster()) as broker:
        async with AdminClient(broker.bootstrap) as client:
            with pytest.raises(KafkaApiError, match="UNKNOWN_TOPIC_OR_PARTITION"):
                await describe_topics(client, ["missing"])


def test_bootstrap_lists_are_parsed_like_kafka_tools():
    assert parse_bootstrap("a:9092, b:9093") == [("a", 9092), ("b", 9093)]
    assert parse_bootstrap("[::1]:9092") == [("::1", 9092)]
    with pytest.raises(AdminError, match="expected HOST:PORT"):
        parse_bootstrap("localhost")
