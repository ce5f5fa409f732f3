"""The Apache Kafka jars the reference broker runs on, fetched once with Maven into the user's cache.

Kafka is resolved from Maven Central rather than downloaded as a release tarball because Maven is already
needed for the Java client module, it verifies checksums, and its local repository makes later runs
work offline.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

KAFKA_VERSION = os.environ.get("GROUPCOORD_KAFKA_VERSION", "4.3.1")
# The SLF4J 1.x bridge into the log4j2 core Kafka already depends on, so the broker log lands in a file
# we can show when start-up fails.
LOG4J_VERSION = "2.25.4"
MAVEN_TIMEOUT_S = 900

_POM_TEMPLATE = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>groupcoord.reference</groupId>
  <artifactId>{name}-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}
  </dependencies>
</project>
"""
_DEPENDENCY = """    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>"""


class ReferenceUnavailable(RuntimeError):
    """The reference cannot run on this machine; the message is the skip reason shown to the user."""


@dataclass(frozen=True)
class KafkaDistribution:
    version: str
    home: Path

    @property
    def libs(self) -> Path:
        return self.home / "libs"

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    @property
    def complete_marker(self) -> Path:
        return self.home / ".complete"

    def is_complete(self) -> bool:
        return self.complete_marker.exists() and any(self.libs.glob("kafka*.jar"))


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groupcoord"


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ReferenceUnavailable(f"{name} is not installed (the Kafka reference and the Java client test need Java 17 and Maven)")
    return path


def ensure_kafka(version: str = KAFKA_VERSION) -> KafkaDistribution:
    """The broker's jars (org.apache.kafka:kafka_2.13), resolved with Maven the first time."""
    return _resolve(f"kafka-{version}", version, [("org.apache.kafka", "kafka_2.13", version),
                                                  ("org.apache.logging.log4j", "log4j-slf4j-impl", LOG4J_VERSION)])


def ensure_kafka_tools(version: str = KAFKA_VERSION) -> KafkaDistribution:
    """Kafka's command-line tools (org.apache.kafka:kafka-tools: DumpLogSegments and friends), kept apart
    from the broker's classpath because they pull in Kafka Connect's runtime."""
    return _resolve(f"kafka-tools-{version}", version, [("org.apache.kafka", "kafka-tools", version)])


def ensure_connect_mirror(version: str = KAFKA_VERSION) -> KafkaDistribution:
    """MirrorMaker 2 (org.apache.kafka:connect-mirror and its runtime: Connect, kafka-clients), run as the
    dedicated driver org.apache.kafka.connect.mirror.MirrorMaker; log4j2 behind SLF4J so its log is a file."""
    return _resolve(f"connect-mirror-{version}", version, [("org.apache.kafka", "connect-mirror", version),
                                                           ("org.apache.logging.log4j", "log4j-slf4j-impl",
                                                            LOG4J_VERSION)])


def maven_offline_first(goal: list[str], cwd: Path | None = None) -> str | None:
    """Runs a Maven goal offline first (what it needs is cached after its first run, so later test runs need no
    network), then online if that failed. None once it succeeded, else why not: its output's tail, or the
    timeout."""
    failure = ""
    for offline in (True, False):
        try:
            done = subprocess.run(goal + (["-o"] if offline else []), cwd=cwd, capture_output=True, text=True,
                                  timeout=MAVEN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            failure = f"Maven did not finish within {MAVEN_TIMEOUT_S} s"
            continue
        if done.returncode == 0:
            return None
        failure = (done.stdout + done.stderr)[-3000:]
    return failure


def _resolve(name: str, version: str, artifacts: list[tuple[str, str, str]]) -> KafkaDistribution:
    """Returns the cached jars, resolving them with Maven the first time (offline first, then online).

    Under an exclusive lock on a file beside the cache: ``make test``'s processes can all ask for the same jars at
    once on a machine that has none yet (tests/support/parallel.py: its groups are not in effect), and one's
    resolution must not remove the folder another is filling or reading."""
    require_tool("java")
    dist = KafkaDistribution(version=version, home=cache_root() / name)
    if dist.is_complete():
        return dist
    with held_exclusively(cache_root() / f"{name}.lock"):
        return _resolve_locked(dist, name, artifacts)


@contextmanager
def held_exclusively(lock_path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_path`` (created with its folder) for the with-block: what the test processes
    that build or fetch the same thing at once take first."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released as the file closes
        yield


def _resolve_locked(dist: KafkaDistribution, name: str, artifacts: list[tuple[str, str, str]]) -> KafkaDistribution:
    """``_resolve`` once it holds the lock: another process may have completed the jars meanwhile."""
    if dist.is_complete():
        return dist
    mvn = require_tool("mvn")
    dist.home.mkdir(parents=True, exist_ok=True)
    pom = dist.home / "pom.xml"
    dependencies = "\n".join(_DEPENDENCY.format(group=g, artifact=a, version=v) for g, a, v in artifacts)
    pom.write_text(_POM_TEMPLATE.format(name=name, dependencies=dependencies))
    if dist.libs.exists():
        shutil.rmtree(dist.libs)
    failure = maven_offline_first([mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                                   f"-DoutputDirectory={dist.libs}", "-DincludeScope=runtime"])
    if failure is None:
        dist.complete_marker.write_text(dist.version)
        return dist
    coordinates = ", ".join(f"{g}:{a}:{v}" for g, a, v in artifacts)
    raise ReferenceUnavailable(f"could not fetch {coordinates} with Maven: {failure}")
