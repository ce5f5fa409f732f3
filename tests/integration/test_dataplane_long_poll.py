"""An idle consumer's Fetch is parked for max_wait_ms and costs no CPU while it waits; an append
answers it at once."""
import socket
import struct
import threading
import time
import uuid

from kafka import KafkaProducer

from groupcoord.protocol.build import build
from groupcoord.protocol.registry import encode_entity, request_class

FETCH_VERSION = 11            # non-flexible: request header v1, response header v0


def fetch_frame(topic, offset, max_wait_ms, correlation_id=1):
    body = build(request_class(1, FETCH_VERSION), {
        "replica_id": -1, "max_wait": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": 0, "session_epoch": -1, "rack_id": "", "forgotten_topics_data": [],
        "topics": [{"topic": topic, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                                     "fetch_offset": offset, "log_start_offset": -1,
                                                     "partition_max_bytes": 1 << 20}]}]})
    client_id = b"long-poll-test"
    header = struct.pack(">hhih", 1, FETCH_VERSION, correlation_id, len(client_id)) + client_id
    payload = header + encode_entity(body)
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            assert chunk, "connection closed"
            data += chunk
        return data
    (size,) = struct.unpack(">i", exactly(4))
    return exactly(size)


def make_topic(bootstrap):
    topic = f"idle-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send(topic, b"first").get(timeout=30)
    producer.close()
    return topic


def connect(bootstrap):
    host, port = bootstrap.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout=30)


def test_an_idle_fetch_waits_max_wait_ms_without_spinning(groupcoord_broker):
    topic = make_topic(groupcoord_broker.bootstrap_servers)
    with connect(groupcoord_broker.bootstrap_servers) as sock:
        wall0, cpu0 = time.monotonic(), time.process_time()
        sock.sendall(fetch_frame(topic, 1, max_wait_ms=1500))
        read_frame(sock)
        waited, cpu = time.monotonic() - wall0, time.process_time() - cpu0
    assert 1.4 <= waited < 5.0
    assert cpu < 0.5, f"the broker used {cpu:.2f}s of CPU while a fetch waited {waited:.2f}s"


def test_an_append_answers_a_parked_fetch_at_once(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    topic = make_topic(bootstrap)
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        producer.partitions_for(topic)
        with connect(bootstrap) as sock:
            sock.sendall(fetch_frame(topic, 1, max_wait_ms=20_000))
            timer = threading.Timer(0.3, lambda: producer.send(topic, b"second"))
            started = time.monotonic()
            timer.start()
            response = read_frame(sock)
            waited = time.monotonic() - started
            timer.join()
    finally:
        producer.close()
    assert waited < 10.0
    assert b"second" in response
