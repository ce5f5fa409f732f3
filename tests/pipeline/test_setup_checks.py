"""A pipeline command on a machine that is not set up: one line naming the fix, exit code 2, no traceback.

Each case runs `groupcoord pipeline snapshot` in a child process with the environment broken the way a
newcomer's is: PySpark not importable, no Java at all, a Java too old, a Java that cannot start.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from groupcoord.pipeline.preflight import java_major

SNAPSHOT = ["pipeline", "snapshot", "--data-dir", "{data}", "--out", "{out}", "--at", "0"]


def _run(tmp_path, *, env=None, prelude=""):
    data = tmp_path / "data" / "__consumer_offsets-0"
    data.mkdir(parents=True, exist_ok=True)
    (data / "00000000000000000000.log").write_bytes(b"")
    argv = [a.format(data=tmp_path / "data", out=tmp_path / "out") for a in SNAPSHOT]
    code = textwrap.dedent(f"""
        import sys
        {prelude}
        from groupcoord.coordinator.ops.cli import main
        sys.exit(main({argv!r}))
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _one_line_with_fix(result, *expected, foreign_lines=0):
    """Ours: the segment count, then one line. A JVM that dies may print its own line(s) first."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr
    ours = [line for line in lines if line.startswith("snapshot:")]
    assert len(ours) == 2 and ours[0].startswith("snapshot: 1 segments"), lines
    assert len(lines) <= 2 + foreign_lines, lines
    for text in expected:
        assert text in ours[1], ours[1]
    return ours[1]


def _fake_java(tmp_path, version_line: str, exit_code: int = 0):
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text(f"#!/bin/sh\necho '{version_line}' >&2\nexit {exit_code}\n")
    java.chmod(0o755)
    return home


def test_without_pyspark_the_fix_is_the_pipeline_extra(tmp_path):
    result = _run(tmp_path, prelude="sys.modules['pyspark'] = None  # as if the extra were not installed")
    _one_line_with_fix(result, "needs PySpark", "make pipeline", "pip install 'groupcoord[pipeline]'")


def test_without_java_the_fix_is_installing_java_17(tmp_path):
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not os.path.exists(os.path.join(p, "java")))
    env = {"PATH": path}
    result = _run(tmp_path, env=env, prelude="import os; os.environ.pop('JAVA_HOME', None)")
    _one_line_with_fix(result, "Java 17", "no java on PATH", "openjdk-17")


def test_java_11_is_refused_before_spark_tries(tmp_path):
    home = _fake_java(tmp_path, 'openjdk version "11.0.22" 2024-01-16')
    result = _run(tmp_path, env={"JAVA_HOME": str(home)})
    _one_line_with_fix(result, "is Java 11", "Java 17")


def test_a_java_that_cannot_start_is_named_with_the_fix(tmp_path):
    home = _fake_java(tmp_path, "Error: could not create the Java Virtual Machine.", exit_code=1)
    result = _run(tmp_path, env={"JAVA_HOME": str(home)})
    _one_line_with_fix(result, f"{home}/bin/java -version failed", "Java 17")


def test_a_jvm_that_dies_under_spark_is_one_line_too(tmp_path):
    """`java -version` answers 17 but every real start fails: Spark's gateway exits, and we say so."""
    home = tmp_path / "jdk"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\nif [ \"$1\" = -version ]; then echo 'openjdk version \"17.0.9\"' >&2; exit 0; fi\n"
                    "echo 'Error occurred during initialization of VM' >&2\nexit 1\n")
    java.chmod(0o755)
    result = _run(tmp_path, env={"JAVA_HOME": str(home)})
    # the JVM and spark-class print their own complaint too (they write to the inherited stderr)
    _one_line_with_fix(result, "Spark did not start", "Java 17", foreign_lines=2)


@pytest.mark.parametrize("text, major", [('openjdk version "17.0.15" 2025-04-15', 17),
                                         ('java version "1.8.0_402"', 8), ('openjdk version "21" 2023-09-19', 21)])
def test_java_versions_are_read_as_feature_releases(text, major):
    assert java_major(text) == major


def test_jobs_that_draw_nothing_never_import_matplotlib():
    code = textwrap.dedent("""
        import sys
        from groupcoord.coordinator.ops.cli import build_parser
        build_parser()
        from groupcoord.pipeline.jobs import snapshot, history, rebalances, health, watch
        from groupcoord.pipeline import cli, kafka_source, session, datasource
        assert 'matplotlib' not in sys.modules, sorted(m for m in sys.modules if m.startswith('matplotlib'))
        from groupcoord.pipeline.jobs import report
        assert 'matplotlib' in sys.modules  # the one job that draws does
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
