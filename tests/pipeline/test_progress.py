"""Long jobs print their task progress, once per change, and stop printing when the job ends."""

import io
import time
from types import SimpleNamespace

from groupcoord.pipeline.progress import SparkProgress


class _Tracker:
    def __init__(self):
        self.stages = {3: SimpleNamespace(numTasks=10, numCompletedTasks=4), 4: SimpleNamespace(numTasks=2, numCompletedTasks=0)}

    def getActiveStageIds(self):
        return list(self.stages)

    def getStageInfo(self, stage_id):
        return self.stages.get(stage_id)


def _spark(tracker):
    return SimpleNamespace(sparkContext=SimpleNamespace(statusTracker=lambda: tracker))


def _wait_for(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    return predicate()


def test_progress_lines_sum_the_active_stages_and_repeat_only_on_change():
    tracker, stream = _Tracker(), io.StringIO()
    with SparkProgress(_spark(tracker), "snapshot", stream=stream, interval=0.01):
        assert _wait_for(lambda: "[snapshot] tasks 4/12" in stream.getvalue())
        tracker.stages[3].numCompletedTasks = 10
        assert _wait_for(lambda: "[snapshot] tasks 10/12" in stream.getvalue())
    lines = stream.getvalue().splitlines()
    assert lines == ["[snapshot] tasks 4/12", "[snapshot] tasks 10/12"]
    size = len(stream.getvalue())
    time.sleep(0.05)
    assert len(stream.getvalue()) == size  # the poller has stopped with the job
