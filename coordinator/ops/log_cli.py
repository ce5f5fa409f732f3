"""`groupcoord log ...`: offline maintenance of a stopped broker's data directory.

    groupcoord log verify  --data-dir ./data                  # read every batch, check its CRC-32C; writes nothing
    groupcoord log compact --data-dir ./data [--topic T] [--roll]

Both refuse a directory a running broker holds (its `.lock`). `verify` exits 1 and names the file, byte
position and base offset of every corrupt batch (a torn tail left by an unclean stop is reported but is not
corruption: the next start cuts it). `compact --roll` first rolls each active segment so that everything
written so far can be compacted (the cleaner never touches an active segment).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

from groupcoord.storage.config import FsyncPolicy, LogConfig
from groupcoord.storage.errors import CorruptLogError
from groupcoord.storage.log_manager import LogManager
from groupcoord.storage.verify import verify_data_dir

from .data_dir_lock import DataDirInUse, DataDirLock
from .logging import configure_logging


def _verify(data_dir: Path) -> tuple[dict, list[str]]:
    """The JSON summary and one line per corrupt batch."""
    report = verify_data_dir(data_dir)
    summary = {
        "partitions": len(report.partitions),
        "bytes_checked": report.bytes_checked,
        "records_end_offsets": {p.name: p.end_offset for p in report.partitions},
        "damage": [d.describe() for p in report.partitions for d in p.damage],
    }
    return summary, [d.describe() for d in report.corrupt]


async def _compact(data_dir: Path, topic: str | None, roll: bool) -> dict:
    manager = LogManager(data_dir, FsyncPolicy.ALWAYS, LogConfig())
    try:
        logs = await manager.open_existing()
        if roll:
            for (t, _), log in logs.items():
                if (topic is None or t == topic) and log.config.compact:
                    await log.roll()
        return asdict(await manager.clean_now(topic))
    finally:
        await manager.close()


def _run(ns: argparse.Namespace) -> int:
    configure_logging("info")  # recovery and compaction summaries go to stderr; stdout is the JSON result
    data_dir = Path(ns.data_dir)
    if not data_dir.is_dir():
        print(f"Error: {data_dir} is not a directory", file=sys.stderr)
        return 1
    corrupt: list[str] = []
    try:
        with DataDirLock(data_dir):
            if ns.log_command == "verify":
                result, corrupt = _verify(data_dir)
            else:
                result = asyncio.run(_compact(data_dir, ns.topic, ns.roll))
    except (DataDirInUse, CorruptLogError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, sort_keys=True))
    for line in corrupt:
        print(f"Error: {line}", file=sys.stderr)
    return 1 if corrupt else 0


def add_log_commands(subparsers: argparse._SubParsersAction) -> None:
    log = subparsers.add_parser("log", help="offline maintenance of a stopped broker's data directory",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = log.add_subparsers(dest="log_command", required=True)
    verify = sub.add_parser("verify", help="check every batch's CRC-32C without changing anything")
    compact = sub.add_parser("compact", help="compact every cleanup.policy=compact partition now")
    compact.add_argument("--topic", default=None, help="only this topic (e.g. __consumer_offsets)")
    compact.add_argument("--roll", action="store_true", help="roll active segments first so all data is cleanable")
    for p in (verify, compact):
        p.add_argument("--data-dir", required=True)
        p.set_defaults(func=_run)
