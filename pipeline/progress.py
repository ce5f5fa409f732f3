"""Progress lines for long jobs, read from Spark's status tracker.

The console progress bar is off (it garbles captured output), so a background thread polls the
active stages and prints `tasks done/total` when it changes, at most once per interval. The thread
is bounded by the job: it stops when the `with` block ends.
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO


class SparkProgress:
    def __init__(self, spark, label: str, *, stream: TextIO | None = None, interval: float = 2.0) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._label = label
        self._stream = stream or sys.stderr
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name=f"progress-{label}", daemon=True)
        self._last = ""

    def __enter__(self) -> "SparkProgress":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=self._interval + 1.0)

    def _line(self) -> str:
        done = total = 0
        for stage_id in self._tracker.getActiveStageIds():
            info = self._tracker.getStageInfo(stage_id)
            if info is not None:
                done += info.numCompletedTasks
                total += info.numTasks
        return f"[{self._label}] tasks {done}/{total}" if total else ""

    def _poll(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                line = self._line()
            except Exception:  # the tracker can vanish while the session shuts down; progress is best effort
                return
            if line and line != self._last:
                print(line, file=self._stream, flush=True)
                self._last = line
