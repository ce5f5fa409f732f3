"""The README's configuration table, generated from `SETTINGS` so it cannot drift (a test compares)."""

from __future__ import annotations

from .config import SETTINGS


def _default(value: object) -> str:
    if isinstance(value, tuple):
        return f"{value[0]}:{value[1]}"
    if value is None:
        return "—"
    return str(getattr(value, "value", value))


def markdown_table() -> str:
    rows = ["| setting (TOML key) | flag | environment | default | meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        rows.append(f"| `{s.name}` | `{s.flag}` | `{s.env}` | `{_default(s.default)}` | {s.help} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(markdown_table())
