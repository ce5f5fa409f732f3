"""Counting what could not be read, so no job's answer silently rests on a damaged log.

Every job prints this summary: damaged stretches (corrupt batches, torn tails), records of unknown
type (skipped, as Kafka's loader does) and malformed records of known types.
"""

from __future__ import annotations

from dataclasses import field

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from groupcoord.pipeline.schema import RecordKind
from groupcoord.protocol.frozen import frozen_dataclass

_REPORTED = [RecordKind.CORRUPT, RecordKind.TORN_TAIL, RecordKind.MALFORMED, RecordKind.UNKNOWN]


@frozen_dataclass(slots=False)
class Problem:
    kind: str
    offsets_partition: int
    segment: str
    position: int | None
    log_offset: int | None
    error: str | None


@frozen_dataclass(slots=False)
class IntegritySummary:
    records: int
    counts: dict[str, int]
    problems: list[Problem] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not any(self.counts.values())

    def lines(self, limit: int = 10) -> list[str]:
        counts = ", ".join(f"{kind.value}={self.counts.get(kind.value, 0)}" for kind in _REPORTED)
        out = [f"integrity: {self.records} rows read; {counts}"]
        for problem in self.problems[:limit]:
            out.append(
                f"  {problem.kind} in __consumer_offsets-{problem.offsets_partition}/{problem.segment}"
                f" at position {problem.position}: {problem.error}"
            )
        if len(self.problems) > limit:
            out.append(f"  ... and {len(self.problems) - limit} more")
        return out


def summarize(df: DataFrame, *, max_problems: int = 1000) -> IntegritySummary:
    """Counts per problem kind, plus the first problems in log order (bounded, for printing)."""
    kinds = [kind.value for kind in _REPORTED]
    totals = df.groupBy("kind").count().collect()
    counts = {kind: 0 for kind in kinds}
    records = 0
    for row in totals:
        records += row["count"]
        if row["kind"] in counts:
            counts[row["kind"]] = row["count"]
    problems = []
    if any(counts.values()):
        rows = (
            df.filter(F.col("kind").isin(kinds))
            .select("kind", "offsets_partition", "segment", "batch_position", "log_offset", "error")
            .orderBy("offsets_partition", "segment", "batch_position", "log_offset")
            .limit(max_problems)
            .collect()
        )
        problems = [Problem(r["kind"], r["offsets_partition"], r["segment"], r["batch_position"], r["log_offset"],
                            r["error"]) for r in rows]
    return IntegritySummary(records, counts, problems)
