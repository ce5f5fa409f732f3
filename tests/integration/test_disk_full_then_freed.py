"""Disk full, then freed: produces and commits fail while it is full, succeed again without a restart once
space is back, nothing acknowledged is lost, and /health (what `groupcoord health` reads) says unhealthy
while writes fail (issue 17). A real full filesystem: a small tmpfs (needs root; skipped otherwise, the
injected faults of tests/storage/test_write_failure_heals.py cover the log itself)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from groupcoord.coordinator.broker import Broker
from groupcoord.protocol.record_batch import encode_batch
from tests.support.tmpfs import small_filesystem_or_skip
from tests.support.wire import WireClient

GROUP, TOPIC = "billing", "orders"


@pytest.fixture
def small_filesystem(tmp_path: Path):
    with small_filesystem_or_skip(tmp_path / "fs", "24m", "a real full disk") as mount:
        yield mount


def produce(client: WireClient, value: bytes) -> int:
    answer = client.request(0, 9, {"transactional_id": None, "acks": -1, "timeout": 30000, "topic_data": [
        {"name": TOPIC, "partition_data": [{"index": 0, "records": encode_batch([(None, value, ())])}]}]})
    return answer.responses[0].partition_responses[0].error_code


def commit(client: WireClient, offset: int) -> int:
    answer = client.request(8, 8, {"group_id": GROUP, "generation_id_or_member_epoch": -1, "member_id": "",
                                   "group_instance_id": None, "topics": [{"name": TOPIC, "partitions": [
                                       {"partition_index": 0, "committed_offset": offset,
                                        "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
    return answer.topics[0].partitions[0].error_code


def health(port: int) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def fill(filler: Path) -> None:
    with open(filler, "ab") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass


def retry(fn, *args, seconds: float = 10.0) -> int:
    deadline = time.monotonic() + seconds
    while True:
        code = fn(*args)
        if code == 0 or time.monotonic() > deadline:
            return code
        time.sleep(0.1)


def test_disk_full_then_freed_heals_without_a_restart(small_filesystem):
    data_dir = small_filesystem / "data"
    settings = dict(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, offsets_topic_num_partitions=4,
                    log_segment_bytes=1 << 20)

    async def scenario() -> tuple[list[bytes], int]:
        produced: list[bytes] = []
        last_commit = -1
        async with Broker(**settings) as broker:
            await broker.dataplane.topics.create(TOPIC, 1)
            loop = asyncio.get_running_loop()

            def outside() -> tuple[list[bytes], int]:
                nonlocal last_commit
                with WireClient(broker.bootstrap_servers) as client:
                    for n in range(5):
                        assert produce(client, f"before-{n}".encode()) == 0
                        produced.append(f"before-{n}".encode())
                        assert commit(client, n) == 0
                        last_commit = n
                    fill(small_filesystem / "filler")
                    failed_produce = failed_commit = 0
                    for n in range(200):  # until both have met the full disk
                        value = (f"full-{n}-".encode() * 2000)
                        code = produce(client, value)
                        if code == 0:
                            produced.append(value)
                        else:
                            assert code == 56, code  # KAFKA_STORAGE_ERROR
                            failed_produce += 1
                        code = commit(client, 1000 + n)
                        if code == 0:
                            last_commit = 1000 + n
                        else:
                            assert code in (16, 14, 15), code  # NOT_COORDINATOR, LOAD_IN_PROGRESS, NOT_AVAILABLE
                            failed_commit += 1
                        if failed_produce and failed_commit:
                            break
                    assert failed_produce and failed_commit, "the full disk was met"
                    status, report = health(broker.metrics_port)
                    assert status == 503 and not report["healthy"], report
                    assert any(p["problem"] == "writes failing" for p in report["problems"]), report
                    unhealthy = subprocess.run(
                        [os.sys.executable, "-m", "groupcoord", "health", "--bootstrap-server",
                         broker.bootstrap_servers, "--metrics-port", str(broker.metrics_port)],
                        capture_output=True, text=True, timeout=60)
                    assert unhealthy.returncode == 1 and "unhealthy" in unhealthy.stdout + unhealthy.stderr

                    (small_filesystem / "filler").unlink()
                    assert retry(produce, client, b"after") == 0
                    produced.append(b"after")
                    assert retry(commit, client, 5000) == 0
                    last_commit = 5000
                    status, report = health(broker.metrics_port)
                    assert status == 200 and report["healthy"], report
                return produced, last_commit

            return await loop.run_in_executor(None, outside)

    produced, last_commit = asyncio.run(scenario())

    async def after_restart() -> tuple[list[bytes], int]:
        from groupcoord.coordinator.groups.lazy_requests import OffsetFetch
        from groupcoord.protocol.record_batch import decode_records

        async with Broker(**settings) as broker:
            log = broker.dataplane.topics.log(TOPIC, 0)
            values = []
            async for header, raw in log.batches(0):
                values.extend(r.value for r in decode_records(raw, 0, header))
            fetched = await broker.groups.fetch_offsets(OffsetFetch(GROUP, None))
            return values, fetched["topics"][0]["partitions"][0]["committed_offset"]

    values, committed = asyncio.run(after_restart())
    assert values == produced, "every acknowledged record, in order, and nothing else"
    assert committed == last_commit
