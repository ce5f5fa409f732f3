"""A `__consumer_offsets` log written by the real daemon: consumers join, rebalance, commit and leave.

The daemon runs as its own process (tests/support/daemon.py) and is stopped before the log is read, so
every reader (local mode, a cluster, object storage) sees the same bytes.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

from tests.support.daemon import Daemon
from tests.support.kafka_python_members import commit_when_settled, poll_until, subscribed_consumer


def write_log(data_dir: Path, groups: int = 2) -> list[str]:
    """Two groups, each with two consumers that split a topic, commit, then one leaves (a rebalance) and the
    other commits again; returns the group names."""
    from kafka import TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic

    daemon = Daemon(data_dir).start()
    names = []
    try:
        bootstrap = daemon.bootstrap_servers
        for g in range(groups):
            topic, group = f"cl-topic-{g}-{uuid.uuid4().hex[:6]}", f"cl-group-{g}-{uuid.uuid4().hex[:6]}"
            names.append(group)
            admin = KafkaAdminClient(bootstrap_servers=bootstrap)
            try:
                admin.create_topics([NewTopic(topic, 2, 1)])
            finally:
                admin.close()
            a = subscribed_consumer(bootstrap, topic, group, f"{group}-a")
            b = subscribed_consumer(bootstrap, topic, group, f"{group}-b")
            try:
                poll_until([a, b], lambda: len(a.assignment()) == 1 and len(b.assignment()) == 1)
                for consumer, offset in ((a, 3 + g), (b, 7 + g)):
                    (tp,) = consumer.assignment()
                    commit_when_settled(consumer, topic, {tp.partition: offset}, {tp.partition: f"m{offset}"})
            finally:
                b.close()
            try:
                poll_until([a], lambda: a.assignment() == {TopicPartition(topic, 0), TopicPartition(topic, 1)})
                commit_when_settled(a, topic, {0: 11 + g, 1: 13 + g})
            finally:
                a.close()
    finally:
        daemon.terminate()
    return names


def offsets_dirs(data_dir: Path, target: Path) -> Path:
    """Only the `__consumer_offsets-N` directories, copied: what a cluster job is pointed at."""
    target.mkdir(parents=True, exist_ok=True)
    for child in data_dir.iterdir():
        if child.name.startswith("__consumer_offsets-"):
            shutil.copytree(child, target / child.name)
    return target
