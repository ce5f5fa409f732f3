"""How many descriptors this process holds: what the file-region tests compare before and after, so that a
region, a watched socket ``dup`` or a segment descriptor left open shows as a leak."""

from __future__ import annotations

import gc
import os


def open_fds(generation: int = 2) -> int:
    """This process's open descriptors, after collecting garbage up to ``generation`` (a closed event loop's own
    descriptors go only when it is collected). A property test that counts twice per example asks for the
    youngest generation only: a full collection late in the whole suite's run costs a few hundred ms."""
    gc.collect(generation)
    return len(os.listdir("/proc/self/fd"))
