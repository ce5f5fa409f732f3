"""Reading the instants operators type: epoch milliseconds or ISO-8601.

Kafka timestamps are epoch milliseconds, so a bare integer is taken as such; an ISO-8601 text
without a zone is read as UTC, because the log carries no zone and local time would make the same
command mean different things on different machines.
"""

from __future__ import annotations

from datetime import datetime, timezone


def parse_instant(text: str | int) -> int:
    """Epoch milliseconds for `1732170000000`, `2024-11-21T06:20:00Z` or `2024-11-21 06:20:00+01:00`."""
    if isinstance(text, int):
        return text
    value = text.strip()
    if value.lstrip("-").isdigit():
        return int(value)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ValueError(f"{text!r} is neither epoch milliseconds nor an ISO-8601 time") from exc
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000)


def format_instant(epoch_ms: int | None) -> str:
    """ISO-8601 UTC with milliseconds, for reports."""
    if epoch_ms is None:
        return ""
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")
