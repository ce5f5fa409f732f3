"""ConsumerGroupHeartbeat / ConsumerGroupDescribe over the wire: registered, encoded, and the topic ids they
hand out resolve through Metadata."""

import uuid

import pytest

from tests.support.wire import WireClient

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def wire(groupcoord_broker):
    with WireClient(groupcoord_broker.bootstrap_servers) as client:
        yield client


def create_topic(wire, name: str, partitions: int) -> uuid.UUID:
    answer = wire.request(19, 7, {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1,
                                              "assignments": [], "configs": []}], "timeout": 10_000, "validate_only": False})
    assert answer.topics[0].error_code == 0
    return answer.topics[0].topic_id


def join(wire, version: int, group: str, member_id: str, topic: str):
    return wire.request(68, version, {"group_id": group, "member_id": member_id, "member_epoch": 0, "rebalance_timeout": 30_000,
                                      "subscribed_topic_names": [topic], "topic_partitions": []})


def test_the_apis_are_advertised(groupcoord_broker):
    served = {r.api_key: (r.min_version, r.max_version) for r in groupcoord_broker.dispatcher.registry.ranges()}
    assert served[68] == (0, 1) and served[69] == (0, 1)


def test_join_describe_and_resolve_the_assignment_by_topic_id(wire):
    topic_id = create_topic(wire, "wire-cg-topic", 3)
    r = join(wire, 1, "wire-cg", "member-one", "wire-cg-topic")
    assert (r.error_code, r.member_id, r.member_epoch) == (0, "member-one", 2)  # a new group starts at epoch 1
    assert r.heartbeat_interval.total_seconds() == 5
    assert [(tp.topic_id, sorted(tp.partitions)) for tp in r.assignment.topic_partitions] == [(topic_id, [0, 1, 2])]

    v0 = join(wire, 0, "wire-cg", "", "wire-cg-topic")
    assert v0.error_code == 0 and len(v0.member_id) == 22  # the coordinator's generated Uuid

    described = wire.request(69, 1, {"group_ids": ["wire-cg", "wire-missing"], "include_authorized_operations": False})
    group, missing = described.groups
    assert (group.error_code, group.group_state, group.group_epoch, group.assignor_name) == (0, "Reconciling", 3, "uniform")
    assert sorted(m.member_id for m in group.members) == sorted(["member-one", v0.member_id])
    assert (missing.error_code, missing.error_message) == (69, "Group wire-missing not found.")

    metadata = wire.request(3, 12, {"topics": [{"topic_id": topic_id, "name": None}, {"topic_id": uuid.uuid4(), "name": None}],
                                    "allow_auto_topic_creation": False, "include_topic_authorized_operations": False})
    # Kafka's KafkaApis lists the unknown topic ids first, then the topics found
    unknown, found = metadata.topics
    assert (found.name, found.topic_id, len(found.partitions)) == ("wire-cg-topic", topic_id, 3)
    assert (unknown.error_code, unknown.name) == (100, None)

    left = wire.request(68, 1, {"group_id": "wire-cg", "member_id": "member-one", "member_epoch": -1, "instance_id": None,
                                "rack_id": None, "rebalance_timeout": -1, "subscribed_topic_names": None,
                                "subscribed_topic_regex": None, "server_assignor": None, "topic_partitions": None})
    assert (left.error_code, left.member_epoch) == (0, -1)

    listed = wire.request(16, 5, {"states_filter": [], "types_filter": ["consumer"]})
    assert [(g.group_id, g.group_type, g.protocol_type) for g in listed.groups] == [("wire-cg", "consumer", "consumer")]
