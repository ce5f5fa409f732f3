"""Checks a pipeline command makes before it starts Spark, so a missing piece is one line, not a traceback.

A newcomer's first `groupcoord pipeline …` fails in one of three ways: PySpark (the `pipeline` extra) is
not installed, there is no Java 17+ for Spark's JVM, or there is a Java that Spark's launcher cannot start
(a broken JAVA_HOME, a JRE too old for the class files). Each gets one line saying what is wrong and what
fixes it, and exit code 2 (a usage problem, like argparse's), never a stack trace.

Spark's launcher runs `$JAVA_HOME/bin/java` when JAVA_HOME is set and `java` from PATH otherwise; the Java
check looks at the same binary the launcher will use.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys

from groupcoord.protocol.frozen import frozen_dataclass

MIN_JAVA = 17
EXIT_SETUP = 2
INSTALL_HINT = "make pipeline  (or: pip install 'groupcoord[pipeline]')"
JAVA_HINT = (f"install Java {MIN_JAVA} (Debian/Ubuntu: apt-get install openjdk-{MIN_JAVA}-jre-headless) "
             f"and put it on PATH or set JAVA_HOME to it")
_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


class SetupError(Exception):
    """What is missing, already phrased as the one line the user reads (fix included)."""


@frozen_dataclass(slots=False)
class JavaFound:
    binary: str
    major: int


def java_binary() -> str | None:
    """The `java` Spark's launcher will run: JAVA_HOME's when set, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        return candidate if os.path.exists(candidate) else None
    return shutil.which("java")


def java_major(text: str) -> int | None:
    """The feature release from `java -version` output: `"17.0.15"` -> 17, `"1.8.0_402"` -> 8."""
    match = _VERSION.search(text)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def check_java() -> JavaFound:
    binary = java_binary()
    if binary is None:
        where = f"JAVA_HOME={os.environ['JAVA_HOME']} has no bin/java" if os.environ.get("JAVA_HOME") else \
            "no java on PATH"
        raise SetupError(f"Spark needs Java {MIN_JAVA} or newer, but {where}: {JAVA_HINT}")
    try:
        probe = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SetupError(f"{binary} does not run ({exc}): {JAVA_HINT}") from None
    major = java_major(probe.stderr + probe.stdout)
    if probe.returncode != 0 or major is None:
        raise SetupError(f"{binary} -version failed (exit {probe.returncode}), so Spark cannot start: {JAVA_HINT}")
    if major < MIN_JAVA:
        raise SetupError(f"Spark needs Java {MIN_JAVA} or newer, but {binary} is Java {major}: {JAVA_HINT}")
    return JavaFound(binary, major)


def check_pyspark() -> str:
    try:
        pyspark = importlib.import_module("pyspark")
    except ImportError as exc:
        raise SetupError(f"the pipeline needs PySpark, which is not installed ({exc}): {INSTALL_HINT}") from None
    return getattr(pyspark, "__version__", "?")


def check_all() -> None:
    """PySpark first (nothing else matters without it), then the Java its JVM needs."""
    check_pyspark()
    check_java()


def spark_start_failure(exc: BaseException) -> SetupError:
    """A session that did not start: Java died under the launcher, or the master is unreachable."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return SetupError(f"Spark did not start ({type(exc).__name__}: {first}); check that {java_binary() or 'java'} "
                      f"is a working Java {MIN_JAVA}+ and that --master is reachable: {JAVA_HINT}")


def report(error: SetupError, command: str) -> int:
    print(f"{command}: {error}", file=sys.stderr)
    return EXIT_SETUP
