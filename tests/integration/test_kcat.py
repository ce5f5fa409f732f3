"""kcat (librdkafka's command-line client) against the embedded broker: the tool operators reach for first
when they poke at a cluster, so producing, reading back, consuming as a group member and listing metadata
must behave exactly as they do against Kafka."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient

from groupcoord.coordinator.groups.hashing import partition_for
from groupcoord.coordinator.groups.offsets_records import OffsetCommitKey, decode_key, decode_value
from tests.support.waiting import wait_for

KCAT = shutil.which("kcat")
pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(KCAT is None, reason="kcat is not installed (the Makefile installs it: apt-get install kcat)"),
]

PARTITIONS = 3
MESSAGES = 60
DEADLINE_S = 45


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create_topic(bootstrap: str, topic: str) -> None:
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        admin.close()


def kcat(bootstrap: str, *args: str, stdin: str | None = None, timeout: float = DEADLINE_S) -> subprocess.CompletedProcess[str]:
    assert KCAT is not None
    return subprocess.run([KCAT, "-b", bootstrap, "-q", *args], input=stdin, capture_output=True, text=True,
                          timeout=timeout, check=False)


def produce(bootstrap: str, topic: str, lines: list[str]) -> None:
    done = kcat(bootstrap, "-P", "-t", topic, "-K", ":", "-X", "acks=all", stdin="".join(f"{line}\n" for line in lines))
    assert done.returncode == 0, done.stderr


def records(prefix: str, start: int, stop: int) -> list[str]:
    return [f"k{i}:{prefix}-{i}" for i in range(start, stop)]


def test_kcat_produces_and_reads_everything_back_to_the_end_of_every_partition(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    topic = unique("kcat-topic")
    create_topic(bootstrap, topic)
    sent = records(topic, 0, MESSAGES)
    produce(bootstrap, topic, sent)

    # -e: exit once every partition has been read to its end, which needs correct high watermarks.
    read = kcat(bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-f", "%p %o %k:%s\n")
    assert read.returncode == 0, read.stderr
    rows = [line.split(" ", 2) for line in read.stdout.splitlines()]
    assert sorted(value for _, _, value in rows) == sorted(sent)
    by_partition: dict[int, list[int]] = {}
    for partition, offset, _ in rows:
        by_partition.setdefault(int(partition), []).append(int(offset))
    # keyed records spread over the partitions; each partition is dense from offset 0 and read in order
    assert len(by_partition) > 1
    assert all(offsets == list(range(len(offsets))) for offsets in by_partition.values())


def test_kcat_lists_the_broker_and_the_topic_in_its_metadata(groupcoord_broker):
    bootstrap = groupcoord_broker.bootstrap_servers
    topic = unique("kcat-meta")
    create_topic(bootstrap, topic)
    listed = kcat(bootstrap, "-L", "-J", "-t", topic)
    assert listed.returncode == 0, listed.stderr
    metadata = json.loads(listed.stdout)
    host, _, port = bootstrap.rpartition(":")
    assert [(b["name"].rpartition(":")[0], b["name"].rpartition(":")[2]) for b in metadata["brokers"]] == [(host, port)]
    broker_id = metadata["brokers"][0]["id"]
    [described] = metadata["topics"]
    assert described["topic"] == topic and "error" not in described
    assert sorted(p["partition"] for p in described["partitions"]) == list(range(PARTITIONS))
    assert all(p["leader"] == broker_id and p["replicas"] == [{"id": broker_id}] for p in described["partitions"])


def test_kcat_balanced_consumer_joins_the_group_consumes_and_commits(groupcoord_broker):
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient

    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("kcat-group-topic"), unique("kcat-group")
    create_topic(bootstrap, topic)
    first, second = records(topic, 0, MESSAGES), records(topic, MESSAGES, 2 * MESSAGES)
    produce(bootstrap, topic, first)

    member = subprocess.Popen(
        [KCAT, "-b", bootstrap, "-q", "-G", group, topic, "-o", "beginning", "-c", str(2 * MESSAGES),
         "-f", "%k:%s\n", "-X", "auto.commit.interval.ms=100", "-X", "session.timeout.ms=10000",
         "-X", "client.id=kcat-member"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        def committed_total() -> int:
            offsets = admin.list_group_offsets({group: None}).get(group, {})
            return sum(o[0] for tp, o in offsets.items() if tp.topic == topic and o[0] >= 0)

        # While kcat runs it is the group's only member, owns every partition, and its auto-commits make the
        # committed offsets catch up with everything it has read so far.
        assert wait_for(lambda: committed_total() == MESSAGES), (committed_total(), member.poll())
        description = admin.describe_groups([group])[group]
        assert description["group_state"] == "Stable" and description["protocol_type"] == "consumer"
        [kcat_member] = description["members"]
        assert kcat_member["client_id"] == "kcat-member"
        assigned = sorted(p for a in kcat_member["member_assignment"]["assigned_partitions"] for p in a["partitions"])
        assert assigned == list(range(PARTITIONS))

        # kcat keeps consuming as a member until it reaches its count (-c), then closes, committing on the way out
        produce(bootstrap, topic, second)
        out, err = member.communicate(timeout=DEADLINE_S)
        assert member.returncode == 0, err
        assert sorted(out.splitlines()) == sorted(first + second)

        assert wait_for(lambda: admin.describe_groups([group])[group]["group_state"] == "Empty", 15)
        offsets = admin.list_group_offsets({group: None})[group]
        assert sum(o[0] for o in offsets.values()) == 2 * MESSAGES
        assert {TopicPartition(topic, p) for p in range(PARTITIONS)} >= set(offsets)
    finally:
        admin.close()
        if member.poll() is None:
            member.kill()
            member.wait(10)



def _length_prefixed_records(raw: bytes) -> list[tuple[bytes | None, bytes | None]]:
    """Parses kcat's `-f '%K\\n%k%S\\n%s'` output: each length as a text line, then that many raw bytes."""
    out, pos = [], 0

    def field() -> bytes | None:
        nonlocal pos
        end = raw.index(b"\n", pos)
        size = int(raw[pos:end])
        pos = end + 1
        if size < 0:
            return None
        data = raw[pos : pos + size]
        pos += size
        return data

    while pos < len(raw):
        out.append((field(), field()))
    return out


def test_kcat_reads_the_offsets_topic_in_kafkas_own_record_layout(groupcoord_broker):
    """`kcat -C -t __consumer_offsets`, as operators and Burrow-style tools read it: the commit is there,
    key and value in Kafka's layout (decoded here with the schemas of Kafka's record definitions)."""
    bootstrap = groupcoord_broker.bootstrap_servers
    topic, group = unique("audited"), unique("auditors")
    create_topic(bootstrap, topic)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 1, 42)])])[group].result(30)

    done = subprocess.run(
        [KCAT, "-b", bootstrap, "-q", "-C", "-t", "__consumer_offsets", "-p", str(partition_for(group, 50)), "-e",
         "-f", "%K\n%k%S\n%s"],
        capture_output=True, timeout=DEADLINE_S, check=False,
    )
    assert done.returncode == 0, done.stderr
    commits = {}
    for key, value in _length_prefixed_records(done.stdout):
        decoded = decode_key(key)
        if isinstance(decoded, OffsetCommitKey) and decoded.group == group:
            commits[(decoded.topic, decoded.partition)] = decode_value(decoded, value).offset
    assert commits == {(topic, 1): 42}
