"""Which CPython the daemon under measurement runs on, and how fast that build is.

Kafka is measured with production JVM flags (bench/kafka_server.py); the daemon's counterpart is a production
build of CPython. Builds of the same version differ by a third or more in speed: the distributions' and the official
``python`` images' builds are compiled with profile-guided optimisation and link-time optimisation (Debian's
``python3.11``; ``python:3.11-slim``, the base of docker/Dockerfile), while pyenv's default build (no
``--enable-optimizations``) is not. bench.compare therefore takes the daemon's interpreter as an option
(``--groupcoord-python``), checks that it runs this tree's groupcoord, and prints beside the figures how fast
the interpreter ran a fixed reference loop, so that a figure always says which build it belongs to.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

TREE = Path(__file__).resolve().parent.parent

# A fixed mix of what the daemon's hot paths do (a data class made and read, a struct packed, a dict written,
# int arithmetic): milliseconds for 300,000 iterations, the best of five, on the given core.
_REFERENCE_LOOP = """
import dataclasses, os, struct, sys, time
if len(sys.argv) > 1 and hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, [int(sys.argv[1])])
@dataclasses.dataclass
class Pair:
    a: int
    b: int
def loop(n):
    total, pack, seen = 0, struct.Struct(">iq").pack, {}
    for i in range(n):
        pair = Pair(i, i + 1)
        total += pair.a + pair.b
        seen[i & 1023] = pack(i, total & 0xFFFF)
    return total
times = []
for _ in range(5):
    started = time.perf_counter()
    loop(300_000)
    times.append(time.perf_counter() - started)
print(min(times) * 1000)
"""

# Where the daemon's code comes from: groupcoord.coordinator (the subpackages are mapped in by the editable
# install, bench/../pyproject.toml), asked from a neutral directory so the harness's own tree on sys.path cannot answer.
_WHERE = ("import importlib.util, os, platform, sys, sysconfig; "
          "spec = importlib.util.find_spec('groupcoord.coordinator'); "
          "print(os.path.dirname(os.path.dirname(os.path.abspath(spec.origin)))); "
          "print(platform.python_version()); print(getattr(sys, '_base_executable', sys.executable)); "
          "print(sysconfig.get_config_var('CONFIG_ARGS') or '')")


@dataclass(frozen=True)
class Interpreter:
    """An interpreter the daemon can run on: its path, version, the build its virtualenv was made from, configure
    flags, the tree its groupcoord's code comes from, and the reference loop's time."""
    python: str
    version: str
    base_executable: str  # the interpreter the virtualenv was made from (e.g. /usr/bin/python3.11)
    configure_flags: str
    code_from: str
    reference_loop_ms: float

    def label(self) -> str:
        return (f"{self.python} (Python {self.version}; reference loop {self.reference_loop_ms:.0f} ms, "
                f"lower is faster)")

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def reference_loop_ms(python: str, core: int | None = None) -> float:
    """Milliseconds ``python`` takes for the reference loop (best of five), pinned to ``core`` when given."""
    args = [python, "-c", _REFERENCE_LOOP] + ([str(core)] if core is not None else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"{python}: the reference loop failed: {done.stderr[-500:]}")
    return float(done.stdout.strip())


def daemon_interpreter(python: str, core: int | None = None, *, this_tree: bool = True) -> Interpreter:
    """``python``, described; with ``this_tree``, checked to import this tree's groupcoord (a virtualenv with it
    installed editable, as ``make bench-compare BENCH_PYTHON=...`` makes): a figure measured on another tree's code
    would be mislabelled. (The harness's own interpreter is not held to it: it runs whatever groupcoord is
    installed beside the benches, as it always has.)"""
    if os.sep in python:
        python = os.path.abspath(python)  # (not resolved: a virtualenv's python is a link to its base interpreter)
    try:
        done = subprocess.run([python, "-c", _WHERE], capture_output=True, text=True, timeout=60,
                              cwd=tempfile.gettempdir())
    except OSError as exc:
        raise SystemExit(f"--groupcoord-python {python}: cannot run it ({exc})") from None
    if done.returncode != 0:
        raise SystemExit(f"--groupcoord-python {python}: cannot import groupcoord: {done.stderr[-500:]}")
    tree, version, base, flags = (done.stdout.splitlines() + ["", "", "", ""])[:4]
    if this_tree and Path(tree).resolve() != TREE:
        raise SystemExit(f"--groupcoord-python {python} runs the groupcoord of {tree}, not of this tree ({TREE}): "
                         f"install this tree into its virtualenv (pip install -e {TREE})")
    return Interpreter(python=python, version=version, base_executable=base, configure_flags=flags, code_from=tree,
                       reference_loop_ms=reference_loop_ms(python, core))
