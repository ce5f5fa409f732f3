"""Stock clients connect, negotiate versions and read cluster metadata — against the embedded fixture
and against the daemon."""

import asyncio

import pytest
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient

from aiokafka import AIOKafkaClient


@pytest.fixture(params=["embedded", "daemon"])
def bootstrap(request):
    if request.param == "embedded":
        return request.getfixturevalue("groupcoord_broker").bootstrap_servers
    return request.getfixturevalue("groupcoord_daemon").bootstrap_servers


def test_kafka_python_admin_lists_topics_and_describes_the_cluster(bootstrap):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        cluster = admin.describe_cluster()
        assert cluster["controller_id"] == 1
        assert [(b["broker_id"], f"{b['host']}:{b['port']}") for b in cluster["brokers"]] == [(1, bootstrap)]
        assert len(cluster["cluster_id"]) == 22
        assert "__consumer_offsets" in admin.list_topics()
    finally:
        admin.close()


def test_confluent_kafka_list_topics_sees_the_internal_offsets_topic(bootstrap):
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    assert list(metadata.brokers) == [1]
    assert len(metadata.topics["__consumer_offsets"].partitions) == 50


def test_aiokafka_client_bootstraps_and_reads_metadata(bootstrap):
    async def run():
        client = AIOKafkaClient(bootstrap_servers=bootstrap)
        await client.bootstrap()
        try:
            await client.fetch_all_metadata()
            return client.cluster.brokers(), client.cluster.controller
        finally:
            await client.close()

    brokers, controller = asyncio.run(run())
    assert [b.nodeId for b in brokers] == [1]
    assert controller.nodeId == 1
