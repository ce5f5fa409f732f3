"""`groupcoord log ...`: offline maintenance of a stopped broker's data directory.

    groupcoord log verify  --data-dir ./data                  # open every partition (recovery checks every batch)
    groupcoord log compact --data-dir ./data [--topic T] [--roll]

Both refuse a directory a running broker holds (its `.lock`). `compact --roll` first rolls each active
segment so that everything written so far can be compacted (the cleaner never touches an active segment).
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

from .data_dir_lock import DataDirInUse, DataDirLock
from .logging import configure_logging


async def _verify(data_dir: Path) -> dict:
    manager = LogManager(data_dir, FsyncPolicy.ALWAYS, LogConfig())
    try:
        logs = await manager.open_existing()
        return {
            "partitions": len(logs),
            "records_end_offsets": {f"{t}-{p}": log.log_end_offset for (t, p), log in sorted(logs.items())},
        }
    finally:
        await manager.close()


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
    try:
        with DataDirLock(data_dir):
            if ns.log_command == "verify":
                result = asyncio.run(_verify(data_dir))
            else:
                result = asyncio.run(_compact(data_dir, ns.topic, ns.roll))
    except (DataDirInUse, CorruptLogError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result, indent=2, sort_keys=True))
    return 0


def add_log_commands(subparsers: argparse._SubParsersAction) -> None:
    log = subparsers.add_parser("log", help="offline maintenance of a stopped broker's data directory",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = log.add_subparsers(dest="log_command", required=True)
    verify = sub.add_parser("verify", help="open every partition; recovery validates every batch")
    compact = sub.add_parser("compact", help="compact every cleanup.policy=compact partition now")
    compact.add_argument("--topic", default=None, help="only this topic (e.g. __consumer_offsets)")
    compact.add_argument("--roll", action="store_true", help="roll active segments first so all data is cleanable")
    for p in (verify, compact):
        p.add_argument("--data-dir", required=True)
        p.set_defaults(func=_run)
