"""Several ``groupcoord`` CLI runs in one child interpreter, one after the other, stopping at the first that
fails: the Spark jobs run as a user runs them (a process of their own, PySpark's workers on this Python), and
the JVM a run starts is paid once for the lot."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run_cli(runs: list[list[str]], timeout: float = 600, worker_python: str | None = None) -> subprocess.CompletedProcess:
    """`worker_python`: PYSPARK_PYTHON for the run (default: this interpreter)."""
    code = textwrap.dedent(f"""
        import sys
        from groupcoord.coordinator.ops.cli import main
        for argv in {runs!r}:
            code = main(argv)
            if code:
                sys.exit(code)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYSPARK_PYTHON": worker_python or sys.executable})
