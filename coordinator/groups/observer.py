"""Hooks for metrics and operations; every hook is optional and defaults to doing nothing."""

from __future__ import annotations


class GroupObserver:
    def on_state_change(self, group_id: str, old: str, new: str, reason: str) -> None: ...

    def on_rebalance(self, group_id: str, generation: int, duration_s: float, reason: str) -> None: ...

    def on_member_joined(self, group_id: str, member_id: str, reason: str) -> None: ...

    def on_member_left(self, group_id: str, member_id: str, reason: str) -> None: ...

    def on_member_expired(self, group_id: str, member_id: str, reason: str) -> None: ...

    def on_offsets_committed(self, group_id: str, n: int) -> None: ...

    def on_offsets_expired(self, group_id: str, n: int) -> None: ...

    def on_shard_loaded(self, partition: int, seconds: float, records: int) -> None: ...


class ObserverAdapter(GroupObserver):
    """Wraps any object, calling only the hooks it actually defines (so callers may implement a subset).

    The target's hooks are looked up once, here, and bound as this object's own attributes: a hook is
    called on every commit and state change, so it must cost one attribute read, not a look-up chain."""

    def __init__(self, target: object | None) -> None:
        self._target = target
        if target is None:
            return
        for name in dir(GroupObserver):
            if name.startswith("on_"):
                hook = getattr(target, name, None)
                if hook is not None:
                    setattr(self, name, hook)
