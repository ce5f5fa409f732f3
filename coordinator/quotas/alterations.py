"""What an AlterClientQuotas request asks (``Alteration``) and is answered per entity (``AlterOutcome``).

Apart from store.py (opened at every start) because only that API needs them: the daemon does not build these
frozen dataclasses before it listens.
"""

from __future__ import annotations

from groupcoord.protocol.errors import ErrorCode
from groupcoord.protocol.frozen import frozen_dataclass


@frozen_dataclass
class Alteration:
    """One entry of an AlterClientQuotas request: the entity as sent, and its ops (value None = remove)."""

    entity: list[tuple[str, str | None]]
    ops: list[tuple[str, float | None]]


@frozen_dataclass
class AlterOutcome:
    """The result for one entity of an AlterClientQuotas request."""
    entity: list[tuple[str, str | None]]
    error: ErrorCode
    message: str | None
