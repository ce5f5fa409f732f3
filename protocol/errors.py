"""Kafka error codes.

kio's `ErrorCode` enum is generated from Kafka's own `Errors` table (code, name, retriable flag), and
every kio response entity types its error fields with it, so it is the one table we use. This module
adds the Kafka spelling of names (for logs and tests) and the exception our layers raise for input
that is not valid Kafka protocol.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "ProtocolError", "kafka_name", "is_retriable"]


class ProtocolError(ValueError):
    """A frame or body that is not valid Kafka protocol; the connection that sent it is closed."""


def kafka_name(code: int) -> str:
    """`ErrorCode.rebalance_in_progress` -> `REBALANCE_IN_PROGRESS`, as Kafka's docs and tools spell it."""
    return ErrorCode(code).name.upper()


def is_retriable(code: int) -> bool:
    return bool(ErrorCode(code).retriable)
