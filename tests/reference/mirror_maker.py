"""MirrorMaker 2 in its dedicated mode (``org.apache.kafka.connect.mirror.MirrorMaker``, what
``connect-mirror-maker.sh`` runs), replicating one direction between two single-node clusters.

The settings are the ones a one-node pair needs (replication factor 1 for every internal topic), short
intervals so a test sees topics, records and group offsets arrive in seconds, and the identity replication
policy so that a topic keeps its name on the target (a consumer group moves without renaming anything).
Topic ACL sync is off: neither side here has an authorizer to copy from.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.reference.kafka_cli import archive_written, class_data_sharing
from tests.reference.kafka_distribution import KafkaDistribution

MAIN = "org.apache.kafka.connect.mirror.MirrorMaker"

OFFSET_LAG_MAX = 10  # MM2 emits an offset sync at least every this many records: the translation's bound

_LOG4J2 = """status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
"""


def mm2_properties(source: str, target: str, topics: str, groups: str) -> str:
    settings = {
        "clusters": "source, target",
        "source.bootstrap.servers": source,
        "target.bootstrap.servers": target,
        "source->target.enabled": "true",
        "target->source.enabled": "false",
        "source->target.topics": topics,
        "source->target.groups": groups,
        "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "emit.checkpoints.interval.seconds": "1",
        "emit.heartbeats.interval.seconds": "1",
        "refresh.topics.interval.seconds": "2",
        "refresh.groups.interval.seconds": "2",
        "sync.topic.acls.enabled": "false",
        "offset.lag.max": str(OFFSET_LAG_MAX),
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "tasks.max": "1",
    }
    return "".join(f"{key} = {value}\n" for key, value in settings.items())


@dataclass
class MirrorMaker:
    distribution: KafkaDistribution
    work_dir: Path
    process: subprocess.Popen | None = field(default=None, init=False)
    sharing: list[str] = field(default_factory=list, init=False)

    @property
    def log_file(self) -> Path:
        return self.work_dir / "mirror-maker.log"

    def start(self, source: str, target: str, topics: str, groups: str) -> MirrorMaker:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        config = self.work_dir / "mm2.properties"
        config.write_text(mm2_properties(source, target, topics, groups))
        log4j = self.work_dir / "log4j2.properties"
        log4j.write_text(_LOG4J2.format(log=self.log_file))
        self.sharing = class_data_sharing(self.distribution.classpath, MAIN)
        self.process = subprocess.Popen(
            ["java", "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", *self.sharing,
             f"-Dlog4j2.configurationFile={log4j}", "-cp", self.distribution.classpath, MAIN, str(config)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return "(no log)"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        archive_written(self.sharing)
