"""fast_init gives the same objects as the dataclass's own __init__, and so does its builder; they stay frozen."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, strategies as st

from groupcoord.coordinator.groups.offsets_records import (
    GroupMetadataKey,
    GroupMetadataValue,
    MemberMetadata,
    OffsetCommitKey,
    OffsetCommitValue,
)
from groupcoord.coordinator.groups.requests import CommitPartition, Heartbeat, OffsetCommit
from groupcoord.coordinator.server.dispatch import RequestContext
from groupcoord.protocol.frozen import builder, fast_init


def _pair(**kw_only: bool):
    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain:
        a: int
        b: str | None = "x"
        c: int = dataclasses.field(default=-1, kw_only=kw_only.get("c", False))

    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Fast:
        a: int
        b: str | None = "x"
        c: int = dataclasses.field(default=-1, kw_only=kw_only.get("c", False))

    return Plain, Fast


@given(st.integers(), st.none() | st.text(max_size=5), st.integers(), st.booleans())
def test_same_fields_as_the_generated_init(a: int, b: str | None, c: int, kw: bool) -> None:
    plain, fast = _pair(c=kw)
    for args, kwargs in [((a,), {}), ((a, b), {}), ((a,), {"b": b, "c": c}), ((), {"a": a, "c": c})]:
        assert dataclasses.astuple(fast(*args, **kwargs)) == dataclasses.astuple(plain(*args, **kwargs))
    if not kw:
        assert dataclasses.astuple(fast(a, b, c)) == dataclasses.astuple(plain(a, b, c))
    else:
        with pytest.raises(TypeError):
            fast(a, b, c)
    with pytest.raises(TypeError):
        fast()  # a required field is still required


@given(st.integers(), st.none() | st.text(max_size=5), st.integers(), st.booleans())
def test_the_builder_makes_what_the_generated_init_makes(a: int, b: str | None, c: int, kw: bool) -> None:
    plain, fast = _pair(c=kw)
    build = builder(fast)
    assert build is not fast
    for args, kwargs in [((a,), {}), ((a, b), {}), ((a,), {"b": b, "c": c}), ((), {"a": a, "c": c})]:
        made, expected = build(*args, **kwargs), fast(*args, **kwargs)
        assert type(made) is fast and made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)
        assert dataclasses.astuple(made) == dataclasses.astuple(plain(*args, **kwargs))
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.a = a  # type: ignore[misc]
        with pytest.raises((TypeError, AttributeError)):  # as for any instance (3.11's frozen __setattr__)
            made.__class__ = plain  # the builder's way in is not its users'
        assert type(made) is fast
    if kw:
        with pytest.raises(TypeError):
            build(a, b, c)
    with pytest.raises(TypeError):
        build()


def test_no_builder_where_a_twin_cannot_stand_for_the_class() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class NotFast:
        a: int

    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @fast_init
    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        b: int = 0

    assert builder(NotFast) is NotFast
    assert builder(Derived) is Derived  # a base's slots: the layout is not its own fields alone
    assert dataclasses.astuple(Derived(1, 2)) == (1, 2)
    assert builder(Base) is not Base and builder(Base)(3) == Base(3)


def test_left_alone_when_it_cannot_serve() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list = dataclasses.field(default_factory=list)

    for cls in (NoSlots, Factory):
        init = cls.__init__
        assert fast_init(cls).__init__ is init


@pytest.mark.parametrize("obj", [
    RequestContext(8, 8, 7, "client", "127.0.0.1", 3),
    OffsetCommit("g", (("t", (CommitPartition(0, 42),)),)),
    CommitPartition(1, 2, 3, "m"),
    Heartbeat("g", 1, "m"),
    OffsetCommitKey("g", "t", 0),
    OffsetCommitValue(42, -1, "", 1000, None),
    GroupMetadataKey("g"),
    MemberMetadata("m", None, "client", "/127.0.0.1", 300000, 45000, b"sub", b"assign"),
    GroupMetadataValue("consumer", 1, "range", "m", 1000),
])
def test_hot_classes_stay_frozen_dataclasses(obj) -> None:
    cls = type(obj)
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    fields = dataclasses.fields(obj)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, fields[0].name, getattr(obj, fields[0].name))
    copy = dataclasses.replace(obj)
    assert copy == obj and hash(copy) == hash(obj) and repr(copy) == repr(obj)
    built = builder(cls)(*(getattr(obj, f.name) for f in fields))
    assert type(built) is cls and built == obj and hash(built) == hash(obj) and repr(built) == repr(obj)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, fields[0].name, getattr(obj, fields[0].name))
    for f in fields:  # defaults as declared
        if f.default is not dataclasses.MISSING:
            required = [getattr(obj, g.name) for g in fields if g.default is dataclasses.MISSING]
            assert getattr(cls(*required), f.name) == f.default
