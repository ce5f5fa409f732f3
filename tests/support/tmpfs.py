"""A small real filesystem for the full-disk and read-only tests: a tmpfs of a given size, mounted for the
test and lazily unmounted after it. Mounting needs root (CAP_SYS_ADMIN); without it the test is skipped with
that reason, since injected faults cannot show what a real ENOSPC or EROFS does."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def mount_tmpfs(path: Path, size: str) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@contextmanager
def small_filesystem_or_skip(path: Path, size: str, why: str) -> Iterator[Path]:
    """``path`` as a tmpfs of ``size`` for the duration; ``pytest.skip`` with ``why`` if it cannot be mounted."""
    if not mount_tmpfs(path, size):
        pytest.skip(f"{why} needs a tmpfs mount (root and CAP_SYS_ADMIN)")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
