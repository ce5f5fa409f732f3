"""Storage engine figures, measured in one bounded run (< 60 s) on this machine:

- append throughput with 100-byte records for each fsync policy (always / batch / never),
  1 and 16 concurrent appenders, 10 records per batch (concurrent appends share one
  executor hop per drained queue and, under BATCH, one fsync);
- file I/O off the loop: aiofiles versus a dedicated single-thread executor, for plain
  writes and for write+fsync (the evidence behind the storage engine's choice of an
  executor; aiofiles also cannot pwrite at a reserved position, which coalescing needs);
- record batch decode speed (the Fetch/replay hot path);
- recovery: opening a log after an unclean shutdown (every batch CRC-checked) and after a
  clean one, in MB/s;
- compaction throughput in MB/s of segment read.

    python -m bench.storage_bench [--seconds 2.5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiofiles

from groupcoord.protocol.record_batch import decode_records, encode_batch
from groupcoord.storage.cleaner import LogCleaner
from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.log import CLEAN_SHUTDOWN_MARKER, PartitionLog

RECORD = b"x" * 100
RECORDS_PER_BATCH = 10
APPENDERS = 16
MB = 1024 * 1024


def _batch(i: int, keys: int | None = None) -> bytes:
    key = (b"key-%d" % (i % keys)) if keys else None
    return encode_batch([(key, RECORD, ())] * RECORDS_PER_BATCH)


async def bench_append(root: Path, policy: FsyncPolicy, seconds: float, max_appends: int, appenders: int) -> None:
    config = LogConfig.from_topic_configs({"segment.bytes": str(64 * MB)})
    log = await PartitionLog.open(root / f"append-{policy.value}-{appenders}-0", config, policy)
    payload = _batch(0)
    appended = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()

    async def appender() -> None:
        nonlocal appended
        while time.perf_counter() < deadline and appended < max_appends:
            appended += 1
            await log.append(payload)

    await asyncio.gather(*(appender() for _ in range(appenders)))
    elapsed = time.perf_counter() - started
    await log.close()
    records = appended * RECORDS_PER_BATCH
    print(f"append fsync={policy.value:<6} {records / elapsed:>10,.0f} records/s "
          f"{appended * len(payload) / elapsed / MB:>7.1f} MB/s  ({appended} appends of "
          f"{RECORDS_PER_BATCH}x100 B, {appenders:>2} concurrent, {elapsed:.1f} s)")


async def _aiofiles_rate(path: Path, payload: bytes, sync: bool, seconds: float) -> float:
    loop = asyncio.get_running_loop()
    count = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    async with aiofiles.open(path, "ab") as handle:
        while time.perf_counter() < deadline:
            await handle.write(payload)
            if sync:
                await handle.flush()
                await loop.run_in_executor(None, os.fsync, handle.fileno())
            count += 1
    return count / (time.perf_counter() - started)


async def _executor_rate(path: Path, payload: bytes, sync: bool, seconds: float) -> float:
    loop = asyncio.get_running_loop()
    executor = ThreadPoolExecutor(max_workers=1)
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    position = os.fstat(fd).st_size

    def write_job(at: int) -> None:
        os.pwrite(fd, payload, at)
        if sync:
            os.fsync(fd)

    count = 0
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < deadline:
        await loop.run_in_executor(executor, write_job, position)
        position += len(payload)
        count += 1
    rate = count / (time.perf_counter() - started)
    os.close(fd)
    executor.shutdown()
    return rate


async def bench_file_io(root: Path, seconds: float, trials: int = 5) -> None:
    """Alternate short trials of both methods and report medians, so a busy machine hurts both alike."""
    payload = _batch(0)
    for sync in (False, True):
        label = "write+fsync" if sync else "write      "
        aio, exe = [], []
        for trial in range(trials):
            slot = seconds / (2 * trials)
            aio.append(await _aiofiles_rate(root / f"aiofiles-{sync}.bin", payload, sync, slot))
            exe.append(await _executor_rate(root / f"executor-{sync}.bin", payload, sync, slot))
        aio_rate, exec_rate = statistics.median(aio), statistics.median(exe)
        print(f"file io {label}  aiofiles {aio_rate:>9,.0f} ops/s   single-thread executor "
              f"{exec_rate:>9,.0f} ops/s   (executor/aiofiles x{exec_rate / aio_rate:.2f}, "
              f"median of {trials} alternating trials)")


def bench_decode(seconds: float, trials: int = 5) -> None:
    batch = encode_batch([(b"key-%d" % i, RECORD, ()) for i in range(100)])
    rates = []
    for _ in range(trials):
        decoded = 0
        deadline = time.perf_counter() + seconds / trials
        started = time.perf_counter()
        while time.perf_counter() < deadline:
            decoded += len(decode_records(batch))
        rates.append(decoded / (time.perf_counter() - started))
    print(f"decode_records (100 B records, 100 per batch, uncompressed) {max(rates):>10,.0f} records/s "
          f"(best of {trials})")


async def build_log(directory: Path, config: LogConfig, target_bytes: int, keys: int | None) -> int:
    log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
    blobs = [b"".join(_batch(j, keys) for j in range(k * 50, (k + 1) * 50)) for k in range(100)]
    i = 0
    while log.size_bytes < target_bytes:
        await log.append(blobs[i % len(blobs)])
        i += 1
    await log.roll()
    size = log.size_bytes
    await log.close()
    return size


async def bench_recovery(root: Path, target_bytes: int) -> None:
    directory = root / "recovery-0"
    config = LogConfig.from_topic_configs({"segment.bytes": str(16 * MB)})
    size = await build_log(directory, config, target_bytes, keys=None)
    for clean in (False, True):
        if not clean:
            (directory / CLEAN_SHUTDOWN_MARKER).unlink()
            for index in directory.glob("*index"):
                index.unlink()
        started = time.perf_counter()
        log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
        elapsed = time.perf_counter() - started
        await log.close()
        kind = "clean  " if clean else "unclean"
        print(f"recovery {kind} open of {size / MB:.0f} MB in {len(log.segments)} segments: {elapsed:.2f} s "
              f"= {size / elapsed / MB:,.0f} MB/s")


async def bench_compaction(root: Path, target_bytes: int) -> None:
    directory = root / "compact-0"
    config = LogConfig.from_topic_configs({"segment.bytes": str(8 * MB), "cleanup.policy": "compact"})
    await build_log(directory, config, target_bytes, keys=5000)
    log = await PartitionLog.open(directory, config, FsyncPolicy.NEVER)
    stats = await LogCleaner().clean(log)
    await log.close()
    print(f"compaction of {stats.bytes_read / MB:.0f} MB ({stats.records_read:,} records, 5000 keys) "
          f"-> {stats.bytes_written / MB:.1f} MB in {stats.seconds:.2f} s = "
          f"{stats.bytes_read / stats.seconds / MB:.1f} MB/s")


async def main(seconds: float, size_mb: int) -> None:
    with tempfile.TemporaryDirectory(prefix="storage-bench-") as tmp:
        root = Path(tmp)
        for policy in (FsyncPolicy.NEVER, FsyncPolicy.BATCH, FsyncPolicy.ALWAYS):
            for appenders in (1, APPENDERS):
                await bench_append(root, policy, seconds, max_appends=200_000, appenders=appenders)
        await bench_file_io(root, seconds)
        bench_decode(seconds / 2)
        await bench_recovery(root, size_mb * MB)
        await bench_compaction(root, size_mb // 2 * MB)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per append/file-io figure")
    parser.add_argument("--size-mb", type=int, default=64, help="log size for the recovery figure")
    args = parser.parse_args()
    started = time.perf_counter()
    asyncio.run(main(args.seconds, args.size_mb))
    print(f"total {time.perf_counter() - started:.1f} s")
