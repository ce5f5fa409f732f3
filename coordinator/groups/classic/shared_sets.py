"""One frozenset object per distinct value, shared by every member and group that holds that value.

Members of a classic group nearly always announce the same protocol names (``range``, ``cooperative-sticky``)
and the groups of one application subscribe to the same topics, yet each member and group kept a frozenset
of its own for as long as it lived: 4 of the ~19 objects per group of three that the cyclic collector keeps
walking at every older-generation pass (a frozenset is a tracked container even when it holds only str).
Frozensets are immutable, so handing out the one already held for an equal value changes nothing a reader
can see. The table is bounded: past ``MAX_SHARED`` distinct values it starts over (only sharing is lost).
"""

from __future__ import annotations

from typing import Iterable

from groupcoord.protocol.memo import Memo

MAX_SHARED = 4096

_shared: dict[frozenset, frozenset] = {}


_single_names = Memo(lambda name: shared_frozenset((name,)), MAX_SHARED)


def protocol_names(protocols: tuple[tuple[str, bytes], ...]) -> frozenset[str]:
    """The names of a member's protocols ((name, metadata), ...), as ``shared_frozenset`` shares them. One
    protocol is the common case (every JoinGroup of a group forming asks, and every member is made with it):
    its set is found by its name, without a generator and a new frozenset each time."""
    if len(protocols) == 1:
        return _single_names[protocols[0][0]]
    return shared_frozenset(name for name, _ in protocols)


def shared_frozenset(items: Iterable) -> frozenset:
    """``frozenset(items)``, as the object already handed out for an equal value when there is one."""
    value = frozenset(items)
    held = _shared.get(value)
    if held is not None:
        return held
    if len(_shared) >= MAX_SHARED:
        _shared.clear()
    _shared[value] = value
    return value
