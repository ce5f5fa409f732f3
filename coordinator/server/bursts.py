"""Log a flood of refusals as a burst: a line when it starts and a line when it ends, never one per event.

An attacker who opens connections as fast as it can, or a descriptor shortage that makes every accept
fail, would otherwise write a log line per attempt and turn the broker's log into the next resource to
run out. A burst ends when told (the condition cleared) or after a quiet spell with no new event.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable

QUIET_SECONDS = 10.0


@dataclass
class Burst:
    """A burst of one kind of refusal under way: when it began, the last event, how many so far."""
    started: float
    last: float
    events: int


class BurstLog:
    def __init__(self, logger: Any, clock: Callable[[], float] = time.monotonic, quiet_s: float = QUIET_SECONDS) -> None:
        self._log = logger
        self._clock = clock
        self._quiet_s = quiet_s
        self._bursts: dict[Hashable, Burst] = {}

    def event(self, key: Hashable, message: str, **details: Any) -> bool:
        """Count one event; log ``message`` only if it starts a burst. True when it did."""
        now = self._clock()
        burst = self._bursts.get(key)
        if burst is not None and now - burst.last <= self._quiet_s:
            burst.events += 1
            burst.last = now
            return False
        if burst is not None:
            self._summarise(key, burst)
        self._bursts[key] = Burst(now, now, 1)
        self._log.warning(message, **details)
        return True

    def end(self, key: Hashable) -> None:
        """The condition behind ``key`` has cleared: say how long it lasted and how many events it had."""
        burst = self._bursts.pop(key, None)
        if burst is not None:
            self._summarise(key, burst)

    def end_quiet(self) -> None:
        """End the bursts that have been quiet for the quiet spell (called periodically; bounds the table)."""
        now = self._clock()
        for key in [k for k, b in self._bursts.items() if now - b.last > self._quiet_s]:
            self._summarise(key, self._bursts.pop(key))

    @property
    def active(self) -> int:
        return len(self._bursts)

    def _summarise(self, key: Hashable, burst: Burst) -> None:
        what = key[0] if isinstance(key, tuple) else key
        detail = {"peer": key[1]} if isinstance(key, tuple) and len(key) > 1 else {}
        self._log.info("burst ended", burst=what, events=burst.events,
                       seconds=round(burst.last - burst.started, 3), **detail)
