"""The side-by-side table `python -m bench.compare` prints, and the JSON it keeps under bench/results/.

One line per figure: groupcoord's median (min–max) over the runs, Kafka's, and groupcoord ÷ Kafka of the
medians, with the unit and whether higher or lower is better, so the ratio reads without a legend.
Figures only: nothing here decides pass or fail.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .compare_figures import Figure, Sizes
from .kafka_server import DEFAULTS_THAT_DIFFER, SETTINGS_VS_DEFAULTS

GROUPCOORD, KAFKA, CEILING = "groupcoord", "kafka", "ceiling"


def target_id(broker: str, fsync: str | None = None) -> str:
    return f"{broker}-{fsync}" if fsync else broker


@dataclass
class FigureResult:
    """Every run's values per target ("groupcoord-batch", "groupcoord-never", "kafka", "ceiling"), and the
    errors of runs that failed (a failed run is reported, not retried, and does not stop the others)."""
    name: str
    samples: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)

    def add(self, target: str, values: dict[str, float]) -> None:
        self.samples.setdefault(target, []).append(values)

    def fail(self, target: str, error: str) -> None:
        self.errors.setdefault(target, []).append(error)

    def values(self, target: str, key: str) -> list[float]:
        return [s[key] for s in self.samples.get(target, []) if key in s]


def _number(value: float) -> str:
    if value != value:  # NaN
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def summary(values: list[float]) -> str:
    """'median (min–max)', or the one value of a single run."""
    if not values:
        return "-"
    median = statistics.median(values)
    if len(values) == 1:
        return _number(median)
    return f"{_number(median)} ({_number(min(values))}-{_number(max(values))})"


def _ratio(ours: list[float], theirs: list[float]) -> str:
    if not ours or not theirs or statistics.median(theirs) == 0:
        return "-"
    return f"{statistics.median(ours) / statistics.median(theirs):.2f}"


def table_rows(figures: list[Figure], results: dict[str, FigureResult], sizes: Sizes) -> list[dict[str, str]]:
    rows = []
    for figure in figures:
        result = results[figure.name]
        for row in figure.rows(sizes):
            ours = result.values(target_id(GROUPCOORD, row.fsync), row.key)
            theirs = result.values(KAFKA, row.key)
            rows.append({"figure": f"{row.label} ({row.unit}, {'higher' if row.higher_is_better else 'lower'} better)",
                         "groupcoord": summary(ours), "kafka": summary(theirs), "ratio": _ratio(ours, theirs),
                         "groupcoord_values": ours, "kafka_values": theirs})
    return rows


def render(figures: list[Figure], results: dict[str, FigureResult], sizes: Sizes, kafka_label: str) -> str:
    rows = table_rows(figures, results, sizes)
    header = {"figure": "figure", "groupcoord": "groupcoord", "kafka": kafka_label, "ratio": "groupcoord/kafka"}
    widths = {k: max(len(header[k]), *(len(r[k]) for r in rows)) if rows else len(header[k]) for k in header}
    lines = ["  ".join(header[k].ljust(widths[k]) for k in header),
             "  ".join("-" * widths[k] for k in header)]
    lines += ["  ".join(r[k].ljust(widths[k]) if k == "figure" else r[k].rjust(widths[k]) for k in header) for r in rows]
    ceilings = [v for r in results.values() for v in r.values(CEILING, "ceiling")]
    if ceilings:
        lines.append(f"bare uvloop ceiling (bench/bare_server.py), 64 conns x 8 in flight, same runs: "
                     f"{summary(ceilings)} req/s")
    for result in results.values():
        for target, errors in result.errors.items():
            for error in errors:
                lines.append(f"FAILED {result.name} on {target}: {error}")
    return "\n".join(lines)


def settings_note() -> str:
    lines = ["Settings that differ from Kafka's defaults (groupcoord's defaults for these are Kafka's):"]
    for s in SETTINGS_VS_DEFAULTS:
        scope = "both brokers" if s.applies_to == "both" else "Kafka only"
        lines.append(f"  {s.name}={s.value} (default {s.kafka_default}; {scope}): {s.why}")
    lines.append("Left at each broker's own default:")
    lines += [f"  {d}" for d in DEFAULTS_THAT_DIFFER]
    return "\n".join(lines)


def write_json(path: Path, meta: dict, figures: list[Figure], results: dict[str, FigureResult], sizes: Sizes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {**meta, "sizes": asdict(sizes),
                "settings_vs_kafka_defaults": [asdict(s) for s in SETTINGS_VS_DEFAULTS],
                "defaults_that_differ": list(DEFAULTS_THAT_DIFFER),
                "table": table_rows(figures, results, sizes),
                "figures": {name: asdict(r) for name, r in results.items()}}
    path.write_text(json.dumps(document, indent=2, default=str) + "\n")
