"""Optional hooks through which metrics watch the storage engine without storage knowing them."""

from __future__ import annotations

from typing import Any, Protocol


class StorageObserver(Protocol):
    def on_append(self, seconds: float, nbytes: int) -> None: ...

    def on_fsync(self, seconds: float) -> None: ...

    def on_clean(self, stats: Any) -> None: ...


class NullObserver:
    """Default observer: storage always has someone to tell, so it never checks for None."""

    def on_append(self, seconds: float, nbytes: int) -> None:
        return None

    def on_fsync(self, seconds: float) -> None:
        return None

    def on_clean(self, stats: Any) -> None:
        return None


NULL_OBSERVER = NullObserver()
