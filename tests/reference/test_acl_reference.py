"""Authorisation, differentially: Kafka 4.3.1 and groupcoord, each with a SASL_PLAINTEXT listener
(SCRAM-SHA-512), the StandardAuthorizer, ``User:admin`` as super user and the same ACL set (created over
the wire by the admin: CreateAcls is itself compared). Then every (principal, API, resource) case of the
table below is asked of both through SASL-authenticated connections, and the error codes (per topic,
partition or group where the API answers per resource, and the authorized-operations bitfields) must be
the same. The table is printed (``pytest -s``, or in the failure report).

Kafka's PLAINTEXT listener stays for its controller and inter-broker traffic (``User:ANONYMOUS`` is a
super user there); clients only use the SASL listener.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Callable

import pytest

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.coordinator.security.scram import ScramMechanism
from groupcoord.protocol.api_keys import ApiKey as K
from groupcoord.protocol.names import ZERO_UUID
from groupcoord.protocol.record_batch import encode_batch
from groupcoord.coordinator.security.authorizer import STANDARD_AUTHORIZER as STANDARD
from tests.reference.fixtures import acquired_or_skip
from tests.reference.kafka_broker import KafkaBrokerConfig, KafkaSecurity, SharedKafkaBroker
from tests.support.sasl import sasl_client

pytestmark = [pytest.mark.reference, pytest.mark.timeout(300)]

MECHANISM = "SCRAM-SHA-512"
USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret", "carol": "carol-secret",
         "dave": "dave-secret"}
SECURITY = KafkaSecurity(mechanisms=(MECHANISM,), scram_users=tuple((MECHANISM, u, p) for u, p in USERS.items()),
                         extra=(("authorizer.class.name", STANDARD), ("super.users", "User:admin;User:ANONYMOUS")))
SHARED_ACL_BROKER = SharedKafkaBroker(KafkaBrokerConfig(security=SECURITY))

TOPIC, GROUP, CLUSTER, TXN = 2, 3, 4, 5
LITERAL, PREFIXED = 3, 4
ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 2, 3, 4, 5, 6, 7, 8, 10, 11, 12
ALLOW, DENY = 3, 2

# (principal, resource type, name, pattern, operation, permission)
ACL_SET = [
    ("User:alice", TOPIC, "orders", LITERAL, READ, ALLOW),
    ("User:alice", TOPIC, "orders", LITERAL, WRITE, ALLOW),
    ("User:alice", GROUP, "app-", PREFIXED, READ, ALLOW),
    ("User:alice", TOPIC, "alice-", PREFIXED, CREATE, ALLOW),
    ("User:bob", TOPIC, "*", LITERAL, ALL, ALLOW),
    ("User:bob", TOPIC, "orders", LITERAL, READ, DENY),
    ("User:bob", GROUP, "app-ro", LITERAL, DESCRIBE, ALLOW),
    ("User:carol", CLUSTER, "kafka-cluster", LITERAL, DESCRIBE, ALLOW),
    ("User:carol", GROUP, "app-del", LITERAL, DELETE, ALLOW),
    ("User:*", TOPIC, "public", LITERAL, DESCRIBE, ALLOW),
    ("User:dave", CLUSTER, "kafka-cluster", LITERAL, IDEMPOTENT_WRITE, ALLOW),
    ("User:dave", TXN, "dave-tx", LITERAL, WRITE, ALLOW),
    ("User:dave", GROUP, "*", LITERAL, READ, ALLOW),
    ("User:dave", GROUP, "app-1", LITERAL, ALL, DENY),
    ("User:dave", TOPIC, "orders", LITERAL, ALTER_CONFIGS, ALLOW),
    ("User:alice", GROUP, "hosted", LITERAL, READ, ALLOW, "10.9.9.9"),
    ("User:alice", GROUP, "local", LITERAL, READ, ALLOW, "127.0.0.1"),
    ("User:alice", TXN, "alice-ok-tx", LITERAL, WRITE, ALLOW),
]
TOPICS = {"orders": 2, "secret": 1, "public": 1}


def creation(principal, rtype, name, pattern, op, perm, host="*") -> dict:
    return {"resource_type": rtype, "resource_name": name, "resource_pattern_type": pattern, "principal": principal,
            "host": host, "operation": op, "permission_type": perm}


ANY_ACLS = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1, "principal_filter": None,
            "host_filter": None, "operation": 1, "permission_type": 1}


class Side:
    """One broker's SASL listener, with one authenticated connection per principal."""

    def __init__(self, name: str, bootstrap: str) -> None:
        self.name = name
        self.bootstrap = bootstrap
        self.clients: dict[str, Any] = {}

    def ask(self, user: str, api: int, version: int, body: dict) -> Any:
        client = self.clients.get(user)
        if client is None:
            client = self.clients[user] = sasl_client(self.bootstrap, MECHANISM, user, USERS[user])
        try:
            return client.request(api, version, body)
        except (ConnectionError, OSError):
            self.clients.pop(user).close()
            return "connection closed"

    def close(self) -> None:
        for c in self.clients.values():
            c.close()

    def set_up(self) -> None:
        """Topics and the ACL set, by the admin over the wire; waits until the broker's authorizer has them."""
        answer = self.ask("admin", K.CREATE_TOPICS, 7, {"timeout": 30000, "validate_only": False, "topics": [
            {"name": n, "num_partitions": p, "replication_factor": 1, "assignments": [], "configs": []}
            for n, p in TOPICS.items()]})
        assert [t.error_code for t in answer.topics] == [0] * len(TOPICS), answer
        # Kafka creates __consumer_offsets and __transaction_state on first use: wait for both coordinators.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = self.ask("admin", *find_coordinator("warm-up"))
            fetched = self.ask("admin", *offset_fetch("warm-up"))
            pid = self.ask("admin", *init_producer_id())
            if found.coordinators[0].error_code == 0 and fetched.groups[0].error_code == 0 and pid.error_code == 0:
                break
            time.sleep(0.5)
        else:
            raise AssertionError(f"{self.name}: the group and transaction coordinators did not become available")
        answer = self.ask("admin", K.CREATE_ACLS, 3, {"creations": [creation(*a) for a in ACL_SET]})
        assert [r.error_code for r in answer.results] == [0] * len(ACL_SET), answer
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = self.ask("admin", K.DESCRIBE_ACLS, 3, ANY_ACLS)
            visible = self.ask("alice", K.METADATA, 12, {"topics": [{"name": "orders", "topic_id": ZERO_UUID}],
                                                        "allow_auto_topic_creation": False,
                                                        "include_topic_authorized_operations": False})
            if sum(len(r.acls) for r in listed.resources) == len(ACL_SET) and visible.topics[0].error_code == 0:
                return
            time.sleep(0.2)
        raise AssertionError(f"{self.name}: the ACL set did not become visible")


@pytest.fixture(scope="module")
def sides():
    with acquired_or_skip(SHARED_ACL_BROKER) as kafka, \
            run_in_thread(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms=MECHANISM,
                          authorizer_class_name=STANDARD, super_users="User:admin",
                          group_initial_rebalance_delay_ms=0) as ours:
        for user, password in USERS.items():
            ours.credentials.set_password(user, ScramMechanism.by_name(MECHANISM), password, 4096)
        pair = (Side("kafka", kafka.sasl_bootstrap_servers), Side("groupcoord", ours.bootstrap_servers))
        try:
            for side in pair:
                side.set_up()
            yield pair
        finally:
            for side in pair:
                side.close()


# -- what is compared of each answer -------------------------------------------------------------------

def top(r) -> Any:
    return r if isinstance(r, str) else int(r.error_code)


def per_partition(topics="topics", partitions="partitions", name="name", index="partition_index"):
    def read(r):
        if isinstance(r, str):
            return r
        return sorted((getattr(t, name), int(getattr(p, index)), int(p.error_code))
                      for t in getattr(r, topics) for p in getattr(t, partitions))
    return read


def per_item(items: str, key: str, *fields: str):
    def read(r):
        if isinstance(r, str):
            return r
        return sorted((getattr(i, key), *(int(getattr(i, f)) for f in fields)) for i in getattr(r, items))
    return read


def metadata_topics(r):
    return r if isinstance(r, str) else sorted((t.name, int(t.error_code), t.topic_id in (None, ZERO_UUID))
                                               for t in r.topics)


def metadata_authorised(r):
    """Whether each topic was refused for authorisation (an auto-created topic's own state, whether it exists
    yet or answers LEADER_NOT_AVAILABLE, is timing and not compared here)."""
    return r if isinstance(r, str) else sorted((t.name, "denied" if t.error_code == 29 else "allowed") for t in r.topics)


def txn_authorised(r):
    """Refused or not (whether the transaction coordinator is up yet is Kafka's timing, not compared)."""
    return r if isinstance(r, str) else sorted((c.key, "denied" if c.error_code == 53 else "allowed") for c in r.coordinators)


def metadata_visible(r):
    return r if isinstance(r, str) else sorted(t.name for t in r.topics if not t.name.startswith("__"))


def listed_groups(r):
    return r if isinstance(r, str) else (int(r.error_code), sorted(g.group_id for g in r.groups))


def acl_listing(r):
    if isinstance(r, str):
        return r
    return (int(r.error_code), sorted((int(x.resource_type), x.resource_name, int(x.pattern_type), a.principal, a.host,
                                       int(a.operation), int(a.permission_type)) for x in r.resources for a in x.acls))


def create_results(r):
    return r if isinstance(r, str) else [int(x.error_code) for x in r.results]


def created_topics(r):
    return r if isinstance(r, str) else sorted((t.name, int(t.error_code), int(t.topic_config_error_code))
                                               for t in r.topics)


def delete_filter_results(r):
    return r if isinstance(r, str) else [(int(x.error_code), len(x.matching_acls)) for x in r.filter_results]


# -- the requests ---------------------------------------------------------------------------------------

def metadata(*names, auto=False, ops=False):
    return (K.METADATA, 12, {"topics": None if not names else [{"name": n, "topic_id": ZERO_UUID} for n in names],
                             "allow_auto_topic_creation": auto, "include_topic_authorized_operations": ops})


def produce(*topics, txn=None):
    batch = (encode_batch([(b"k", b"v", ())], producer_id=1000, producer_epoch=0, base_sequence=0, is_transactional=True)
             if txn else encode_batch([(b"k", b"v", ())]))
    return (K.PRODUCE, 9, {"transactional_id": txn, "acks": -1, "timeout": 10000, "topic_data": [
        {"name": t, "partition_data": [{"index": 0, "records": batch}]} for t in topics]})


def fetch(*topics):
    return (K.FETCH, 12, {"replica_id": -1, "max_wait": 0, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
                          "session_id": 0, "session_epoch": -1, "topics": [
                              {"topic": t, "partitions": [{"partition": 0, "fetch_offset": 0, "partition_max_bytes": 65536,
                                                           "current_leader_epoch": -1, "log_start_offset": -1}]}
                              for t in topics], "forgotten_topics_data": [], "rack_id": ""})


def list_offsets(*topics):
    return (K.LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]} for t in topics]})


def find_coordinator(*keys, key_type=0):
    return (K.FIND_COORDINATOR, 4, {"key_type": key_type, "coordinator_keys": list(keys)})


JOIN = {"session_timeout": 10000, "rebalance_timeout": 10000, "member_id": "", "group_instance_id": None,
        "protocol_type": "consumer", "protocols": [{"name": "range", "metadata": b"\x00\x01"}], "reason": None}


def offset_commit(group, *topics):
    return (K.OFFSET_COMMIT, 9, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                 "group_instance_id": None, "topics": [
                                     {"name": t, "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                 "committed_leader_epoch": -1, "committed_metadata": ""}]}
                                     for t in topics]})


def offset_fetch(group, *topics):
    wanted = None if not topics else [{"name": t, "partition_indexes": [0]} for t in topics]
    return (K.OFFSET_FETCH, 9, {"groups": [{"group_id": group, "member_id": None, "member_epoch": -1, "topics": wanted}],
                                "require_stable": False})


def offset_fetch_read(r):
    if isinstance(r, str):
        return r
    g = r.groups[0]
    return (int(g.error_code), sorted((t.name, p.partition_index, int(p.error_code)) for t in g.topics for p in t.partitions))


CG_MEMBER = "m" + uuid.uuid4().hex[:21]


def cg_heartbeat(group, *topics):
    return (K.CONSUMER_GROUP_HEARTBEAT, 1, {"group_id": group, "member_id": CG_MEMBER, "member_epoch": 0,
                                            "instance_id": None, "rack_id": None, "rebalance_timeout": 30000,
                                            "subscribed_topic_names": list(topics), "subscribed_topic_regex": None,
                                            "server_assignor": None, "topic_partitions": []})


def create_topics(*names):
    return (K.CREATE_TOPICS, 7, {"timeout": 30000, "validate_only": False, "topics": [
        {"name": n, "num_partitions": 1, "replication_factor": 1, "assignments": [], "configs": []} for n in names]})


def delete_topics(*names):
    return (K.DELETE_TOPICS, 6, {"timeout": 30000, "topics": [{"name": n, "topic_id": ZERO_UUID} for n in names]})


def create_partitions(topic, count):
    return (K.CREATE_PARTITIONS, 3, {"timeout": 30000, "validate_only": True,
                                     "topics": [{"name": topic, "count": count, "assignments": None}]})


def init_producer_id(txn=None):
    return (K.INIT_PRODUCER_ID, 5, {"transactional_id": txn, "transaction_timeout": 60000, "producer_id": -1,
                                    "producer_epoch": -1})


def describe_configs(rtype, name):
    return (K.DESCRIBE_CONFIGS, 4, {"include_synonyms": False, "include_documentation": False, "resources": [
        {"resource_type": rtype, "resource_name": name, "configuration_keys": ["cleanup.policy"]}]})


def add_partitions_v3(txn, *topics):
    return (K.ADD_PARTITIONS_TO_TXN, 3, {"v3_and_below_transactional_id": txn, "v3_and_below_producer_id": 4242,
                                         "v3_and_below_producer_epoch": 0, "v3_and_below_topics": [
                                             {"name": t, "partitions": [0]} for t in topics]})


def added_partitions(r):
    return r if isinstance(r, str) else sorted((t.name, p.partition_index, int(p.partition_error_code))
                                               for t in r.results_by_topic_v3_and_below for p in t.results_by_partition)


TXN_OFFSETS = {"producer_id": 4242, "producer_epoch": 0, "generation_id": -1, "member_id": "", "group_instance_id": None,
               "topics": [{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                              "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
MARKERS = (K.WRITE_TXN_MARKERS, 1, {"markers": [{"producer_id": 4242, "producer_epoch": 0, "transaction_result": False,
                                                 "coordinator_epoch": 0,
                                                 "topics": [{"name": "orders", "partition_indexes": [0]}]}]})


def marker_codes(r):
    return r if isinstance(r, str) else sorted((t.name, p.partition_index, int(p.error_code))
                                               for m in r.markers for t in m.topics for p in t.partitions)


CLUSTER_OPS = (K.DESCRIBE_CLUSTER, 1, {"include_cluster_authorized_operations": True, "endpoint_type": 1})

# (principal, what it asks, what of the answer is compared)
Case = tuple[str, tuple[int, int, dict], Callable[[Any], Any]]
CASES: list[tuple[str, str, str, Case]] = [
    # label, principal, resource, (request, reading)
    ("Metadata", "alice", "topic orders (READ implies DESCRIBE)", (metadata("orders"), metadata_topics)),
    ("Metadata", "alice", "topic secret (no ACL)", (metadata("secret"), metadata_topics)),
    ("Metadata", "alice", "topic nowhere (missing, no ACL)", (metadata("nowhere"), metadata_topics)),
    ("Metadata", "alice", "topic public (User:* DESCRIBE)", (metadata("public"), metadata_topics)),
    ("Metadata", "alice", "every topic (filtered)", (metadata(), metadata_visible)),
    ("Metadata", "bob", "every topic (ALL on *)", (metadata(), metadata_visible)),
    ("Metadata", "alice", "auto-create alice-auto (CREATE, no DESCRIBE)", (metadata("alice-auto", auto=True), metadata_topics)),
    ("Metadata", "bob", "auto-create bob-auto (ALL on *)", (metadata("bob-auto", auto=True), metadata_authorised)),
    ("Metadata", "alice", "topic operations of orders", (metadata("orders", ops=True), per_item("topics", "name", "topic_authorized_operations"))),
    ("Metadata", "bob", "operations of orders and of missing nowhere-b", (metadata("orders", "nowhere-b", ops=True),
                                                                         per_item("topics", "name", "error_code", "topic_authorized_operations"))),
    ("Produce", "alice", "topics orders, secret", (produce("orders", "secret"), per_partition("responses", "partition_responses", "name", "index"))),
    ("Produce", "bob", "topic orders (DENY READ only)", (produce("orders"), per_partition("responses", "partition_responses", "name", "index"))),
    ("Produce", "alice", "transactional batch, id alice-tx", (produce("orders", txn="alice-tx"), per_partition("responses", "partition_responses", "name", "index"))),
    ("Fetch", "alice", "topics orders, secret, nowhere", (fetch("orders", "secret", "nowhere"), per_partition("responses", "partitions", "topic", "partition_index"))),
    ("Fetch", "bob", "topic orders (DENY READ)", (fetch("orders"), per_partition("responses", "partitions", "topic", "partition_index"))),
    ("ListOffsets", "alice", "topics orders, secret", (list_offsets("orders", "secret"), per_partition())),
    ("ListOffsets", "bob", "topic orders (DENY READ keeps DESCRIBE)", (list_offsets("orders"), per_partition())),
    ("FindCoordinator", "alice", "groups app-1, other", (find_coordinator("app-1", "other"), per_item("coordinators", "key", "error_code"))),
    ("FindCoordinator", "bob", "groups app-1, app-ro", (find_coordinator("app-1", "app-ro"), per_item("coordinators", "key", "error_code"))),
    ("FindCoordinator", "dave", "transactional ids dave-tx, other-tx", (find_coordinator("dave-tx", "other-tx", key_type=1), txn_authorised)),
    ("FindCoordinator", "alice", "groups hosted (ACL for 10.9.9.9), local (127.0.0.1)", (find_coordinator("hosted", "local"), per_item("coordinators", "key", "error_code"))),
    ("JoinGroup", "alice", "group app-1 (prefix READ)", ((K.JOIN_GROUP, 9, {**JOIN, "group_id": "app-1"}), top)),
    ("JoinGroup", "bob", "group app-1", ((K.JOIN_GROUP, 9, {**JOIN, "group_id": "app-1"}), top)),
    ("JoinGroup", "dave", "group app-1 (DENY ALL beats READ on *)", ((K.JOIN_GROUP, 9, {**JOIN, "group_id": "app-1"}), top)),
    ("SyncGroup", "bob", "group app-1", ((K.SYNC_GROUP, 5, {"group_id": "app-1", "generation_id": 1, "member_id": "m",
                                                           "group_instance_id": None, "protocol_type": "consumer",
                                                           "protocol_name": "range", "assignments": []}), top)),
    ("Heartbeat", "bob", "group app-1", ((K.HEARTBEAT, 4, {"group_id": "app-1", "generation_id": 1, "member_id": "m",
                                                          "group_instance_id": None}), top)),
    ("Heartbeat", "alice", "group app-1, unknown member", ((K.HEARTBEAT, 4, {"group_id": "app-1", "generation_id": 1,
                                                                            "member_id": "m", "group_instance_id": None}), top)),
    ("LeaveGroup", "bob", "group app-1", ((K.LEAVE_GROUP, 5, {"group_id": "app-1", "members": [
        {"member_id": "m", "group_instance_id": None, "reason": None}]}), top)),
    ("OffsetCommit", "alice", "group app-1, topics orders, secret", (offset_commit("app-1", "orders", "secret"), per_partition())),
    ("OffsetCommit", "bob", "group app-1", (offset_commit("app-1", "orders"), per_partition())),
    ("OffsetCommit", "dave", "group app-2, topic orders (no READ on topic)", (offset_commit("app-2", "orders"), per_partition())),
    ("OffsetFetch", "alice", "group app-1, topics orders, secret", (offset_fetch("app-1", "orders", "secret"), offset_fetch_read)),
    ("OffsetFetch", "alice", "group app-1, all topics", (offset_fetch("app-1"), offset_fetch_read)),
    ("OffsetFetch", "bob", "group app-1", (offset_fetch("app-1"), offset_fetch_read)),
    ("OffsetFetch", "bob", "group app-ro (DESCRIBE), all topics", (offset_fetch("app-ro"), offset_fetch_read)),
    ("DescribeGroups", "alice", "groups app-1, other + operations", ((K.DESCRIBE_GROUPS, 5, {"groups": ["app-1", "other"], "include_authorized_operations": True}),
                                                                   per_item("groups", "group_id", "error_code", "authorized_operations"))),
    ("DescribeGroups", "bob", "group app-1", ((K.DESCRIBE_GROUPS, 5, {"groups": ["app-1"], "include_authorized_operations": False}),
                                             per_item("groups", "group_id", "error_code"))),
    ("ListGroups", "alice", "groups it may describe", ((K.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []}), listed_groups)),
    ("ListGroups", "bob", "groups it may describe (none existing)", ((K.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []}), listed_groups)),
    ("ListGroups", "carol", "every group (DESCRIBE on the cluster)", ((K.LIST_GROUPS, 5, {"states_filter": [], "types_filter": []}), listed_groups)),
    ("DeleteGroups", "alice", "group app-1 (READ only)", ((K.DELETE_GROUPS, 2, {"groups_names": ["app-1"]}), per_item("results", "group_id", "error_code"))),
    ("DeleteGroups", "carol", "groups app-del (missing), app-1", ((K.DELETE_GROUPS, 2, {"groups_names": ["app-del", "app-1"]}), per_item("results", "group_id", "error_code"))),
    ("OffsetDelete", "alice", "group app-1 (no DELETE)", ((K.OFFSET_DELETE, 0, {"group_id": "app-1", "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0}]}]}), top)),
    ("ConsumerGroupHeartbeat", "bob", "group app-cg", (cg_heartbeat("app-cg", "orders"), top)),
    ("ConsumerGroupHeartbeat", "alice", "group app-cg, topics orders, secret", (cg_heartbeat("app-cg", "orders", "secret"), top)),
    ("ConsumerGroupHeartbeat", "alice", "group app-cg, topic orders", (cg_heartbeat("app-cg", "orders"), top)),
    ("ConsumerGroupDescribe", "bob", "group app-cg", ((K.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["app-cg"], "include_authorized_operations": False}),
                                                     per_item("groups", "group_id", "error_code"))),
    ("ConsumerGroupDescribe", "alice", "group app-cg + operations", ((K.CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["app-cg"], "include_authorized_operations": True}),
                                                                    per_item("groups", "group_id", "error_code", "authorized_operations"))),
    ("CreateTopics", "alice", "alice-t1 (CREATE prefix), other-t", (create_topics("alice-t1", "other-t"), created_topics)),
    ("CreateTopics", "bob", "bob-t1 (ALL on *)", (create_topics("bob-t1"), created_topics)),
    ("DeleteTopics", "alice", "topic orders (no DELETE)", (delete_topics("orders"), per_item("responses", "name", "error_code"))),
    ("DeleteTopics", "alice", "topic nowhere (no DESCRIBE: existence hidden)", (delete_topics("nowhere"), per_item("responses", "name", "error_code"))),
    ("DeleteTopics", "bob", "topic nowhere (may DESCRIBE)", (delete_topics("nowhere"), per_item("responses", "name", "error_code"))),
    ("CreatePartitions", "alice", "topic orders (no ALTER)", (create_partitions("orders", 4), per_item("results", "name", "error_code"))),
    ("CreatePartitions", "bob", "topic orders (ALL)", (create_partitions("orders", 4), per_item("results", "name", "error_code"))),
    ("InitProducerId", "alice", "idempotent (WRITE on a topic)", (init_producer_id(), top)),
    ("InitProducerId", "carol", "idempotent (nothing)", (init_producer_id(), top)),
    ("InitProducerId", "dave", "idempotent (IDEMPOTENT_WRITE)", (init_producer_id(), top)),
    ("InitProducerId", "alice", "transactional id alice-tx", (init_producer_id("alice-tx"), top)),
    ("AddPartitionsToTxn", "bob", "v3, id bob-tx (no ACL)", (add_partitions_v3("bob-tx", "orders"), added_partitions)),
    ("AddPartitionsToTxn", "alice", "v3, id alice-ok-tx, topics orders, secret", (add_partitions_v3("alice-ok-tx", "orders", "secret"), added_partitions)),
    ("AddPartitionsToTxn", "alice", "v4 (brokers only: CLUSTER_ACTION)", ((K.ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "alice-ok-tx", "producer_id": 4242, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "orders", "partitions": [0]}]}]}), top)),
    ("AddOffsetsToTxn", "bob", "id bob-tx", ((K.ADD_OFFSETS_TO_TXN, 3, {"transactional_id": "bob-tx", "producer_id": 4242,
                                                                       "producer_epoch": 0, "group_id": "app-1"}), top)),
    ("AddOffsetsToTxn", "alice", "id alice-ok-tx, group other (no READ)", ((K.ADD_OFFSETS_TO_TXN, 3, {
        "transactional_id": "alice-ok-tx", "producer_id": 4242, "producer_epoch": 0, "group_id": "other"}), top)),
    ("EndTxn", "bob", "id bob-tx", ((K.END_TXN, 4, {"transactional_id": "bob-tx", "producer_id": 4242, "producer_epoch": 0,
                                                    "committed": False}), top)),
    ("TxnOffsetCommit", "bob", "id bob-tx", ((K.TXN_OFFSET_COMMIT, 3, {**TXN_OFFSETS, "transactional_id": "bob-tx",
                                                                       "group_id": "app-1"}), per_partition())),
    ("TxnOffsetCommit", "alice", "id alice-ok-tx, group other (no READ)", ((K.TXN_OFFSET_COMMIT, 3, {
        **TXN_OFFSETS, "transactional_id": "alice-ok-tx", "group_id": "other"}), per_partition())),
    ("WriteTxnMarkers", "alice", "cluster (no ALTER, no CLUSTER_ACTION)", (MARKERS, marker_codes)),
    ("DescribeTransactions", "alice", "ids bob-tx, other-tx (no DESCRIBE)", ((K.DESCRIBE_TRANSACTIONS, 0, {"transactional_ids": ["bob-tx", "other-tx"]}),
                                                                 per_item("transaction_states", "transactional_id", "error_code"))),
    ("DescribeProducers", "alice", "topics orders, secret", ((K.DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": n, "partition_indexes": [0]} for n in ("orders", "secret")]}), per_partition())),
    ("DeleteRecords", "alice", "topic orders (no DELETE)", ((K.DELETE_RECORDS, 2, {"timeout": 5000, "topics": [
        {"name": "orders", "partitions": [{"partition_index": 0, "offset": 0}]}]}), per_partition())),
    ("DescribeLogDirs", "alice", "cluster (no DESCRIBE)", ((K.DESCRIBE_LOG_DIRS, 4, {"topics": None}), top)),
    ("DescribeLogDirs", "carol", "cluster (DESCRIBE)", ((K.DESCRIBE_LOG_DIRS, 4, {"topics": None}), top)),
    *[(api, user, f"topic orders ({why})", ((key, version, {"validate_only": True, "resources": [
        {"resource_type": 2, "resource_name": "orders", "configs": [config]}]}), per_item("responses", "resource_name", "error_code")))
      for api, key, version, config in (
          ("IncrementalAlterConfigs", K.INCREMENTAL_ALTER_CONFIGS, 1, {"name": "retention.ms", "config_operation": 0, "value": "1000"}),
          ("AlterConfigs", K.ALTER_CONFIGS, 2, {"name": "retention.ms", "value": "1000"}))
      for user, why in (("alice", "no ALTER_CONFIGS"), ("dave", "ALTER_CONFIGS"))],
    ("DescribeTopicPartitions", "alice", "topics orders, secret, nowhere", ((K.DESCRIBE_TOPIC_PARTITIONS, 0, {
        "topics": [{"name": n} for n in ("orders", "secret", "nowhere")], "response_partition_limit": 2000, "cursor": None}),
        lambda r: r if isinstance(r, str) else sorted((t.name, int(t.error_code)) for t in r.topics))),
    ("ListTransactions", "bob", "no transactional id it may describe", ((K.LIST_TRANSACTIONS, 1, {"state_filters": [], "producer_id_filters": [],
                                                                                                 "duration_filter": -1}),
                                                                       per_item("transaction_states", "transactional_id"))),
    ("DescribeConfigs", "alice", "topic orders (READ is not DESCRIBE_CONFIGS)", (describe_configs(2, "orders"), per_item("results", "resource_name", "error_code"))),
    ("DescribeConfigs", "dave", "topic orders (ALTER_CONFIGS implies it)", (describe_configs(2, "orders"), per_item("results", "resource_name", "error_code"))),
    ("DescribeConfigs", "carol", "broker 1 (DESCRIBE is not DESCRIBE_CONFIGS)", (describe_configs(4, "1"), per_item("results", "resource_name", "error_code"))),
    ("DescribeCluster", "alice", "cluster operations", (CLUSTER_OPS, lambda r: (int(r.error_code), int(r.cluster_authorized_operations)))),
    ("DescribeCluster", "carol", "cluster operations (DESCRIBE)", (CLUSTER_OPS, lambda r: (int(r.error_code), int(r.cluster_authorized_operations)))),
    ("DescribeCluster", "admin", "cluster operations (super user)", (CLUSTER_OPS, lambda r: (int(r.error_code), int(r.cluster_authorized_operations)))),
    ("CreateAcls", "alice", "cluster (no ALTER)", ((K.CREATE_ACLS, 3, {"creations": [creation("User:x", GROUP, "g", LITERAL, READ, ALLOW)]}), create_results)),
    ("DescribeAcls", "alice", "cluster (no DESCRIBE)", ((K.DESCRIBE_ACLS, 3, ANY_ACLS), top)),
    ("DescribeAcls", "carol", "every ACL (DESCRIBE on the cluster)", ((K.DESCRIBE_ACLS, 3, ANY_ACLS), acl_listing)),
    ("DescribeAcls", "admin", "MATCH topic orders", ((K.DESCRIBE_ACLS, 3, {**ANY_ACLS, "resource_type_filter": TOPIC, "resource_name_filter": "orders",
                                                                         "pattern_type_filter": 2}), acl_listing)),
    ("DescribeAcls", "admin", "PREFIXED filter, principal User:alice", ((K.DESCRIBE_ACLS, 3, {**ANY_ACLS, "pattern_type_filter": PREFIXED,
                                                                                              "principal_filter": "User:alice"}), acl_listing)),
    ("DeleteAcls", "alice", "cluster (no ALTER)", ((K.DELETE_ACLS, 3, {"filters": [ANY_ACLS]}), delete_filter_results)),
    *[("CreateAcls", "admin", what, ((K.CREATE_ACLS, 3, {"creations": [binding]}), create_results)) for what, binding in [
        ("CLUSTER named other than kafka-cluster", creation("User:x", CLUSTER, "not-kafka-cluster", LITERAL, ALTER, ALLOW)),
        ("empty resource name", creation("User:x", GROUP, "", LITERAL, READ, ALLOW)),
        ("MATCH pattern type", creation("User:x", GROUP, "g", 2, READ, ALLOW)),
        ("ANY operation", creation("User:x", GROUP, "g", LITERAL, 1, ALLOW)),
        ("ANY permission", creation("User:x", GROUP, "g", LITERAL, READ, 1)),
        ("ANY resource type", creation("User:x", 1, "g", LITERAL, READ, ALLOW)),
        ("resource type 99 (unknown to Kafka)", creation("User:x", 99, "g", LITERAL, READ, ALLOW)),
        ("operation 99 (unknown to Kafka)", creation("User:x", GROUP, "g", LITERAL, 99, ALLOW)),
        ("a DelegationToken resource", creation("User:x", 6, "token", LITERAL, DESCRIBE, ALLOW)),
        ("a principal without its type", creation("alice", GROUP, "g", LITERAL, READ, ALLOW)),
        ("a valid group binding, tmp-g", creation("User:x", GROUP, "tmp-g", LITERAL, READ, ALLOW)),
    ]],
    ("CreateAcls", "admin", "a valid one beside an ANY operation", ((K.CREATE_ACLS, 3, {"creations": [
        creation("User:x", GROUP, "tmp-h", LITERAL, READ, ALLOW), creation("User:x", GROUP, "g", LITERAL, 1, ALLOW)]}),
        create_results)),
    ("DeleteAcls", "admin", "the binding just made; an unknown type", ((K.DELETE_ACLS, 3, {"filters": [
        {**ANY_ACLS, "resource_type_filter": GROUP, "resource_name_filter": "tmp-g", "pattern_type_filter": LITERAL},
        {**ANY_ACLS, "resource_type_filter": 99},
        {**ANY_ACLS, "resource_type_filter": 6}]}), delete_filter_results)),
    ("DescribeAcls", "admin", "every ACL (the fixed set again)", ((K.DESCRIBE_ACLS, 3, ANY_ACLS), acl_listing)),
]


CELL = 64


def _cell(value: Any) -> str:
    text = str(value)
    return text if len(text) <= CELL else text[:CELL - 3] + "..."


def _table(rows: list[tuple]) -> str:
    cells = [[_cell(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells)


def test_authorisation_matches_kafka_case_by_case(sides):
    kafka, ours = sides
    rows = [("#", "principal", "API", "resource", "Kafka 4.3.1", "groupcoord", "")]
    mismatches = []
    for n, (api, user, resource, ((key, version, body), read)) in enumerate(CASES, 1):
        got_kafka = read(kafka.ask(user, key, version, body))
        got_ours = read(ours.ask(user, key, version, body))
        same = got_kafka == got_ours
        rows.append((n, f"User:{user}", api, resource, got_kafka, got_ours, "ok" if same else "DIFFERENT"))
        if not same:
            mismatches.append(n)
    table = _table(rows)
    print(f"\nAuthorisation, Kafka 4.3.1 vs groupcoord (SASL_PLAINTEXT, SCRAM-SHA-512, StandardAuthorizer):\n{table}")
    assert len(CASES) >= 30
    details = "\n".join(f"#{n} {CASES[n - 1][:3]}:\n  Kafka:      {rows[n][4]}\n  groupcoord: {rows[n][5]}"
                        for n in mismatches)
    assert not mismatches, f"cases {mismatches} differ:\n{details}"


def _regex_assignment(side: Side, user: str, group: str) -> list[str]:
    """The topics a regex member ends up assigned (Kafka resolves the regex in the background: heartbeat
    until an assignment arrives, at most 20 s), by name."""
    member = "x" + uuid.uuid4().hex[:21]
    epoch = 0
    ids: set = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        r = side.ask(user, K.CONSUMER_GROUP_HEARTBEAT, 1, {
            "group_id": group, "member_id": member, "member_epoch": epoch, "instance_id": None, "rack_id": None,
            "rebalance_timeout": 30000, "subscribed_topic_names": None if epoch else [],
            "subscribed_topic_regex": None if epoch else "orders|secret|pub.*", "server_assignor": None,
            "topic_partitions": None if epoch else []})
        assert r.error_code == 0, r
        epoch = r.member_epoch
        if r.assignment is not None and r.assignment.topic_partitions:
            ids = {t.topic_id for t in r.assignment.topic_partitions}
            break
        time.sleep(0.3)
    names = side.ask("admin", *metadata())
    return sorted(t.name for t in names.topics if t.topic_id in ids)


def test_a_regex_subscription_is_resolved_to_the_topics_the_member_may_describe_as_kafka_does(sides):
    kafka, ours = sides
    got = {side.name: _regex_assignment(side, "alice", "app-rx") for side in sides}
    print(f"\nregex orders|secret|pub.* for User:alice: {got}")
    assert got["kafka"] == got["groupcoord"] == ["orders", "public"]
