"""Waiting for a condition instead of sleeping a fixed time: fast when the machine is fast, patient
when it is loaded (CI has 2 cores shared by the broker, the clients and the test)."""

from __future__ import annotations

import time
from typing import Callable

DEFAULT_DEADLINE_S = 45.0


def wait_for(condition: Callable[[], object], seconds: float = DEFAULT_DEADLINE_S, step: float = 0.02) -> bool:
    """True as soon as `condition()` is truthy, False once `seconds` have passed without it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return False
