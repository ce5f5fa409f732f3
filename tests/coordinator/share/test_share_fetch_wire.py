"""ShareFetch and ShareAcknowledge over the wire against a running broker, through the raw protocol client:
share sessions and their epochs, acquisition by two members, ACCEPT/RELEASE/REJECT, piggy-backed
acknowledgements, lock expiry, and the state surviving a restart (read back with ReadShareGroupState)."""

from __future__ import annotations

import time
import uuid

import pytest
from kafka import KafkaProducer

from groupcoord.coordinator.broker import run_in_thread
from groupcoord.protocol.api_keys import ApiKey
from groupcoord.protocol.errors import ErrorCode

from tests.support.wire import WireClient

ACCEPT, RELEASE, REJECT = 1, 2, 3
GROUP = "queue"


def produce(bootstrap: str, topic: str, n: int) -> None:
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    for i in range(n):
        producer.send(topic, f"m{i}".encode())
        producer.flush()  # a batch per record: max_records is applied at batch boundaries
    producer.close()


def topic_id(broker, name: str) -> uuid.UUID:
    return broker.dataplane.topics.get(name).topic_id


def initialize(client: WireClient, tid: uuid.UUID, partitions=(0,), start_offset: int = -1, epoch: int = 0) -> None:
    """What the group coordinator does when it first assigns the partitions (InitializeShareGroupState)."""
    r = client.request(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, {"group_id": GROUP, "topics": [
        {"topic_id": tid, "partitions": [{"partition": p, "state_epoch": epoch, "start_offset": start_offset}
                                         for p in partitions]}]})
    assert [p.error_code for t in r.results for p in t.partitions] == [ErrorCode.none] * len(partitions)


def share_fetch(client: WireClient, member: str, epoch: int, tid: uuid.UUID, *, acks=(), max_records=100,
                max_wait_ms=0, forget=False):
    partitions = [{"partition_index": 0, "acknowledgement_batches": [
        {"first_offset": f, "last_offset": l, "acknowledge_types": list(t)} for f, l, t in acks]}]
    return client.request(ApiKey.SHARE_FETCH, 1, {
        "group_id": GROUP, "member_id": member, "share_session_epoch": epoch, "max_wait": max_wait_ms,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": max_records, "batch_size": max_records,
        "topics": [{"topic_id": tid, "partitions": partitions}], "forgotten_topics_data": []})


def share_ack(client: WireClient, member: str, epoch: int, tid: uuid.UUID, acks):
    return client.request(ApiKey.SHARE_ACKNOWLEDGE, 1, {
        "group_id": GROUP, "member_id": member, "share_session_epoch": epoch,
        "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": l, "acknowledge_types": list(t)} for f, l, t in acks]}]}]})


def acquired(response) -> list[tuple[int, int, int]]:
    assert response.error_code == ErrorCode.none, response
    return [(a.first_offset, a.last_offset, a.delivery_count)
            for t in response.responses for p in t.partitions for a in p.acquired_records]


def ack_codes(response) -> list[int]:
    return [p.acknowledge_error_code if hasattr(p, "acknowledge_error_code") else p.error_code
            for t in response.responses for p in t.partitions]


def read_state(client: WireClient, tid: uuid.UUID):
    r = client.request(ApiKey.READ_SHARE_GROUP_STATE, 0, {"group_id": GROUP, "topics": [
        {"topic_id": tid, "partitions": [{"partition": 0, "leader_epoch": 0}]}]})
    p = r.results[0].partitions[0]
    return p.error_code, p.start_offset, [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                                          for b in p.state_batches]


def test_two_members_share_a_partition_and_acknowledge(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    with WireClient(bootstrap) as a, WireClient(bootstrap) as b:
        # A topic with nothing yet: the share partition starts at the latest offset (the default reset).
        produce(bootstrap, "q", 1)  # creates the topic; offset 0 is before the group's start
        tid = topic_id(groupcoord_broker, "q")
        initialize(a, tid)
        assert acquired(share_fetch(a, "A", 0, tid)) == []
        produce(bootstrap, "q", 10)  # offsets 1..10
        assert acquired(share_fetch(a, "A", 1, tid, max_records=4, max_wait_ms=2000)) == [(1, 4, 1)]
        assert acquired(share_fetch(b, "B", 0, tid, max_records=100, max_wait_ms=2000)) == [(5, 10, 1)]
        # Nobody gets a record someone else holds.
        assert acquired(share_fetch(b, "B", 1, tid, max_wait_ms=0)) == []
        r = share_ack(a, "A", 2, tid, [(1, 2, (ACCEPT,)), (3, 3, (RELEASE,)), (4, 4, (REJECT,))])
        assert r.error_code == ErrorCode.none and ack_codes(r) == [ErrorCode.none]
        # B acknowledges its records on its next fetch and gets the released one, delivered a second time.
        r = share_fetch(b, "B", 2, tid, acks=[(5, 10, (ACCEPT,))], max_wait_ms=2000)
        assert acquired(r) == [(3, 3, 2)]
        assert [p.acknowledge_error_code for t in r.responses for p in t.partitions] == [ErrorCode.none]
        # A's acknowledgement of a record it no longer holds is refused.
        r = share_ack(a, "A", 3, tid, [(3, 3, (ACCEPT,))])
        assert ack_codes(r) == [ErrorCode.invalid_record_state]
        r = share_ack(b, "B", 3, tid, [(3, 3, (ACCEPT,))])
        assert ack_codes(r) == [ErrorCode.none]
        # Written as Kafka writes it: each write carries the start offset from before its acknowledgements.
        assert read_state(a, tid) == (ErrorCode.none, 3, [(3, 3, 2, 2), (4, 4, 4, 1), (5, 10, 2, 1)])


def test_a_share_partition_never_initialised_cannot_be_fetched(groupcoord_broker):
    """As Kafka 4.3: the share coordinator refuses to read state the group coordinator never initialised."""
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "u", 1)
    tid = topic_id(groupcoord_broker, "u")
    with WireClient(bootstrap) as c:
        assert read_state(c, tid)[0] == ErrorCode.invalid_request
        r = share_fetch(c, "M", 0, tid)
        assert [p.error_code for t in r.responses for p in t.partitions] == [ErrorCode.unknown_server_error]


def test_session_epochs_are_checked(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "s", 1)
    tid = topic_id(groupcoord_broker, "s")
    with WireClient(bootstrap) as c:
        initialize(c, tid)
        assert share_fetch(c, "M", 0, tid).error_code == ErrorCode.none
        assert share_fetch(c, "M", 5, tid).error_code == ErrorCode.invalid_share_session_epoch
        assert share_fetch(c, "nobody", 3, tid).error_code == ErrorCode.share_session_not_found
        assert share_fetch(c, "M", 0, tid, acks=[(0, 0, (ACCEPT,))]).error_code == ErrorCode.invalid_request
        assert share_ack(c, "M", 0, tid, [(0, 0, (ACCEPT,))]).error_code == ErrorCode.invalid_share_session_epoch
        assert share_fetch(c, "M", 1, tid).error_code == ErrorCode.none
        assert share_fetch(c, "M", -1, tid).error_code == ErrorCode.none  # closes the session
        assert share_fetch(c, "M", 2, tid).error_code == ErrorCode.share_session_not_found


@pytest.mark.groupcoord(group_share_record_lock_duration_ms=300, group_share_delivery_count_limit=2)
def test_an_expired_lock_redelivers_and_the_delivery_limit_archives(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "t", 1)
    tid = topic_id(groupcoord_broker, "t")
    with WireClient(bootstrap) as a, WireClient(bootstrap) as b:
        initialize(a, tid)
        assert acquired(share_fetch(a, "A", 0, tid)) == []
        produce(bootstrap, "t", 1)  # offset 1
        r = share_fetch(a, "A", 1, tid, max_wait_ms=2000)
        assert r.acquisition_lock_timeout.total_seconds() == 0.3
        assert acquired(r) == [(1, 1, 1)]
        assert acquired(share_fetch(b, "B", 0, tid, max_wait_ms=2000)) == [(1, 1, 2)]  # after A's lock expired
        assert ack_codes(share_ack(a, "A", 2, tid, [(1, 1, (ACCEPT,))])) == [ErrorCode.invalid_record_state]
        time.sleep(0.5)  # B's lock expires too: the second delivery was the last one
        assert acquired(share_fetch(a, "A", 3, tid, max_wait_ms=200)) == []
        assert read_state(a, tid) == (ErrorCode.none, 1, [(1, 1, 4, 2)])  # archived after its second delivery


def test_state_survives_a_restart(tmp_path):
    settings = {"data_dir": str(tmp_path / "data"), "fsync": "never", "metrics_port": 0, "listen": "127.0.0.1:0"}
    with run_in_thread(**settings) as broker:
        bootstrap = broker.bootstrap_servers
        produce(bootstrap, "r", 1)
        tid = topic_id(broker, "r")
        with WireClient(bootstrap) as a:
            initialize(a, tid)
            share_fetch(a, "A", 0, tid)
            produce(bootstrap, "r", 6)  # offsets 1..6
            assert acquired(share_fetch(a, "A", 1, tid, max_wait_ms=2000)) == [(1, 6, 1)]
            r = share_ack(a, "A", 2, tid, [(1, 2, (ACCEPT,)), (3, 3, (RELEASE,)), (4, 4, (REJECT,))])
            assert ack_codes(r) == [ErrorCode.none]
            assert read_state(a, tid) == (ErrorCode.none, 1, [(1, 2, 2, 1), (3, 3, 0, 1), (4, 4, 4, 1)])
        # A's connection closed: 5 and 6, which it still held, are released (and written) at once.
        with WireClient(bootstrap) as c:
            deadline = time.monotonic() + 5
            while (before := read_state(c, tid)) != (ErrorCode.none, 3, [(3, 3, 0, 1), (4, 4, 4, 1), (5, 6, 0, 1)]):
                assert time.monotonic() < deadline, before
                time.sleep(0.05)
    with run_in_thread(**settings) as broker:
        with WireClient(broker.bootstrap_servers) as b:
            assert read_state(b, tid) == before
            # 3 was released once, 5 and 6 when A's connection closed: each is delivered a second time.
            assert acquired(share_fetch(b, "B", 0, tid, max_wait_ms=2000)) == [(3, 3, 2), (5, 6, 2)]


def describe_offsets(client: WireClient, topic: str, partitions=(0,)):
    r = client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 1, {"groups": [
        {"group_id": GROUP, "topics": [{"topic_name": topic, "partitions": list(partitions)}]}]})
    return [(t.topic_name, p.partition_index, p.start_offset, p.lag, p.error_code)
            for g in r.groups for t in g.topics for p in t.partitions]


def test_share_group_offsets_are_described_and_altered(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "o", 1)
    tid = topic_id(groupcoord_broker, "o")
    with WireClient(bootstrap) as c:
        assert describe_offsets(c, "o") == [("o", 0, -1, -1, ErrorCode.none)]      # never initialised
        assert describe_offsets(c, "missing") == [("missing", 0, -1, -1, ErrorCode.none)]
        initialize(c, tid)
        share_fetch(c, "A", 0, tid)
        produce(bootstrap, "o", 5)  # offsets 1..5
        assert acquired(share_fetch(c, "A", 1, tid, max_wait_ms=2000)) == [(1, 5, 1)]
        share_ack(c, "A", 2, tid, [(1, 1, (ACCEPT,)), (3, 3, (ACCEPT,))])
        # start 1 as written with these acknowledgements, 1 and 3 done past it: lag = 6 - 1 - 2
        assert describe_offsets(c, "o") == [("o", 0, 1, 3, ErrorCode.none)]
        r = c.request(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, {"group_id": GROUP, "topics": [
            {"topic_name": "o", "partitions": [{"partition_index": 0, "start_offset": 4},
                                               {"partition_index": 9, "start_offset": 0}]},
            {"topic_name": "nope", "partitions": [{"partition_index": 0, "start_offset": 0}]}]})
        assert r.error_code == ErrorCode.none
        assert [(t.topic_name, p.partition_index, p.error_code) for t in r.responses for p in t.partitions] == [
            ("o", 0, ErrorCode.none), ("o", 9, ErrorCode.unknown_topic_or_partition),
            ("nope", 0, ErrorCode.unknown_topic_or_partition)]
        assert describe_offsets(c, "o")[0][2] == 4
        # The share partition is reloaded from the altered state: offsets 4 and 5 are delivered afresh.
        assert acquired(share_fetch(c, "B", 0, tid, max_wait_ms=2000)) == [(4, 5, 1)]


def test_closing_the_connection_releases_what_its_session_held(groupcoord_broker):
    """As Kafka 4.1+: a share session is tied to its connection; when it closes, the records go to others."""
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "c", 1)
    tid = topic_id(groupcoord_broker, "c")
    with WireClient(bootstrap) as b:
        initialize(b, tid)
        with WireClient(bootstrap) as a:
            share_fetch(a, "A", 0, tid)
            produce(bootstrap, "c", 2)  # offsets 1, 2
            assert acquired(share_fetch(a, "A", 1, tid, max_wait_ms=2000)) == [(1, 2, 1)]
        # A's connection is gone: B gets the records at once, not after the 30 s lock.
        assert acquired(share_fetch(b, "B", 0, tid, max_wait_ms=2000)) == [(1, 2, 2)]


@pytest.mark.groupcoord(group_share_record_lock_duration_ms=200, group_share_delivery_count_limit=2)
def test_share_metrics_count_what_happens(groupcoord_broker):
    """In-flight records by state, sessions, lock expiries, redeliveries and records archived at the delivery
    limit (2 here): one record, whose lock expires twice."""
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "m", 1)
    tid = topic_id(groupcoord_broker, "m")
    with WireClient(bootstrap) as a:
        initialize(a, tid)
        share_fetch(a, "A", 0, tid)
        produce(bootstrap, "m", 1)
        assert acquired(share_fetch(a, "A", 1, tid, max_wait_ms=2000)) == [(1, 1, 1)]
        text = groupcoord_broker.metrics.exposition().decode()
        assert 'groupcoord_share_records_in_flight{state="acquired"} 1.0' in text
        assert "groupcoord_share_sessions 1.0" in text
        time.sleep(0.4)
        assert acquired(share_fetch(a, "A", 2, tid, max_wait_ms=2000)) == [(1, 1, 2)]
        text = groupcoord_broker.metrics.exposition().decode()
        assert "groupcoord_share_lock_expiries_total 1.0" in text
        assert "groupcoord_share_redeliveries_total 1.0" in text
        assert "groupcoord_share_archived_at_delivery_limit_total 0.0" in text
        time.sleep(0.4)  # the second delivery's lock expires: it was the last one
        assert acquired(share_fetch(a, "A", 3, tid, max_wait_ms=200)) == []
        text = groupcoord_broker.metrics.exposition().decode()
        assert "groupcoord_share_lock_expiries_total 2.0" in text
        assert "groupcoord_share_archived_at_delivery_limit_total 1.0" in text
        assert 'groupcoord_share_records_in_flight{state="acquired"} 0.0' in text


def test_deleting_the_share_group_deletes_its_share_partitions(groupcoord_broker):
    """A member joins (the group side initialises the state through the persister), acquires and accepts,
    leaves; DeleteGroups then deletes the state, and the broker forgets the cached share partition."""
    bootstrap = groupcoord_broker.bootstrap_servers
    produce(bootstrap, "d", 1)
    tid = topic_id(groupcoord_broker, "d")
    member = str(uuid.uuid4())
    with WireClient(bootstrap) as c:
        deadline = time.monotonic() + 10
        epoch, assigned = 0, []
        while not assigned:
            r = c.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": GROUP, "member_id": member,
                                                             "member_epoch": epoch, "rack_id": None,
                                                             "subscribed_topic_names": ["d"] if epoch == 0 else None})
            assert r.error_code == ErrorCode.none, r
            epoch = r.member_epoch
            assigned = [] if r.assignment is None else [p for t in r.assignment.topic_partitions for p in t.partitions]
            assert time.monotonic() < deadline, "never assigned"
            time.sleep(0.05)
        assert read_state(c, tid)[0] == ErrorCode.none  # initialised by the group side
        share_fetch(c, member, 0, tid)
        produce(bootstrap, "d", 1)
        assert acquired(share_fetch(c, member, 1, tid, max_wait_ms=2000)) == [(1, 1, 1)]
        assert ack_codes(share_ack(c, member, 2, tid, [(1, 1, (ACCEPT,))])) == [ErrorCode.none]
        r = c.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {"group_id": GROUP, "member_id": member, "member_epoch": -1,
                                                         "rack_id": None, "subscribed_topic_names": None})
        assert r.error_code == ErrorCode.none
        r = c.request(ApiKey.DELETE_GROUPS, 2, {"groups_names": [GROUP]})
        assert [g.error_code for g in r.results] == [ErrorCode.none]
        assert read_state(c, tid)[0] == ErrorCode.invalid_request  # the state is gone
        assert not [k for k in groupcoord_broker.share_partitions.partitions if k[0] == GROUP]
