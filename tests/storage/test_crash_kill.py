"""A real process appending with fsync=always is SIGKILLed at random moments; nothing acknowledged is lost."""

import asyncio
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import PartitionLog
from tests.storage.conftest import all_records

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 5


def run_child_and_kill(directory: Path, round_no: int, kill_after: float) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = subprocess.Popen([sys.executable, "-m", "tests.storage.crash_child", str(directory), str(round_no)],
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    ready = threading.Event()
    first_ack = threading.Event()

    def read() -> None:
        for line in child.stdout:
            if line.startswith("ready"):
                ready.set()
            else:
                lines.append(line.strip())
                first_ack.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(30), f"child never opened the log (exit status {child.poll()})"
        assert first_ack.wait(30), "child never acknowledged an append"
        time.sleep(kill_after)  # the kill lands at a random point of the append stream
        child.send_signal(signal.SIGKILL)
    finally:
        child.kill()
        child.wait(10)
        reader.join(10)
        child.stderr.close()
    return lines


async def recovered_values(directory: Path) -> tuple[int, dict[int, bytes]]:
    log = await PartitionLog.open(directory, LogConfig.from_topic_configs({"segment.bytes": "8192"}),
                                  FsyncPolicy.ALWAYS)
    try:
        records = await all_records(log)
        assert [r.offset for r in records] == list(range(log.log_end_offset)), "gap in the recovered log"
        return log.log_end_offset, {r.offset: r.value for r in records}
    finally:
        await log.close()


def test_acknowledged_appends_survive_sigkill(tmp_path):
    directory = tmp_path / "crashy-0"
    rng = random.Random(20240521)
    acknowledged: dict[int, bytes] = {}
    for round_no in range(ROUNDS):
        for line in run_child_and_kill(directory, round_no, kill_after=rng.uniform(0.2, 0.8)):
            offset, value = line.split(" ", 1)
            acknowledged[int(offset)] = value.encode()
        end, recovered = asyncio.run(recovered_values(directory))
        assert acknowledged, "the child acknowledged nothing"
        missing = {o: v for o, v in acknowledged.items() if recovered.get(o) != v}
        assert not missing, f"round {round_no}: {len(missing)} acknowledged records lost or changed"
        assert end > max(acknowledged)
