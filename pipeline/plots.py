"""Matplotlib figures for the HTML report, returned as PNG bytes.

The Agg backend is forced: reports are built on servers without a display.
"""

from __future__ import annotations

import io
from datetime import datetime, timezone

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=90)
    plt.close(figure)
    return buffer.getvalue()


def _when(epoch_ms: float) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)


def partition_load(rows: list[dict]) -> bytes:
    """Records and live keys per offsets partition: hash skew and compaction at a glance."""
    figure, axis = plt.subplots(figsize=(9, 3.5))
    partitions = [str(row["offsets_partition"]) for row in rows]
    axis.bar(partitions, [row["records"] for row in rows], label="records")
    axis.bar(partitions, [row["live_keys"] for row in rows], label="live keys")
    axis.set_xlabel("__consumer_offsets partition")
    axis.set_ylabel("count")
    axis.legend()
    return _png(figure)


def commits_over_time(series: dict[str, list[tuple[int, int]]]) -> bytes:
    """Commit records per time bucket for the busiest groups."""
    figure, axis = plt.subplots(figsize=(9, 3.5))
    for group, points in series.items():
        axis.plot([_when(t) for t, _ in points], [count for _, count in points], label=group, marker=".")
    axis.set_ylabel("offset commits per bucket")
    if series:
        axis.legend(fontsize="small", ncol=2)
    figure.autofmt_xdate()
    return _png(figure)


def rebalance_timeline(generations: list[dict]) -> bytes:
    """Each generation as a dot at its start, one row per group; dot size follows member count."""
    figure, axis = plt.subplots(figsize=(9, 3.5))
    groups = sorted({row["group"] for row in generations})
    row_of = {group: index for index, group in enumerate(groups)}
    axis.scatter(
        [_when(row["first_seen"]) for row in generations],
        [row_of[row["group"]] for row in generations],
        s=[20 + 10 * (row["member_count"] or 0) for row in generations],
        alpha=0.6,
    )
    axis.set_yticks(range(len(groups)), groups)
    axis.set_ylabel("group")
    figure.autofmt_xdate()
    return _png(figure)


def status_counts(counts: dict[str, int]) -> bytes:
    figure, axis = plt.subplots(figsize=(5, 3))
    labels = list(counts)
    axis.bar(labels, [counts[label] for label in labels], color=["tab:green", "tab:orange", "tab:red", "tab:gray"][: len(labels)])
    axis.set_ylabel("group partitions")
    return _png(figure)
