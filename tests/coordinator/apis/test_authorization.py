"""Every served API's authorisation checks, as principals with and without ACLs see them.

An embedded broker runs the StandardAuthorizer with ``User:admin`` as a super user; requests are sent as
a principal through the dispatcher (tests/support/principals.py) until listeners authenticate.
"""

import asyncio

import pytest

from groupcoord.coordinator.broker import Broker
from groupcoord.coordinator.security.acl import (
    ANY_FILTER,
    AclOperation as Op,
    AclPermissionType as Perm,
    PatternType as PT,
    ResourceType as RT,
    to_bitfield,
)
from groupcoord.protocol.errors import ErrorCode as E
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.coordinator.security.authorizer import STANDARD_AUTHORIZER as STANDARD
from tests.support.principals import CLOSED, allow, call_as

pytestmark = pytest.mark.timeout(60)


ACLS = [
    allow("User:alice", RT.TOPIC, "orders", Op.READ),
    allow("User:alice", RT.TOPIC, "orders", Op.WRITE),
    allow("User:alice", RT.GROUP, "alice-", Op.READ, PT.PREFIXED),
    allow("User:alice", RT.TOPIC, "alice-", Op.CREATE, PT.PREFIXED),
    allow("User:carol", RT.TOPIC, "orders", Op.ALL),
    allow("User:carol", RT.TOPIC, "orders", Op.DELETE, perm=Perm.DENY),
]


@pytest.fixture
async def broker(tmp_path):
    async with Broker(data_dir=tmp_path, authorizer_class_name=STANDARD, super_users="User:admin",
                      group_initial_rebalance_delay_ms=0, num_partitions=2) as b:
        b.authorizer.create_acls(ACLS)
        for topic in ("orders", "secret"):
            await b.dataplane.topics.create(topic, 2)
        yield b


def codes(response, topics_field="topics", partitions_field="partitions", name="name"):
    return {(getattr(t, name), p.partition_index if hasattr(p, "partition_index") else p.index): p.error_code
            for t in getattr(response, topics_field) for p in getattr(t, partitions_field)}


# -- the ACL APIs ------------------------------------------------------------------------------------

CREATION = {"resource_type": 3, "resource_name": "g", "resource_pattern_type": 3, "principal": "User:bob",
            "host": "*", "operation": 3, "permission_type": 3}


async def test_acl_apis_answer_security_disabled_without_an_authorizer(tmp_path):
    async with Broker(data_dir=tmp_path) as b:
        r = await call_as(b, "User:ANONYMOUS", 30, 3, {"creations": [CREATION]})
        assert [x.error_code for x in r.results] == [E.security_disabled]
        r = await call_as(b, "User:ANONYMOUS", 29, 3, {"resource_type_filter": 1, "resource_name_filter": None,
                                                       "pattern_type_filter": 1, "principal_filter": None,
                                                       "host_filter": None, "operation": 1, "permission_type": 1})
        assert r.error_code == E.security_disabled
        r = await call_as(b, "User:ANONYMOUS", 31, 3, {"filters": [{**ANY_DELETE}]})
        assert [x.error_code for x in r.filter_results] == [E.security_disabled]


ANY_DELETE = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1, "permission_type": 1}


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_create_describe_delete_acls(broker, version):
    r = await call_as(broker, "User:bob", 30, version, {"creations": [CREATION]})
    assert [x.error_code for x in r.results] == [E.cluster_authorization_failed]
    r = await call_as(broker, "User:bob", 29, version, {**ANY_DELETE})
    assert r.error_code == E.cluster_authorization_failed and not r.resources
    bad = [
        {**CREATION, "resource_type": 4, "resource_name": "not-the-cluster"},
        {**CREATION, "resource_name": ""},
        {**CREATION, "resource_type": 99},          # a code Kafka does not know: UNKNOWN, refused
        {**CREATION, "principal": "bob"},           # no principal type
    ]
    r = await call_as(broker, "User:admin", 30, version, {"creations": [CREATION, *bad]})
    assert [x.error_code for x in r.results] == [E.none] + [E.invalid_request] * len(bad)
    assert r.results[1].error_message == "The only valid name for the CLUSTER resource is kafka-cluster"
    # MATCH or ANY where a binding needs a concrete value: Kafka cannot build the binding, the request fails
    r = await call_as(broker, "User:admin", 30, version, {"creations": [CREATION, {**CREATION, "operation": 1}]})
    assert [x.error_code for x in r.results] == [E.unknown_server_error] * 2
    r = await call_as(broker, "User:admin", 29, version, {**ANY_DELETE, "resource_type_filter": 3,
                                                          "principal_filter": "User:bob"})
    assert [(x.resource_type, x.resource_name, x.pattern_type, [(a.principal, a.operation) for a in x.acls])
            for x in r.resources] == [(3, "g", 3, [("User:bob", 3)])]
    r = await call_as(broker, "User:admin", 31, version, {"filters": [{**ANY_DELETE, "principal_filter": "User:bob"},
                                                                      {**ANY_DELETE, "resource_type_filter": 99}]})
    assert [len(x.matching_acls) for x in r.filter_results] == [1, 0]
    assert [x.error_code for x in r.filter_results] == [E.none, E.invalid_request]
    assert r.filter_results[1].error_message == "Unknown patternFilter."
    assert len(broker.authorizer.acls(ANY_FILTER)) == len(ACLS)


async def test_an_acl_request_with_unknown_elements_closes_the_connection(broker):
    assert await call_as(broker, "User:admin", 30, 3, {"creations": [{**CREATION, "operation": 0}]}) == CLOSED
    assert await call_as(broker, "User:admin", 29, 3, {**ANY_DELETE, "permission_type": 0}) == CLOSED


# -- the data plane ----------------------------------------------------------------------------------

async def test_metadata_hides_what_the_principal_may_not_describe(broker):
    r = await call_as(broker, "User:bob", 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                  "include_topic_authorized_operations": False})
    assert r.topics == ()
    r = await call_as(broker, "User:alice", 3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                                    "include_topic_authorized_operations": True})
    assert [(t.name, t.error_code, t.topic_authorized_operations) for t in r.topics] == [
        ("orders", 0, to_bitfield({Op.READ, Op.WRITE, Op.DESCRIBE}))]
    asked = [{"name": n, "topic_id": ZERO_UUID} for n in ("orders", "secret", "nowhere", "alice-new", "other-new")]
    r = await call_as(broker, "User:bob", 3, 12, {"topics": asked, "allow_auto_topic_creation": True,
                                                  "include_topic_authorized_operations": False})
    # an existing topic and a missing one look alike: TOPIC_AUTHORIZATION_FAILED, no id
    assert {t.name: (t.error_code, t.topic_id in (None, ZERO_UUID)) for t in r.topics} == {
        n: (E.topic_authorization_failed, True) for n in ("orders", "secret", "nowhere", "alice-new", "other-new")}
    broker.authorizer.create_acls([allow("User:alice", RT.TOPIC, "*", Op.DESCRIBE)])
    r = await call_as(broker, "User:alice", 3, 12, {"topics": asked, "allow_auto_topic_creation": True,
                                                    "include_topic_authorized_operations": False})
    got = {t.name: t.error_code for t in r.topics}
    assert got == {"orders": E.none, "secret": E.none, "nowhere": E.topic_authorization_failed,
                   "alice-new": E.none, "other-new": E.topic_authorization_failed}
    assert broker.dataplane.topics.get("alice-new") is not None and broker.dataplane.topics.get("other-new") is None


async def test_produce_fetch_and_list_offsets_need_write_read_and_describe(broker):
    records = encode_batch([(b"k", b"v", ())])
    produce = {"transactional_id": None, "acks": -1, "timeout": 5000, "topic_data": [
        {"name": n, "partition_data": [{"index": 0, "records": records}]} for n in ("orders", "secret")]}
    r = await call_as(broker, "User:alice", 0, 9, produce)
    assert codes(r, "responses", "partition_responses") == {("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed}
    txn = encode_batch([(b"k", b"v", ())], producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
    r = await call_as(broker, "User:alice", 0, 9, {**produce, "transactional_id": "tx", "topic_data": [
        {"name": "orders", "partition_data": [{"index": 0, "records": txn}]}]})
    assert codes(r, "responses", "partition_responses") == {("orders", 0): E.transactional_id_authorization_failed}
    fetch = {"replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
             "session_id": 0, "session_epoch": -1, "topics": [
                 {"topic": n, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
                                              "current_leader_epoch": -1, "log_start_offset": -1}]}
                 for n in ("orders", "secret", "nowhere")], "forgotten_topics_data": [], "rack_id": ""}
    r = await call_as(broker, "User:alice", 1, 12, fetch)
    assert codes(r, "responses", "partitions", "topic") == {
        ("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed, ("nowhere", 0): E.topic_authorization_failed}
    assert [t for t in r.responses if t.topic == "orders"][0].partitions[0].records
    lo = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": n, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}
        for n in ("orders", "secret")]}
    r = await call_as(broker, "User:alice", 2, 7, lo)
    assert codes(r) == {("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed}


async def test_init_producer_id_needs_idempotent_write_or_write_on_some_topic(broker):
    body = {"transactional_id": None, "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1}
    assert (await call_as(broker, "User:bob", 22, 4, body)).error_code == E.cluster_authorization_failed
    assert (await call_as(broker, "User:alice", 22, 4, body)).error_code == E.none
    r = await call_as(broker, "User:alice", 22, 4, {**body, "transactional_id": "tx"})
    assert r.error_code == E.transactional_id_authorization_failed


async def test_topic_admin_apis(broker):
    create = {"timeout": 5000, "validate_only": False, "topics": [
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []}
        for n in ("alice-t", "bob-t")]}
    r = await call_as(broker, "User:alice", 19, 7, create)
    got = {t.name: (t.error_code, t.topic_config_error_code, t.num_partitions) for t in r.topics}
    # created, but without DESCRIBE_CONFIGS its configs are not told
    assert got == {"alice-t": (E.none, E.topic_authorization_failed, -1), "bob-t": (E.topic_authorization_failed, 0, -1)}
    r = await call_as(broker, "User:carol", 20, 6, {"timeout": 5000, "topics": [
        {"name": n, "topic_id": ZERO_UUID} for n in ("orders", "nowhere")]})
    assert {t.name: t.error_code for t in r.responses} == {"orders": E.topic_authorization_failed,
                                                           "nowhere": E.topic_authorization_failed}
    orders_id = broker.dataplane.topics.get("orders").topic_id
    r = await call_as(broker, "User:bob", 20, 6, {"timeout": 5000, "topics": [{"name": None, "topic_id": orders_id}]})
    assert [(t.name, t.error_code) for t in r.responses] == [(None, E.topic_authorization_failed)]
    r = await call_as(broker, "User:admin", 20, 6, {"timeout": 5000, "topics": [{"name": "alice-t", "topic_id": ZERO_UUID}]})
    assert [t.error_code for t in r.responses] == [E.none]
    r = await call_as(broker, "User:alice", 37, 3, {"timeout": 5000, "validate_only": True, "topics": [
        {"name": "orders", "count": 4, "assignments": None}]})
    assert [x.error_code for x in r.results] == [E.topic_authorization_failed]
    r = await call_as(broker, "User:carol", 37, 3, {"timeout": 5000, "validate_only": True, "topics": [
        {"name": "orders", "count": 4, "assignments": None}]})
    assert [x.error_code for x in r.results] == [E.none]
    r = await call_as(broker, "User:carol", 32, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
        {"resource_type": 2, "resource_name": "orders", "configuration_keys": None},
        {"resource_type": 2, "resource_name": "secret", "configuration_keys": None},
        {"resource_type": 4, "resource_name": "1", "configuration_keys": None}]})
    assert [(x.resource_name, x.error_code) for x in r.results] == [
        ("orders", E.none), ("secret", E.topic_authorization_failed), ("1", E.cluster_authorization_failed)]


async def test_describe_cluster_reports_the_principal_s_cluster_operations(broker):
    body = {"include_cluster_authorized_operations": True, "endpoint_type": 1, "include_fenced_brokers": False}
    assert (await call_as(broker, "User:bob", 60, 2, body)).cluster_authorized_operations == 0
    all_ops = (await call_as(broker, "User:admin", 60, 2, body)).cluster_authorized_operations
    assert all_ops == to_bitfield({Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS,
                                   Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE})


# -- the group APIs ---------------------------------------------------------------------------------

JOIN = {"session_timeout": 10000, "rebalance_timeout": 10000, "member_id": "", "group_instance_id": None,
        "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"\x00\x01"}], "reason": None}


async def test_classic_group_apis_need_read_on_the_group(broker):
    r = await call_as(broker, "User:bob", 11, 9, {**JOIN, "group_id": "alice-g"})
    assert (r.error_code, r.member_id, r.generation_id) == (E.group_authorization_failed, "", -1)
    r = await call_as(broker, "User:alice", 11, 9, {**JOIN, "group_id": "alice-g"})
    assert r.error_code == E.member_id_required
    r = await call_as(broker, "User:alice", 11, 9, {**JOIN, "group_id": "alice-g", "member_id": r.member_id})
    assert r.error_code == E.none
    member, generation = r.member_id, r.generation_id
    sync = {"group_id": "alice-g", "generation_id": generation, "member_id": member, "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range", "assignments": [{"member_id": member, "assignment": b""}]}
    assert (await call_as(broker, "User:bob", 14, 5, sync)).error_code == E.group_authorization_failed
    assert (await call_as(broker, "User:alice", 14, 5, sync)).error_code == E.none
    hb = {"group_id": "alice-g", "generation_id": generation, "member_id": member, "group_instance_id": None}
    assert (await call_as(broker, "User:bob", 12, 4, hb)).error_code == E.group_authorization_failed
    assert (await call_as(broker, "User:alice", 12, 4, hb)).error_code == E.none

    commit = {"group_id": "alice-g", "generation_id_or_member_epoch": generation, "member_id": member,
              "group_instance_id": None, "topics": [
                  {"name": n, "partitions": [{"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                                              "committed_metadata": ""}]} for n in ("orders", "secret")]}
    r = await call_as(broker, "User:alice", 8, 9, commit)
    assert codes(r) == {("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed}
    r = await call_as(broker, "User:bob", 8, 9, commit)
    assert set(codes(r).values()) == {E.group_authorization_failed}

    # OffsetFetch: DESCRIBE on the group (READ implies it); topics asked for are refused one by one,
    # all topics are filtered silently
    broker.authorizer.create_acls([allow("User:admin2", RT.GROUP, "*", Op.DESCRIBE)])
    asked = {"groups": [{"group_id": "alice-g", "member_id": None, "member_epoch": -1,
                         "topics": [{"name": n, "partition_indexes": [0]} for n in ("orders", "secret")]}], "require_stable": False}
    r = await call_as(broker, "User:alice", 9, 9, asked)
    assert {(t.name, p.partition_index): (p.error_code, p.committed_offset) for t in r.groups[0].topics for p in t.partitions} == {
        ("orders", 0): (E.none, 5), ("secret", 0): (E.topic_authorization_failed, -1)}
    r = await call_as(broker, "User:admin", 8, 9, {**commit, "generation_id_or_member_epoch": -1, "member_id": ""})
    r = await call_as(broker, "User:alice", 9, 9, {"groups": [{"group_id": "alice-g", "member_id": None, "member_epoch": -1,
                                                               "topics": None}], "require_stable": False})
    assert [t.name for t in r.groups[0].topics] == ["orders"]
    r = await call_as(broker, "User:bob", 9, 7, {"group_id": "alice-g", "topics": None, "require_stable": False})
    assert r.error_code == E.group_authorization_failed

    # the admin APIs
    r = await call_as(broker, "User:bob", 15, 5, {"groups": ["alice-g"], "include_authorized_operations": True})
    assert [g.error_code for g in r.groups] == [E.group_authorization_failed]
    r = await call_as(broker, "User:alice", 15, 5, {"groups": ["alice-g"], "include_authorized_operations": True})
    assert [(g.error_code, g.group_state, g.authorized_operations) for g in r.groups] == [
        (E.none, "Stable", to_bitfield({Op.READ, Op.DESCRIBE}))]
    listed = {"states_filter": [], "types_filter": []}
    assert [g.group_id for g in (await call_as(broker, "User:alice", 16, 5, listed)).groups] == ["alice-g"]
    assert [g.group_id for g in (await call_as(broker, "User:bob", 16, 5, listed)).groups] == []
    assert [g.group_id for g in (await call_as(broker, "User:admin", 16, 5, listed)).groups] == ["alice-g"]
    r = await call_as(broker, "User:alice", 10, 6, {"key_type": 0, "coordinator_keys": ["alice-g", "bob-g"]})
    assert [c.error_code for c in r.coordinators] == [E.none, E.group_authorization_failed]
    r = await call_as(broker, "User:alice", 10, 3, {"key": "bob-g", "key_type": 0})
    assert (r.error_code, r.node_id) == (E.group_authorization_failed, -1)
    r = await call_as(broker, "User:alice", 42, 2, {"groups_names": ["alice-g", "alice-g"]})
    assert [(x.group_id, x.error_code) for x in r.results] == [("alice-g", E.group_authorization_failed)]
    r = await call_as(broker, "User:alice", 47, 0, {"group_id": "alice-g", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0}]}]})
    assert r.error_code == E.group_authorization_failed
    leave = {"group_id": "alice-g", "members": [{"member_id": member, "group_instance_id": None, "reason": None}]}
    assert (await call_as(broker, "User:bob", 13, 5, leave)).error_code == E.group_authorization_failed
    assert (await call_as(broker, "User:alice", 13, 5, leave)).error_code == E.none


async def test_consumer_group_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(broker):
    body = {"group_id": "alice-cg", "member_id": "m" * 22, "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout": 30000, "subscribed_topic_names": ["orders"], "subscribed_topic_regex": None,
            "server_assignor": None, "topic_partitions": []}
    assert (await call_as(broker, "User:bob", 68, 1, body)).error_code == E.group_authorization_failed
    r = await call_as(broker, "User:alice", 68, 1, {**body, "subscribed_topic_names": ["orders", "secret"]})
    assert r.error_code == E.topic_authorization_failed
    r = await call_as(broker, "User:alice", 68, 1, body)
    assert r.error_code == E.none and r.member_epoch > 0
    r = await call_as(broker, "User:bob", 69, 1, {"group_ids": ["alice-cg"], "include_authorized_operations": True})
    assert [g.error_code for g in r.groups] == [E.group_authorization_failed]
    r = await call_as(broker, "User:alice", 69, 1, {"group_ids": ["alice-cg"], "include_authorized_operations": True})
    assert [(g.error_code, g.authorized_operations) for g in r.groups] == [(E.none, to_bitfield({Op.READ, Op.DESCRIBE}))]


async def test_denials_are_counted_by_api(broker):
    await call_as(broker, "User:bob", 12, 4, {"group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None})
    text = broker.metrics.exposition().decode()
    assert 'groupcoord_authorization_denials_total{api="Heartbeat"} 1.0' in text


async def test_a_regex_subscription_resolves_only_to_topics_the_member_may_describe(broker):
    body = {"group_id": "alice-rx", "member_id": "r" * 22, "member_epoch": 0, "instance_id": None, "rack_id": None,
            "rebalance_timeout": 30000, "subscribed_topic_names": [], "subscribed_topic_regex": "orders|secret",
            "server_assignor": None, "topic_partitions": []}
    r = await call_as(broker, "User:alice", 68, 1, body)
    assert r.error_code == E.none
    orders = broker.dataplane.topics.get("orders").topic_id
    assert [(t.topic_id, tuple(t.partitions)) for t in r.assignment.topic_partitions] == [(orders, (0, 1))]
    # bob may describe every topic: the same regex gives him both
    r = await call_as(broker, "User:admin", 68, 1, {**body, "group_id": "other-rx", "member_id": "s" * 22})
    assert len(r.assignment.topic_partitions) == 2


async def test_a_full_disk_fails_the_acl_change_without_closing_the_connection(broker, monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("groupcoord.coordinator.security.acl_store.os.replace", full_disk)
    r = await call_as(broker, "User:admin", 30, 3, {"creations": [CREATION, {**CREATION, "resource_name": ""}]})
    assert [x.error_code for x in r.results] == [E.unknown_server_error, E.invalid_request]
    r = await call_as(broker, "User:admin", 31, 3, {"filters": [ANY_DELETE]})
    assert [x.error_code for x in r.filter_results] == [E.unknown_server_error]
    assert len(broker.authorizer.acls(ANY_FILTER)) == len(ACLS)


def added(r) -> dict:
    return {(t.name, p.partition_index): p.partition_error_code for t in r.results_by_topic_v3_and_below
            for p in t.results_by_partition}


async def test_transaction_apis_check_what_kafka_checks(broker):
    broker.authorizer.create_acls([allow("User:alice", RT.TRANSACTIONAL_ID, "alice-tx", Op.WRITE)])
    init = {"transactional_id": "alice-tx", "transaction_timeout": 60000, "producer_id": -1, "producer_epoch": -1}
    assert (await call_as(broker, "User:bob", 22, 5, init)).error_code == E.transactional_id_authorization_failed
    for _ in range(100):  # __transaction_state is created on first use
        r = await call_as(broker, "User:alice", 22, 5, init)
        if r.error_code not in (E.coordinator_load_in_progress, E.coordinator_not_available):
            break
        await asyncio.sleep(0.1)
    assert r.error_code == E.none
    pid, epoch = r.producer_id, r.producer_epoch
    add = {"v3_and_below_transactional_id": "alice-tx", "v3_and_below_producer_id": pid,
           "v3_and_below_producer_epoch": epoch, "v3_and_below_topics": [
               {"name": n, "partitions": [0]} for n in ("orders", "secret")]}
    r = await call_as(broker, "User:bob", 24, 3, add)
    assert added(r) == {
        ("orders", 0): E.transactional_id_authorization_failed, ("secret", 0): E.transactional_id_authorization_failed}
    r = await call_as(broker, "User:alice", 24, 3, add)
    assert added(r) == {
        ("orders", 0): E.operation_not_attempted, ("secret", 0): E.topic_authorization_failed}
    r = await call_as(broker, "User:alice", 24, 3, {**add, "v3_and_below_topics": [{"name": "orders", "partitions": [0]}]})
    assert added(r) == {("orders", 0): E.none}
    r = await call_as(broker, "User:alice", 24, 4, {"transactions": [{"transactional_id": "alice-tx", "producer_id": pid,
                                                                      "producer_epoch": epoch, "verify_only": True,
                                                                      "topics": [{"name": "orders", "partitions": [0]}]}]})
    assert r.error_code == E.cluster_authorization_failed  # v4+ are the brokers'
    offsets = {"transactional_id": "alice-tx", "producer_id": pid, "producer_epoch": epoch}
    r = await call_as(broker, "User:alice", 25, 3, {**offsets, "group_id": "bob-g"})
    assert r.error_code == E.group_authorization_failed
    r = await call_as(broker, "User:bob", 25, 3, {**offsets, "group_id": "alice-g"})
    assert r.error_code == E.transactional_id_authorization_failed
    assert (await call_as(broker, "User:alice", 25, 3, {**offsets, "group_id": "alice-g"})).error_code == E.none
    commit = {**offsets, "group_id": "alice-g", "generation_id": -1, "member_id": "", "group_instance_id": None,
              "topics": [{"name": n, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}
                         for n in ("orders", "secret")]}
    r = await call_as(broker, "User:alice", 28, 3, commit)
    assert codes(r) == {("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed}
    r = await call_as(broker, "User:bob", 28, 3, commit)
    assert set(codes(r).values()) == {E.transactional_id_authorization_failed}
    r = await call_as(broker, "User:alice", 65, 0, {"transactional_ids": ["alice-tx", "bob-tx"]})
    assert [(s.transactional_id, s.error_code) for s in r.transaction_states] == [
        ("alice-tx", E.none), ("bob-tx", E.transactional_id_authorization_failed)]
    # its partitions: orders and a __consumer_offsets partition, which alice may not DESCRIBE: not shown
    assert [t.topic for t in r.transaction_states[0].topics] == ["orders"]
    r = await call_as(broker, "User:alice", 66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1})
    assert [s.transactional_id for s in r.transaction_states] == ["alice-tx"]
    r = await call_as(broker, "User:bob", 66, 1, {"state_filters": [], "producer_id_filters": [], "duration_filter": -1})
    assert r.transaction_states == ()
    end = {**offsets, "committed": False}
    assert (await call_as(broker, "User:bob", 26, 4, end)).error_code == E.transactional_id_authorization_failed
    assert (await call_as(broker, "User:alice", 26, 4, end)).error_code == E.none
    r = await call_as(broker, "User:alice", 27, 1, {"markers": [{"producer_id": pid, "producer_epoch": epoch,
                                                                 "transaction_result": False, "coordinator_epoch": 0,
                                                                 "topics": [{"name": "orders", "partition_indexes": [0]}]}]})
    assert {p.error_code for m in r.markers for t in m.topics for p in t.partitions} == {E.cluster_authorization_failed}


async def test_describe_producers_needs_read_on_the_topic(broker):
    r = await call_as(broker, "User:alice", 61, 0, {"topics": [{"name": n, "partition_indexes": [0]}
                                                               for n in ("orders", "secret")]})
    assert codes(r) == {("orders", 0): E.none, ("secret", 0): E.topic_authorization_failed}


UNCHECKED_BY_KAFKA = {"api_versions", "sasl_handshake", "sasl_authenticate"}


def test_every_served_api_makes_kafka_s_checks():
    """A new API module either checks what Kafka checks or is one Kafka serves to anyone."""
    import inspect

    from groupcoord.coordinator.apis.registry import APIS, API_MODULES

    def checks(module) -> bool:
        """The module's own source, or that of an API helper it calls (config_alterations), consults the authorizer."""
        helpers = {inspect.getmodule(v) for v in vars(module).values() if inspect.isfunction(v)}
        sources = [inspect.getsource(m) for m in {module, *helpers}
                   if m is not None and m.__name__.startswith("groupcoord.coordinator.apis.")]
        return any("authorizer" in source for source in sources)

    unchecked = {name for name, module in zip(API_MODULES, APIS) if not checks(module)}
    assert unchecked == UNCHECKED_BY_KAFKA



async def test_share_group_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(broker):
    body = {"group_id": "alice-sg", "member_id": "s" * 22, "member_epoch": 0, "rack_id": None,
            "subscribed_topic_names": ["orders"]}
    assert (await call_as(broker, "User:bob", 76, 1, body)).error_code == E.group_authorization_failed
    r = await call_as(broker, "User:alice", 76, 1, {**body, "subscribed_topic_names": ["orders", "secret"]})
    assert r.error_code == E.topic_authorization_failed
    r = await call_as(broker, "User:alice", 76, 1, body)
    assert r.error_code == E.none and r.member_epoch > 0
    r = await call_as(broker, "User:bob", 77, 1, {"group_ids": ["alice-sg"], "include_authorized_operations": True})
    assert [g.error_code for g in r.groups] == [E.group_authorization_failed]
    r = await call_as(broker, "User:alice", 77, 1, {"group_ids": ["alice-sg"], "include_authorized_operations": True})
    assert [(g.error_code, g.authorized_operations) for g in r.groups] == [(E.none, to_bitfield({Op.READ, Op.DESCRIBE}))]
