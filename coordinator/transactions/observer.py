"""Hooks the transaction coordinator calls for metrics; every hook is optional."""

from __future__ import annotations


class TransactionObserver:
    def on_transaction_started(self, transactional_id: str) -> None: ...

    def on_transaction_ended(self, transactional_id: str, committed: bool) -> None: ...

    def on_transaction_timed_out(self, transactional_id: str) -> None: ...

    def on_producer_fenced(self, transactional_id: str) -> None: ...

    def on_txn_shard_loaded(self, partition: int, seconds: float, records: int) -> None: ...


class TransactionObserverAdapter(TransactionObserver):
    """Wraps any object, calling only the hooks it defines. The runtime's ``on_shard_loaded`` is routed to
    ``on_txn_shard_loaded`` so that a metrics object counting offsets shards is not told about these."""

    def __init__(self, target: object | None) -> None:
        self._target = target

    def __getattribute__(self, name: str):
        if name == "on_shard_loaded":
            name = "on_txn_shard_loaded"
        if name.startswith("on_"):
            target = object.__getattribute__(self, "_target")
            hook = getattr(target, name, None) if target is not None else None
            if hook is not None:
                return hook
            return getattr(TransactionObserver, name).__get__(self)
        return object.__getattribute__(self, name)
