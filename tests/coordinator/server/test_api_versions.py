"""ApiVersions answers from the one registry: a client is told exactly what the broker serves."""

import pytest

from groupcoord.protocol.registry import kio_versions, request_class, response_class
from tests.support.wire import WireClient


@pytest.fixture
def wire(groupcoord_broker):
    with WireClient(groupcoord_broker.bootstrap_servers) as client:
        yield client


def test_every_version_of_api_versions_lists_exactly_the_registry(groupcoord_broker, wire):
    registry = groupcoord_broker.dispatcher.registry
    expected = [(r.api_key, r.min_version, r.max_version) for r in registry.ranges()]
    for version in range(0, 5):
        body = {"client_software_name": "groupcoord-tests", "client_software_version": "1.0"} if version >= 3 else {}
        answer = wire.request(18, version, body)
        assert answer.error_code == 0
        assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == expected


def test_every_advertised_version_has_schemas_and_a_handler(groupcoord_broker):
    dispatcher = groupcoord_broker.dispatcher
    for served in dispatcher.registry.ranges():
        assert served.api_key in dispatcher._handlers
        for version in range(served.min_version, served.max_version + 1):
            assert version in kio_versions(served.api_key)
            assert request_class(served.api_key, version) and response_class(served.api_key, version)


def test_the_apis_a_consumer_group_needs_are_all_served(groupcoord_broker):
    served = {r.api_key for r in groupcoord_broker.dispatcher.registry.ranges()}
    # Produce, Fetch, ListOffsets, Metadata, OffsetCommit, OffsetFetch, FindCoordinator, JoinGroup, Heartbeat,
    # LeaveGroup, SyncGroup, DescribeGroups, ListGroups, ApiVersions, CreateTopics, DeleteTopics,
    # InitProducerId, DescribeConfigs, CreatePartitions, DeleteGroups, OffsetDelete, DescribeCluster
    assert {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 22, 32, 37, 42, 47, 60} <= served


def test_an_invalid_client_software_name_is_an_invalid_request(wire):
    answer = wire.request(18, 3, {"client_software_name": "-bad name-", "client_software_version": "1.0"})
    assert answer.error_code == 42  # INVALID_REQUEST (KIP-511)


def test_describe_groups_v6_reports_an_unknown_group_as_not_found_as_kafka_4_does(wire):
    answer = wire.request(15, 6, {"groups": ["nobody-here"], "include_authorized_operations": False})
    group = answer.groups[0]
    assert (group.error_code, group.group_state) == (69, "Dead")  # GROUP_ID_NOT_FOUND
    assert group.error_message == "Group nobody-here not found."
    older = wire.request(15, 5, {"groups": ["nobody-here"], "include_authorized_operations": False})
    assert (older.groups[0].error_code, older.groups[0].group_state) == (0, "Dead")


def test_describe_cluster_v2_names_this_broker_unfenced(groupcoord_broker, wire):
    answer = wire.request(60, 2, {"include_cluster_authorized_operations": False, "endpoint_type": 1, "include_fenced_brokers": False})
    assert [(b.broker_id, b.port, b.is_fenced) for b in answer.brokers] == [(1, groupcoord_broker.port, False)]
