"""Child process for test_many_partitions_low_ulimit: a broker at a low ``ulimit -n`` hosting many partitions.

Run as ``python -m tests.coordinator.many_partitions_child DATA_DIR PARTITIONS NOFILE``; prints one JSON line.
"""

import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path

from groupcoord.coordinator.broker import Broker
from groupcoord.protocol.record_batch import decode_records, encode_batch


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def main(data_dir: Path, partitions: int) -> dict:
    settings = dict(data_dir=data_dir, listen="127.0.0.1:0", metrics_port=-1, log_cleaner_enable=False,
                    max_broker_partitions=partitions + 100)  # the topic, "late" and __consumer_offsets
    report: dict = {}
    started = time.perf_counter()
    async with Broker(**settings) as broker:
        created = await broker.dataplane.topics.create("wide", partitions)
        report["create_error"] = int(created.error)
        for partition in range(partitions):
            log = broker.dataplane.topics.log("wide", partition)
            await log.append(encode_batch([(b"k", b"value-%d" % partition, ())]))
        report["fds_after_appends"] = open_descriptors()
        report["pool"] = broker.log_manager.files.stats().max_open
        late = await broker.dataplane.topics.create("late", 3)  # the finding: a new topic after the many
        report["late_error"] = int(late.error)
        await broker.dataplane.topics.log("late", 2).append(encode_batch([(b"k", b"late", ())]))
    report["first_run_s"] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    async with Broker(**settings) as broker:
        report["restart_s"] = round(time.perf_counter() - started, 2)
        values = []
        for partition in range(partitions):
            data = await broker.dataplane.topics.log("wide", partition).read(0, 1 << 16)
            values.extend(record.value for record in decode_records(data, 0, None) if record.value)
        report["read_back"] = sum(1 for p, v in enumerate(values) if v == b"value-%d" % p)
        report["fds_after_reads"] = open_descriptors()
    return report


if __name__ == "__main__":
    directory, count, nofile = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    print(json.dumps(asyncio.run(main(directory, count))), flush=True)
