"""MirrorMaker 2 moves a topic and a consumer group's committed offsets between groupcoord and Kafka 4.3.1,
in both directions; a consumer of that group on the target resumes where it left off on the source, without
loss, and re-reading only what MM2's conservative offset translation hands back (measured and printed)."""

from __future__ import annotations

import os
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition

from tests.reference.kafka_distribution import ReferenceUnavailable, ensure_connect_mirror
from tests.reference.kafka_tool_table import TABLE, checked
from tests.reference.mirror_maker import OFFSET_LAG_MAX, MirrorMaker

pytestmark = [pytest.mark.reference, pytest.mark.java, pytest.mark.slow, pytest.mark.timeout(600)]

RECORDS = 100
READ_ON_SOURCE = 60
MIRROR_DEADLINE_S = 180
SETTLED_S = 3  # MM2 checkpoints every second; the offset the test checks is read again once MM2 has stopped


@pytest.fixture(scope="session")
def connect_mirror():
    try:
        return ensure_connect_mirror()
    except ReferenceUnavailable as exc:
        pytest.skip(reason=f"MirrorMaker 2 unavailable: {exc}")


def _committed(bootstrap: str, group: str, topic: str) -> int | None:
    """The group's committed offset (an OffsetFetch; the consumer never joins the group)."""
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return reader.committed(TopicPartition(topic, 0))
    finally:
        reader.close()


@pytest.mark.parametrize("direction", [
    "groupcoord->kafka",
    pytest.param("kafka->groupcoord", marks=pytest.mark.skipif(
        not os.environ.get("GROUPCOORD_FULL_TESTS"),
        reason="second MirrorMaker 2 direction (~1 min): set GROUPCOORD_FULL_TESTS=1"))])
def test_a_group_moves_with_its_topic_and_resumes_on_the_target(connect_mirror, groupcoord_daemon,
                                                                 kafka_reference, tmp_path, direction):
    source_broker, target_broker = direction.split("->")
    command = (f"connect-mirror-maker (MirrorMaker 2, sync.group.offsets.enabled) {source_broker} -> "
               f"{target_broker}: {RECORDS} records, a group committed at {READ_ON_SOURCE}")
    # the outcome is reported in the target's column: the source only produced and committed
    with checked("mirror-maker-2", command, target_broker) as outcome:
        outcome["text"] = _move(groupcoord_daemon.bootstrap_servers, kafka_reference, direction, tmp_path,
                                connect_mirror)
    TABLE.record_check("mirror-maker-2", command, source_broker,
                       f"as source: {RECORDS} records produced, the group committed at {READ_ON_SOURCE}", True)


def _move(ours: str, kafka_reference: str, direction: str, tmp_path, connect_mirror) -> str:
    source, target = (ours, kafka_reference) if direction == "groupcoord->kafka" else (kafka_reference, ours)
    run = uuid.uuid4().hex[:8]
    topic, group = f"mm-orders-{run}", f"mm-app-{run}"

    producer = KafkaProducer(bootstrap_servers=source, acks="all")
    for i in range(RECORDS):
        producer.send(topic, key=b"k", value=b"%d" % i, partition=0)
    producer.flush(timeout=60)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=source, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", max_poll_records=READ_ON_SOURCE)
    consumer.assign([TopicPartition(topic, 0)])
    seen: list[int] = []
    deadline = time.monotonic() + 60
    while len(seen) < READ_ON_SOURCE and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=1000, max_records=READ_ON_SOURCE - len(seen)).values():
            seen += [int(r.value) for r in records]
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(READ_ON_SOURCE, "", -1)})
    consumer.close()
    assert seen == list(range(READ_ON_SOURCE))

    mm2 = MirrorMaker(connect_mirror, tmp_path / "mm2").start(source, target, f"mm-orders-{run}", f"mm-app-{run}")
    try:
        deadline = time.monotonic() + MIRROR_DEADLINE_S
        translated, steady_since = None, time.monotonic()
        while time.monotonic() < deadline:
            seen_now = _committed(target, group, topic)
            if seen_now != translated:
                translated, steady_since = seen_now, time.monotonic()
            elif translated is not None and time.monotonic() - steady_since > SETTLED_S:
                break  # MM2 checkpoints every second: unchanged this long means translated as far as it will
            assert mm2.process.poll() is None, f"MirrorMaker exited:\n{mm2.log_tail()}"
            time.sleep(1)
        assert translated is not None, f"no offsets for {group} reached the target:\n{mm2.log_tail()}"
    finally:
        mm2.stop()
    # what the target holds now that nothing writes to it any more (MM2 may have moved it since the last look)
    translated = _committed(target, group, topic)
    # MM2 translates conservatively: never past the source's commit (no loss); how far behind depends on the
    # offset syncs it kept (OffsetSyncStore), measured and printed here. 0 would mean the group restarted.
    assert translated is not None and 0 < translated <= READ_ON_SOURCE

    resumed = KafkaConsumer(topic, bootstrap_servers=target, group_id=group, enable_auto_commit=False,
                            auto_offset_reset="earliest")
    rest: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(rest) < RECORDS - translated and time.monotonic() < deadline:
            for records in resumed.poll(timeout_ms=500).values():
                rest += [int(r.value) for r in records]
        for records in resumed.poll(timeout_ms=500).values():  # nothing more than the source had
            rest += [int(r.value) for r in records]
    finally:
        resumed.close()
    assert rest == list(range(translated, RECORDS)), "the target copy lost or reordered records"
    print(f"[{direction}] committed {READ_ON_SOURCE} on the source, {translated} on the target: "
          f"{READ_ON_SOURCE - translated} records delivered again (offset.lag.max {OFFSET_LAG_MAX})")
    return (f"as target: group translated to {translated}, its consumer read {translated}..{RECORDS - 1} "
            f"with no loss ({READ_ON_SOURCE - translated} delivered again)")
