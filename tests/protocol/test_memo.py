"""The bounded memo behind the hot paths' remembered reads and encodings: a key's value is computed once and
then looked up; the table never holds more than its limit (it is emptied when full), never keeps a key longer
than its bound, and keeps nothing when the computation raises."""

from __future__ import annotations

import pytest

from groupcoord.protocol.memo import Memo


def test_a_value_is_computed_once_per_key_then_looked_up():
    calls: list[str] = []

    def shout(key: str) -> str:
        calls.append(key)
        return key.upper()

    memo = Memo(shout, limit=10)
    assert memo["a"] == "A" and memo["a"] == "A" and memo["b"] == "B"
    assert calls == ["a", "b"]
    assert dict(memo) == {"a": "A", "b": "B"}


def test_a_full_memo_is_emptied_before_the_next_key_is_kept():
    memo = Memo(str.upper, limit=2)
    memo["a"], memo["b"], memo["c"]
    assert dict(memo) == {"c": "C"}


def test_keys_longer_than_the_bound_are_computed_every_time_and_never_kept():
    calls: list[bytes] = []
    memo = Memo(lambda key: calls.append(key) or len(key), limit=10, max_key_len=3)
    assert memo[b"abc"] == 3 and memo[b"abcd"] == 4 and memo[b"abcd"] == 4
    assert calls == [b"abc", b"abcd", b"abcd"]
    assert list(memo) == [b"abc"]


def test_a_computation_that_raises_keeps_nothing():
    def refuse(key: str) -> str:
        raise ValueError(key)

    memo = Memo(refuse, limit=10)
    with pytest.raises(ValueError):
        memo["x"]
    assert len(memo) == 0
