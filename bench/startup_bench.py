"""Daemon start-up: exec of `python -m groupcoord serve` to its `listening on` line, on an empty data dir.

    python -m bench.startup_bench --runs 5

Prints each run and the median. Imports are most of it: `python -X importtime -m groupcoord serve ...`
shows which (start-up imports nothing that serving does not need; the admin CLI, the pipeline, the
compression codecs and kio's schemas load on first use).
"""

from __future__ import annotations

import argparse
import statistics

from .servers import groupcoord


def measure(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        with groupcoord(None, fsync="batch") as (_, seconds):
            times.append(seconds * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    ns = parser.parse_args()
    times = measure(max(1, min(ns.runs, 50)))
    print("start-up, exec to 'listening on' (ms): " + ", ".join(f"{t:.0f}" for t in times))
    print(f"median {statistics.median(times):.0f} ms over {len(times)} runs")


if __name__ == "__main__":
    main()
