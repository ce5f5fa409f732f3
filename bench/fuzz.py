"""`make fuzz`: fuzzed frames over every API the daemon serves, until the frame budget (default
1,000,000) or the time limit is spent, then a report: frames sent, frames/s, crashes, hangs, the probe
client's worst answer latency, and the daemon's RSS at start, after warm-up and at the end.

The daemon is a real `groupcoord serve` child process (uvloop, the native kio reader, cramjam), with
auto-creation off and one topic `t`, so fuzzed Produce and Fetch reach real logs while a long run's
state stays bounded. Exit status 1 when the daemon crashed, a connection hung, the probe failed, or
RSS grew more than 20 % after warm-up.

    python -m bench.fuzz [--frames 1000000] [--seed 17] [--workers 32] [--time-limit-s 3600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from groupcoord.coordinator.apis.registry import APIS
from tests.support.daemon import Daemon
from tests.support.fuzz_driver import FUZZ_PARTITION_CAP, FuzzRun, served_targets, warm_up_broker, warm_up_generators
from tests.support.wire import WireClient

RSS_GROWTH_LIMIT = 0.20


def _prepare(daemon: Daemon) -> list[tuple[int, int]]:
    with WireClient(daemon.bootstrap_servers) as client:
        served = client.request(18, 3, {"client_software_name": "fuzz", "client_software_version": "1"}).api_keys
        client.request(19, 5, {"topics": [{"name": "t", "num_partitions": 1, "replication_factor": 1,
                                           "assignments": [], "configs": []}],
                               "timeout": 30000, "validate_only": False})
    return served_targets(served)


def _events(lines: list[str], top: int = 10) -> list[tuple[str, int]]:
    """The daemon's JSON log lines tallied by level and event, most frequent first."""
    tally: Counter[str] = Counter()
    for line in lines:
        if line.startswith("{"):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            reason = f" ({entry['reason']})" if "reason" in entry else ""
            tally[f"{entry.get('level', '?')}: {entry.get('event', '?')}{reason}"] += 1
    return tally.most_common(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--workers", type=int, default=32)
    parser.add_argument("--time-limit-s", type=float, default=3600.0)
    parser.add_argument("--progress-every", type=int, default=50_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="groupcoord-fuzz-") as tmp:
        daemon = Daemon(Path(tmp) / "data", auto_create_topics_enable="false", fsync="never",
                    max_broker_partitions=FUZZ_PARTITION_CAP).start()
        try:
            targets = _prepare(daemon)
            apis = sorted({key for key, _ in targets})
            registered = {module.API.key for module in APIS}
            if registered - set(apis):
                print(f"not advertised, so not fuzzed: {sorted(registered - set(apis))}", flush=True)
            print(f"fuzzing {len(targets)} (api, version) pairs of {len(apis)} APIs, {args.frames:,} frames, "
                  f"seed {args.seed}, {args.workers} workers, time limit {args.time_limit_s:.0f} s", flush=True)
            warm_up_generators(targets)
            asyncio.run(warm_up_broker("127.0.0.1", daemon.port, targets))
            run = FuzzRun("127.0.0.1", daemon.port, targets, args.frames, args.seed, workers=args.workers,
                          time_limit_s=args.time_limit_s, pid=daemon.proc.pid,
                          warmup_frames=min(20_000, args.frames // 10), progress_every=args.progress_every)
            report = asyncio.run(run.run())
        finally:
            alive = daemon.proc.poll() is None
            daemon.kill()
        print(report.summary())
        if report.slow_probes:
            print("probe answers slower than 100 ms (s into the run, latency s): "
                  + ", ".join(f"{at}: {lat}" for at, lat in report.slow_probes))
        for sample in report.hang_samples:
            print(f"hung on: {sample}")
        print("daemon log lines by event: " + ", ".join(f"{event} x{n:,}" for event, n in _events(daemon.output)))
        if not alive:
            print("daemon output (last 30 lines):\n" + "\n".join(daemon.output[-30:]))
        unfuzzed = sorted({module.API.key for module in APIS} - set(report.mutated_by_api))
        if unfuzzed:
            print(f"APIs without a mutated frame: {unfuzzed}")
        failed = (unfuzzed or report.crashed or not alive or report.hangs or report.probe_failures
                  or report.rss_growth > RSS_GROWTH_LIMIT)
        print("FAIL" if failed else "OK")
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
