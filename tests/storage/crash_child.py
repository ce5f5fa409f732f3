"""Child process for the kill test: appends with fsync=always and prints each acknowledged offset.

Run as ``python -m tests.storage.crash_child <dir> <round>``; it stops by itself after a
bounded number of appends or seconds if nobody kills it first.
"""

import asyncio
import sys
import time
from pathlib import Path

from groupcoord.protocol.record_batch import encode_batch
from groupcoord.storage.config import FsyncPolicy, LogConfig

MAX_APPENDS = 20_000
MAX_SECONDS = 15.0
WRITERS = 4


async def main(directory: Path, round_no: int) -> None:
    from groupcoord.storage.log import PartitionLog

    config = LogConfig.from_topic_configs({"segment.bytes": "8192", "index.interval.bytes": "512"})
    log = await PartitionLog.open(directory, config, FsyncPolicy.ALWAYS)
    print(f"ready {log.log_end_offset}", flush=True)
    deadline = time.monotonic() + MAX_SECONDS
    counter = iter(range(MAX_APPENDS))

    async def writer() -> None:
        for i in counter:
            if time.monotonic() > deadline:
                return
            value = b"round-%d-append-%d" % (round_no, i)
            result = await log.append(encode_batch([(b"key-%d" % (i % 10), value, ())]))
            sys.stdout.write(f"{result.last_offset} {value.decode()}\n")
            sys.stdout.flush()

    await asyncio.gather(*(writer() for _ in range(WRITERS)))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
