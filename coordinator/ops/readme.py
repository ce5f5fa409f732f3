"""Regenerate the README's configuration table from `coordinator.config.SETTINGS` (`make readme`)."""

from __future__ import annotations

import re
from pathlib import Path

from ..config import SETTINGS

START = "<!-- config-table:start"
END = "<!-- config-table:end -->"


def _default(value: object) -> str:
    if isinstance(value, tuple):
        return f"{value[0]}:{value[1]}" if len(value) == 2 else "—"
    if value is None:
        return "—"
    return str(getattr(value, "value", value))


def markdown_table() -> str:
    rows = ["| setting (TOML key) | flag | environment | default | meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        rows.append(f"| `{s.name}` | `{s.flag}` | `{s.env}` | `{_default(s.default)}` | {s.help} |")
    return "\n".join(rows)



def with_current_table(readme: str) -> str:
    pattern = re.compile(re.escape(START) + r"[^\n]*\n.*?" + re.escape(END), re.S)
    match = pattern.search(readme)
    if match is None:
        raise ValueError("README has no config-table markers")
    head = match.group(0).split("\n", 1)[0]
    return readme[: match.start()] + f"{head}\n{markdown_table()}\n{END}" + readme[match.end() :]


def main() -> None:
    path = Path(__file__).resolve().parents[2] / "README.md"
    path.write_text(with_current_table(path.read_text()))


if __name__ == "__main__":
    main()
