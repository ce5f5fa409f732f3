"""Runs the Maven module in tests/java (a stock kafka-clients consumer group) against a bootstrap address."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest

from tests.reference.kafka_distribution import ReferenceUnavailable, held_exclusively, maven_offline_first, require_tool

JAVA_MODULE = Path(__file__).resolve().parent.parent / "java"
JAVA_TEST_TIMEOUT_S = 600  # one Java test class run (the first also waits for Maven's compile)
PACKAGE = "io.groupcoord.reference"


TEST_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn")
"""The test JVM's options: a few seconds of client work, where the C2 compiler's warm-up is only cost."""


@functools.cache
def compiled_module() -> str:
    """The module's test class path (its classes and every test dependency), Maven run once per test session:
    it compiles the module (incremental: nothing to do when unchanged) and writes the dependencies' class path,
    offline first (``maven_offline_first``). Why not ``mvn test`` per test: Maven's start, its up-to-date checks
    and surefire's fork cost 4-10 s a run on the two-core test machine, more than most of the Java tests."""
    listing = JAVA_MODULE / "target" / "test-classpath.txt"
    # (one process compiles at a time: make test's processes each compile once, and may start together)
    with held_exclusively(JAVA_MODULE / "target" / ".compile.lock"):
        failure = maven_offline_first([require_tool("mvn"), "-q", "-B", "test-compile", "dependency:build-classpath",
                                       f"-Dmdep.outputFile={listing}", "-Dmdep.includeScope=test"], cwd=JAVA_MODULE)
    if failure is not None:
        raise AssertionError(f"Maven could not compile the Java module tests/java: {failure}")
    return os.pathsep.join([str(JAVA_MODULE / "target" / "test-classes"), listing.read_text().strip()])


def run_java_consumer_group_test(bootstrap: str, test_class: str = "ConsumerGroupTest",
                                 client_config: Path | None = None,
                                 properties: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Runs one test class of the module (``ConsumerGroupTest``, ``EosPipelineTest``) on a plain JVM
    (``RunTests``, JUnit's launcher). ``client_config`` is a client properties file (security.protocol, sasl.*,
    ssl.*) every client loads; ``properties`` are further system properties the test class reads."""
    java = require_tool("java")
    classpath = compiled_module()
    settings = {"bootstrap": bootstrap, "clientConfig": str(client_config or ""), **(properties or {})}
    try:
        return subprocess.run([java, *TEST_JVM, *(f"-D{name}={value}" for name, value in settings.items()),
                               "-cp", classpath, f"{PACKAGE}.RunTests", f"{PACKAGE}.{test_class}"],
                              env={**os.environ, "GROUPCOORD_BOOTSTRAP": bootstrap}, capture_output=True, text=True,
                              timeout=JAVA_TEST_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the Java test {test_class} did not finish in {JAVA_TEST_TIMEOUT_S} s") from exc


def failure_report(done: subprocess.CompletedProcess) -> str:
    return f"Java test failed (exit {done.returncode}):\n{(done.stdout + done.stderr)[-6000:]}"


def assert_java_test_passes(bootstrap: str, test_class: str = "ConsumerGroupTest",
                            client_config: Path | None = None, properties: dict[str, str] | None = None) -> None:
    """A Java test class passes against ``bootstrap``; a missing Java or Maven skips it with the reason."""
    try:
        done = run_java_consumer_group_test(bootstrap, test_class, client_config, properties)
    except ReferenceUnavailable as exc:
        pytest.skip(reason=str(exc))
    assert done.returncode == 0, failure_report(done)
