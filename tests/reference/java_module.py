"""Runs the Maven module in tests/java (a stock kafka-clients consumer group) against a bootstrap address."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.reference.kafka_distribution import ReferenceUnavailable, require_tool

JAVA_MODULE = Path(__file__).resolve().parent.parent / "java"
MAVEN_TIMEOUT_S = 600


def run_java_consumer_group_test(bootstrap: str, test_class: str = "ConsumerGroupTest",
                                 client_config: Path | None = None,
                                 properties: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Runs one test class of the module (``ConsumerGroupTest``, ``EosPipelineTest``). Offline first (the
    dependencies are cached after the first run), online only if Maven lacks some. ``client_config`` is a
    client properties file (security.protocol, sasl.*, ssl.*) every client loads; ``properties`` are further
    -D settings the test class reads (Maven passes them on to the test JVM as system properties)."""
    require_tool("java")
    mvn = require_tool("mvn")
    env = {**os.environ, "GROUPCOORD_BOOTSTRAP": bootstrap}

    def maven(*flags: str) -> subprocess.CompletedProcess:
        try:
            extra = [f"-DclientConfig={client_config}"] if client_config is not None else []
            extra += [f"-D{name}={value}" for name, value in (properties or {}).items()]
            return subprocess.run([mvn, "-q", "-B", *flags, "test", f"-Dbootstrap={bootstrap}", *extra,
                                   f"-Dtest={test_class}", "-Dsurefire.failIfNoSpecifiedTests=false"], cwd=JAVA_MODULE,
                                  env=env, capture_output=True, text=True, timeout=MAVEN_TIMEOUT_S)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"the Java test {test_class} did not finish in {MAVEN_TIMEOUT_S} s") from exc

    done = maven("-o")
    if done.returncode != 0 and "offline" in (done.stdout + done.stderr).lower():
        done = maven()
    return done


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
