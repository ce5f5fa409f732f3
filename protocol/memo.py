"""A bounded memo: the one building block behind the hot paths' "remember what these bytes (or names) read or
encode as" tables.

Clients repeat themselves — the same JoinGroup tail from every member of a group, the same offset key from a
committer, the same short strings in every answer of a group — so the decoders and encoders remember their
answers by key. A hit must cost no Python call (these run per request): ``memo[key]`` runs no Python code (the
dictionary's look-up, reached through a subclass's generic slot, which finds ``__getitem__`` on each call: ~200
instructions more than an exact dict's on 3.11), and only a miss runs ``__missing__``. Keys come from clients, so
a memo is bounded twice: in entries (emptied when full: simpler than eviction, and a working set refills it at
once) and, where the key has a length, in what one key may hold (longer ones are computed every time and not
kept).
"""

from __future__ import annotations

from typing import Any, Callable


class Memo(dict):
    """``memo[key]``: ``compute(key)``, remembered; at most ``limit`` entries (emptied when full), keys longer
    than ``max_key_len`` (None: no bound) computed each time and never kept. ``compute`` may raise: nothing is
    remembered then. Its values are shared by every caller with the same key, so they must be immutable."""

    __slots__ = ("compute", "limit", "max_key_len")

    def __init__(self, compute: Callable[[Any], Any], limit: int, max_key_len: int | None = None) -> None:
        super().__init__()
        self.compute = compute
        self.limit = limit
        self.max_key_len = max_key_len

    def __missing__(self, key: Any) -> Any:
        value = self.compute(key)
        if self.max_key_len is None or len(key) <= self.max_key_len:
            if len(self) >= self.limit:
                self.clear()
            self[key] = value
        return value
