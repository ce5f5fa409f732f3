"""Fire-and-forget producers (acks=0) over a real socket: no answer when the append succeeds, and the
connection closed when any partition fails, as Kafka does so that the producer notices, refreshes its
metadata and reconnects."""
import socket

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.record_batch import encode_batch

from tests.support.waiting import wait_for
from tests.support.wire import WireClient

PRODUCE, LIST_OFFSETS, API_VERSIONS = 0, 2, 18


def produce_request(topic, partition, acks, n=3):
    records = encode_batch([(b"k", b"v", ())] * n)
    return {"transactional_id": None, "acks": acks, "timeout": 1000,
            "topic_data": [{"name": topic, "partition_data": [{"index": partition, "records": records}]}]}


def latest_offset(client, topic):
    answer = client.request(LIST_OFFSETS, 7, {
        "replica_id": -1, "isolation_level": 0,
        "topics": [{"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                   "timestamp": -1}]}]})
    part = answer.topics[0].partitions[0]
    assert part.error_code == ErrorCode.none
    return part.offset


def closed_by_server(client):
    """True when the server has closed the connection: the next read sees EOF (or a reset)."""
    client.sock.settimeout(5)
    try:
        return client.sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_a_failed_fire_and_forget_produce_closes_the_connection(groupcoord_broker_factory):
    broker = groupcoord_broker_factory(auto_create_topics_enable=False)
    with WireClient(broker.bootstrap_servers) as client:
        _, data = client.encode(PRODUCE, 9, produce_request("nowhere", 0, acks=0))
        client.send_raw(data)
        assert closed_by_server(client)


def test_a_request_sent_before_the_failed_one_is_still_answered_before_the_close(groupcoord_broker_factory):
    broker = groupcoord_broker_factory(auto_create_topics_enable=False)
    with WireClient(broker.bootstrap_servers) as client:
        asked, versions = client.encode(API_VERSIONS, 0, {})
        _, produce = client.encode(PRODUCE, 9, produce_request("nowhere", 0, acks=0))
        _, behind = client.encode(API_VERSIONS, 0, {})
        client.send_raw(versions + produce + behind)
        correlation, answer = client.decode(API_VERSIONS, 0, client.read_frame())
        assert (correlation, answer.error_code) == (asked, ErrorCode.none)
        assert closed_by_server(client)            # the request behind the failed produce gets no answer


def test_a_fire_and_forget_produce_to_a_missing_partition_closes_the_connection(groupcoord_broker):
    with WireClient(groupcoord_broker.bootstrap_servers) as client:
        created = client.request(PRODUCE, 9, produce_request("orders", 0, acks=1))
        assert created.responses[0].partition_responses[0].error_code == ErrorCode.none
        _, data = client.encode(PRODUCE, 9, produce_request("orders", 5, acks=0))
        client.send_raw(data)
        assert closed_by_server(client)
    with WireClient(groupcoord_broker.bootstrap_servers) as reconnected:
        assert latest_offset(reconnected, "orders") == 3  # the producer reconnects to a healthy broker


def test_a_successful_fire_and_forget_produce_keeps_the_connection_and_the_records(groupcoord_broker):
    with WireClient(groupcoord_broker.bootstrap_servers) as client:
        created = client.request(PRODUCE, 9, produce_request("orders", 0, acks=1))
        assert created.responses[0].partition_responses[0].error_code == ErrorCode.none
        for _ in range(2):
            _, data = client.encode(PRODUCE, 9, produce_request("orders", 0, acks=0))
            client.send_raw(data)
        # Answered on the same connection; requests pipelined behind an append may run before it is done.
        assert wait_for(lambda: latest_offset(client, "orders") == 9, seconds=10)


def test_a_fire_and_forget_produce_that_fails_in_the_broker_closes_the_connection(groupcoord_broker):
    async def broken(**_request):
        raise RuntimeError("disk on fire")

    groupcoord_broker.dataplane.produce.produce = broken
    with WireClient(groupcoord_broker.bootstrap_servers) as client:
        _, data = client.encode(PRODUCE, 9, produce_request("orders", 0, acks=0))
        client.send_raw(data)
        assert closed_by_server(client)            # Kafka has no error response for acks=0
