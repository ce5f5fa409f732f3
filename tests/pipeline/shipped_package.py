"""groupcoord packed as executors receive it, and a Python for them that does not have it installed.

A cluster's workers usually lack groupcoord: the job ships it (`--py-files`, README's cluster recipe). On
loopback the workers would otherwise import it from this venv, so the executors' Python workers run
`python -S` (the venv's packages on PYTHONPATH, none of its .pth files: no editable install) and must import
the shipped archive; the driver's own Python workers (which plan the data source's reads, on the host where
the user runs the command and groupcoord is installed) run the venv's Python unchanged. A worker launches
executors with SPARK_EXECUTOR_DIRS set, which tells the two apart."""

from __future__ import annotations

import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# pyproject's package-dir: groupcoord.<name> lives in the repository's top-level <name>/
MAPPED = ("coordinator", "storage", "protocol", "pipeline")


def build_wheel_archive(target_dir: Path) -> Path:
    """The wheel's layout (groupcoord/…, pure Python) as a .whl archive; `pip wheel --no-deps .` gives the same
    package tree, but needs a build environment from PyPI."""
    target = target_dir / "groupcoord-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for source in (ROOT / "groupcoord").glob("*.py"):
            archive.write(source, f"groupcoord/{source.name}")
        for name in MAPPED:
            for source in sorted((ROOT / name).rglob("*.py")):
                if "__pycache__" not in source.parts:
                    archive.write(source, f"groupcoord/{name}/{source.relative_to(ROOT / name)}")
    return target


def python_without_groupcoord(target_dir: Path, python: str) -> Path:
    """A launcher: in an executor, `python -S` with the interpreter's site-packages on PYTHONPATH."""
    import sysconfig

    site = sysconfig.get_paths()["purelib"]
    launcher = target_dir / "python-without-groupcoord"
    launcher.write_text(
        "#!/bin/sh\n"
        f'[ -z "$SPARK_EXECUTOR_DIRS" ] && exec {python} "$@"\n'
        f'PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site}" exec {python} -S "$@"\n')
    launcher.chmod(0o755)
    return launcher
