"""Kafka's own command-line tools (4.3.1, the jars Maven resolved), run as an operator runs them.

Each tool is its main class on the classpath the shell scripts would build: the tools jar
(org.apache.kafka:kafka-tools) for most, the broker's jar (kafka_2.13) for ``kafka-configs``, whose
ConfigCommand still lives in core. Outputs are normalised (topic ids, the run's name suffix, hosts, client
and member ids, timestamps, sizes that depend on the clock) so that one broker's answer can be compared with
the other's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.reference.kafka_distribution import KafkaDistribution, cache_root

TOOL_TIMEOUT_S = 180.0
JVM = ("-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")

TOOLS: dict[str, tuple[str, str]] = {
    "kafka-topics": ("tools", "org.apache.kafka.tools.TopicCommand"),
    "kafka-consumer-groups": ("tools", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"),
    "kafka-console-producer": ("tools", "org.apache.kafka.tools.ConsoleProducer"),
    "kafka-console-consumer": ("tools", "org.apache.kafka.tools.consumer.ConsoleConsumer"),
    "kafka-verifiable-producer": ("tools", "org.apache.kafka.tools.VerifiableProducer"),
    "kafka-verifiable-consumer": ("tools", "org.apache.kafka.tools.VerifiableConsumer"),
    "kafka-producer-perf-test": ("tools", "org.apache.kafka.tools.ProducerPerformance"),
    "kafka-consumer-perf-test": ("tools", "org.apache.kafka.tools.ConsumerPerformance"),
    "kafka-delete-records": ("tools", "org.apache.kafka.tools.DeleteRecordsCommand"),
    "kafka-log-dirs": ("tools", "org.apache.kafka.tools.LogDirsCommand"),
    "kafka-configs": ("broker", "kafka.admin.ConfigCommand"),
    "kafka-transactions": ("tools", "org.apache.kafka.tools.TransactionsCommand"),
    "kafka-get-offsets": ("tools", "org.apache.kafka.tools.GetOffsetShell"),
}


def class_data_sharing(classpath: str, main: str) -> list[str]:
    """JVM options for a class-data-sharing archive of this tool (JDK 13+ dynamic AppCDS): the first run
    writes it (to a private name, moved into place when complete), every later run maps the classes it
    loaded instead of parsing them from the jars again — about a third off each tool start, which is most of
    a tool's run here. The archive is keyed by java, classpath and main class; a JVM that finds it unusable
    ignores it (-Xshare:auto) and logs nothing at the levels asked for."""
    java = os.path.realpath(shutil.which("java") or "java")
    built = os.stat(java).st_mtime_ns if os.path.exists(java) else 0  # a JDK updated in place: a new archive
    key = hashlib.sha256(f"{java}\0{built}\0{classpath}\0{main}".encode()).hexdigest()[:16]
    archive = cache_root() / "cds" / f"{main.rsplit('.', 1)[-1]}-{key}.jsa"
    quiet = "-Xlog:cds=off,cds+dynamic=off,class+path=off"
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", quiet]
    archive.parent.mkdir(parents=True, exist_ok=True)
    return [f"-XX:ArchiveClassesAtExit={archive}.{uuid.uuid4().hex}.tmp", quiet]


def archive_written(options: list[str]) -> None:
    for option in options:
        if option.startswith("-XX:ArchiveClassesAtExit="):
            written = Path(option.partition("=")[2])
            if written.exists():
                os.replace(written, written.with_name(written.name.rsplit(".", 2)[0]))


@dataclass(frozen=True)
class ToolRun:
    command: str
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def ok(self) -> ToolRun:
        assert self.returncode == 0, f"{self.command} exited {self.returncode}:\n{self.output[-3000:]}"
        return self


@dataclass(frozen=True)
class KafkaCli:
    tools: KafkaDistribution
    broker: KafkaDistribution
    bootstrap: str
    log4j_config: Path | None = None

    def run(self, tool: str, *args: str, input: str | None = None, timeout: float = TOOL_TIMEOUT_S,
            bootstrap_flag: str | None = "--bootstrap-server") -> ToolRun:
        where, main = TOOLS[tool]
        classpath = (self.tools if where == "tools" else self.broker).classpath
        sharing = class_data_sharing(classpath, main)
        jvm = list(JVM) + sharing + ([f"-Dlog4j2.configurationFile={self.log4j_config}"] if self.log4j_config else [])
        argv = [*args] if bootstrap_flag is None else [bootstrap_flag, self.bootstrap, *args]
        command = f"{tool} {' '.join(argv)}"
        try:
            done = subprocess.run(["java", *jvm, "-cp", classpath, main, *argv], input=input, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{command} did not finish within {timeout} s: "
                                 f"{(exc.stdout or b'')[-2000:]!r}") from exc
        archive_written(sharing)
        return ToolRun(command, done.returncode, _without_jvm_noise(done.stdout), _without_jvm_noise(done.stderr))


_NOISE = re.compile(r"^(SLF4J: .*|WARNING: .*sun\.misc\.Unsafe.*|WARNING: .*terminally deprecated.*|"
                    r"WARNING: Please consider reporting.*|WARNING: .*will be removed in a future release.*|"
                    r"\[[^\]]*\]\[(warning|info)\s*\]\[(cds|class\+path).*)$")


def _without_jvm_noise(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _NOISE.match(line))


LOG4J2_QUIET = """status = error
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %p %m (%c)%n
rootLogger.level = error
rootLogger.appenderRef.console.ref = stderr
"""


def normalise(text: str, suffix: str) -> str:
    """One broker's output made comparable with the other's: ids, hosts, times and the run suffix masked."""
    text = text.replace(suffix, "")
    text = re.sub(r"(TopicId:\s*)\S+", r"\1<id>", text)
    text = re.sub(r"\b(console-consumer|consumer|verifiable|perf)[-\w]*-[0-9a-f]{8}-[0-9a-f-]{27}\b", "<member>", text)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>", text)
    text = re.sub(r"[A-Za-z0-9_-]{22}\b(?=\s|$)", lambda m: "<id>" if re.search(r"[A-Z]", m.group()) and
                  re.search(r"[0-9]", m.group()) else m.group(), text)
    text = re.sub(r"/127\.0\.0\.1", "<host>", text)
    # Config lists come in each broker's own order (Kafka's from a hash map).
    text = re.sub(r"(Configs: )(\S+)", lambda m: m.group(1) + ",".join(sorted(m.group(2).split(","))), text)
    text = re.sub(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?", "<time>", text)
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines())
