"""bench.consumer_group_bench: its members time heartbeats as the Java client does, and the bench runs end
to end against its own daemon with the timeline it prints."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

from bench.consumer_group_bench import _Member

ROOT = Path(__file__).resolve().parents[2]
TOPIC = uuid.uuid4()


class SlowAnswers:
    """Answers each heartbeat after the delay its turn says; records when each was sent (loop time)."""

    def __init__(self, answers: list[tuple[float, SimpleNamespace]]) -> None:
        self.answers, self.sent = answers, []

    def send(self, _key: int, _version: int, _body: dict) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        self.sent.append(loop.time())
        delay, answer = self.answers[min(len(self.sent), len(self.answers)) - 1]
        future = loop.create_future()
        loop.call_later(delay, future.set_result, answer)
        return future


def answer(epoch: int, partitions: list[int] | None, interval_ms: int = 200) -> SimpleNamespace:
    assignment = None if partitions is None else SimpleNamespace(
        topic_partitions=[SimpleNamespace(topic_id=TOPIC, partitions=partitions)])
    return SimpleNamespace(error_code=0, error_message=None, member_epoch=epoch,
                           heartbeat_interval=timedelta(milliseconds=interval_ms), assignment=assignment)


def _first_sent(answers: list[tuple[float, SimpleNamespace]], java_epoch_rule: bool = False, count: int = 3,
                **member: float) -> list[float]:
    """When a member sent its first ``count`` heartbeats, answered as ``answers`` say."""
    async def scenario() -> list[float]:
        conn = SlowAnswers(answers)
        m = _Member(conn, "g", "t", asyncio.Event(), java_epoch_rule, **member)  # type: ignore[arg-type]
        task = asyncio.create_task(m.run())
        while len(conn.sent) < count:
            await asyncio.sleep(0.005)
        m.stop()
        await task
        return conn.sent[:count]

    return asyncio.run(scenario())


def test_the_heartbeat_after_a_late_acknowledgement_counts_from_when_it_was_sent():
    # The join brings partitions (acknowledged at once); the acknowledgement is answered 150 ms late; the
    # next heartbeat is due 200 ms after the acknowledgement was *sent*, not 200 ms after its answer.
    join, ack, regular = _first_sent([(0.01, answer(1, [0, 1])), (0.15, answer(1, None)),
                                      (0.01, answer(1, None))])
    assert ack - join < 0.05, "the new assignment is acknowledged at once"
    assert 0.19 <= regular - ack < 0.3, f"next heartbeat {regular - ack:.3f} s after the acknowledgement was sent"


def _sent_after_an_epoch_bump(java_epoch_rule: bool) -> list[float]:
    """Join with partitions (acknowledged at once), then an answer that bumps the epoch and brings nothing."""
    return _first_sent([(0.01, answer(1, [0])), (0.01, answer(2, None)), (0.01, answer(2, None))],
                       java_epoch_rule)


def test_an_epoch_bump_alone_waits_the_interval_under_the_java_rule():
    _join, ack, after_bump = _sent_after_an_epoch_bump(java_epoch_rule=True)
    assert 0.19 <= after_bump - ack < 0.3, f"{after_bump - ack:.3f} s: the Java client waits its interval"


def test_an_epoch_bump_alone_is_asked_about_at_once_by_default():
    _join, ack, after_bump = _sent_after_an_epoch_bump(java_epoch_rule=False)
    assert after_bump - ack < 0.05, f"{after_bump - ack:.3f} s: the bench's default asks again at once"


def test_a_short_interval_from_the_broker_is_held_to_the_retry_backoff_after_the_answer():
    # As the Java client: the answer's 20 ms interval resets the timer from the answer, but canSendRequest
    # also waits retry.backoff.ms (100 ms +-20 %) after it; 300 ms without the backoff shows it is the backoff.
    answers = [(0.01, answer(1, [0], interval_ms=1000)), (0.01, answer(2, None, interval_ms=20)),
               (0.01, answer(2, None, interval_ms=20)), (0.01, answer(2, None, interval_ms=20))]
    _join, ack, first, second = _first_sent(answers, java_epoch_rule=True, count=4)
    assert 0.08 <= first - ack < 0.2, f"{first - ack:.3f} s after the acknowledgement (answered after 10 ms)"
    assert 0.08 <= second - first < 0.2, f"{second - first:.3f} s"
    _join, ack, first, second = _first_sent(answers, java_epoch_rule=True, count=4, retry_backoff_s=0)
    assert 0.015 <= first - ack < 0.08 and 0.015 <= second - first < 0.08, (first - ack, second - first)


def test_a_heartbeat_sent_at_once_is_not_held_by_the_retry_backoff():
    # A new assignment is acknowledged at once (the Java client's ACKNOWLEDGING heartbeats without canSendRequest).
    join, ack, _ = _first_sent([(0.01, answer(1, [0, 1])), (0.01, answer(1, None)), (0.01, answer(1, None))],
                               retry_backoff_s=1.0)
    assert ack - join < 0.05


def test_the_bench_reconciles_a_small_group_and_prints_its_timeline():
    done = subprocess.run([sys.executable, "-m", "bench.consumer_group_bench", "--members", "20", "--partitions",
                           "20", "--timeline"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "20 members, 20 partitions: reconciled" in done.stdout
    assert "joins answered:" in done.stdout and "reconciled declared at" in done.stdout, done.stdout
