"""Who is told how many record bytes came in and went out, per topic (the metrics, in the broker)."""

from __future__ import annotations

from typing import Protocol


class TrafficObserver(Protocol):
    def on_bytes_in(self, topic: str, n: int) -> None: ...

    def on_bytes_out(self, topic: str, n: int) -> None: ...


class _NoTraffic:
    def on_bytes_in(self, topic: str, n: int) -> None:
        return None

    def on_bytes_out(self, topic: str, n: int) -> None:
        return None


NO_TRAFFIC_OBSERVER: TrafficObserver = _NoTraffic()
