"""The Docker image, built with podman on a debootstrapped Debian base, run, and used through its published
port by a stock kafka-python client: records produced, consumed by a group, committed, and still there after
the container is replaced on the same volume."""

from __future__ import annotations

import os
import socket
import urllib.request
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.docker.podman import IMAGE, Podman
from tests.support.waiting import wait_for

# Building the image takes ~40 s warm (plus ~1 min of debootstrap the first time) on a suite already near its
# 15-minute budget: in the full run (GROUPCOORD_FULL_TESTS=1), like the other long tool tests.
pytestmark = [pytest.mark.container, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(not os.environ.get("GROUPCOORD_FULL_TESTS"),
                                 reason="Docker image build and run with podman (~1-2 min): set GROUPCOORD_FULL_TESTS=1")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(engine: Podman, name: str, volume: str, port: int, metrics_port: int) -> None:
    engine.run_detached(IMAGE, name, "-p", f"127.0.0.1:{port}:9092", "-p", f"127.0.0.1:{metrics_port}:9404",
                        "-v", f"{volume}:/data", "-e", f"GROUPCOORD_ADVERTISED=127.0.0.1:{port}")
    assert wait_for(lambda: "listening on" in engine.logs(name), 60, step=0.5), \
        f"the container did not start:\n{engine.logs(name)[-3000:]}"


def test_a_kafka_python_client_uses_the_container_through_its_published_port(engine: Podman, image: str):
    run = uuid.uuid4().hex[:8]
    name, volume = f"groupcoord-test-{run}", f"groupcoord-test-{run}"
    port, metrics_port = _free_port(), _free_port()
    try:
        _start(engine, name, volume, port, metrics_port)
        bootstrap = f"127.0.0.1:{port}"
        producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
        for i in range(20):
            producer.send("orders", key=b"k%d" % (i % 4), value=b"order-%d" % i)
        producer.flush(timeout=30)
        producer.close()

        consumer = KafkaConsumer("orders", bootstrap_servers=bootstrap, group_id="orders-app",
                                 auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=10000)
        values = sorted(m.value for m in consumer)
        consumer.commit()
        consumer.close()
        assert values == sorted(b"order-%d" % i for i in range(20))

        metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
        assert "groupcoord_" in metrics

        engine.remove(name)  # SIGTERM, then the same volume under a new container
        _start(engine, name, volume, port, metrics_port)
        again = KafkaConsumer(bootstrap_servers=bootstrap, group_id="orders-app", enable_auto_commit=False)
        committed = again.committed(TopicPartition("orders", 0))
        again.close()
        assert committed == 20
    finally:
        engine.remove(name)
        engine.remove_volume(volume)
