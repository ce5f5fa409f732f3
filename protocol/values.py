"""Plain numbers from kio's typed field values, where Kafka's wire type is a duration or a time.

kio reads ``timedelta_i32``/``timedelta_i64`` fields as ``datetime.timedelta`` and ``datetime_i64`` as
``datetime``; the coordinator computes with integer milliseconds, as Kafka does. One place converts.
"""

from __future__ import annotations

import datetime
from typing import Any

_ONE_MS = datetime.timedelta(milliseconds=1)


def as_ms(value: Any) -> int:
    """A duration in whole milliseconds (a ``timedelta`` or an int already in milliseconds)."""
    if isinstance(value, datetime.timedelta):
        return value // _ONE_MS
    return int(value)


def as_epoch_ms(value: Any) -> int:
    """A point in time as epoch milliseconds; None (Kafka's -1, "no time") stays -1."""
    if value is None:
        return -1
    if isinstance(value, datetime.datetime):
        return round(value.timestamp() * 1000)
    return int(value)


def as_str(value: Any) -> str:
    """A nullable string field as a string: None (Kafka's null) reads as ""."""
    return "" if value is None else str(value)
