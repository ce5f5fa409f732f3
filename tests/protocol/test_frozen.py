"""frozen_dataclass makes what @dataclass(frozen=True, slots=True) makes: the same objects from the same arguments,
the same repr, equality, hash, refusals, pickling, introspection; its builder makes them too; they stay frozen."""

from __future__ import annotations

import copy
import dataclasses
import inspect

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
from groupcoord.protocol.frozen import builder, frozen_dataclass


def _made(decorate, kw_only: bool):
    @decorate
    class C:
        """A class."""
        a: int
        b: str | None = "x"
        c: int = dataclasses.field(default=-1, kw_only=kw_only)
        d: list = dataclasses.field(default_factory=list, repr=False, hash=False)
        e: float = dataclasses.field(default=0.5, compare=False)
        f: int = dataclasses.field(default=7, hash=False)

    return C


_PAIRS = {(kw, slots): (_made(dataclasses.dataclass(frozen=True, slots=slots), kw),
                        _made(frozen_dataclass(slots=slots), kw))
          for kw in (False, True) for slots in (True, False)}


def _pair(c: bool = False, slots: bool = True):
    """The same class (same name and qualified name) made by the dataclass machinery and by frozen_dataclass."""
    return _PAIRS[c, slots]


def _calls(a, b, c):
    return [((a,), {}), ((a, b), {}), ((a,), {"b": b, "c": c}), ((), {"a": a, "c": c}), ((a,), {"d": [a]}),
            ((a,), {"e": float("nan")}), ((a,), {"f": c})]


def _refusal(action):
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the kind and the text are what is compared
        return type(exc), str(exc)
    return None


def _assert_same(fast_obj, plain_obj, fast_other, plain_other) -> None:
    """Everything a caller can see of an instance, one class against the other (the class names are the same)."""
    assert dataclasses.astuple(fast_obj) == dataclasses.astuple(plain_obj)
    assert repr(fast_obj) == repr(plain_obj)
    assert (fast_obj == fast_other) == (plain_obj == plain_other)
    assert (fast_obj != fast_other) == (plain_obj != plain_other)
    assert fast_obj.__eq__(object()) is plain_obj.__eq__(object()) is NotImplemented
    assert hash(fast_obj) == hash(plain_obj)
    for name in ("a", "d", "zz"):  # a field, a factory's field, no field: the same refusal (3.11: a TypeError)
        assert _refusal(lambda: setattr(fast_obj, name, 1)) == _refusal(lambda: setattr(plain_obj, name, 1))
        assert _refusal(lambda: delattr(fast_obj, name)) == _refusal(lambda: delattr(plain_obj, name))
    assert fast_obj.__getstate__() == plain_obj.__getstate__()  # pickling's (the classes here are local)
    assert dataclasses.astuple(copy.deepcopy(fast_obj)) == dataclasses.astuple(plain_obj)
    assert repr(dataclasses.replace(fast_obj, a=5)) == repr(dataclasses.replace(plain_obj, a=5))


@given(st.integers(), st.none() | st.text(max_size=5), st.integers(), st.booleans(), st.booleans())
def test_the_objects_are_the_dataclass_ones(a: int, b: str | None, c: int, kw: bool, slots: bool) -> None:
    plain, fast = _pair(c=kw, slots=slots)
    calls = _calls(a, b, c)
    for args, kwargs in calls:
        for other_args, other_kwargs in calls[:3]:
            _assert_same(fast(*args, **kwargs), plain(*args, **kwargs),
                         fast(*other_args, **other_kwargs), plain(*other_args, **other_kwargs))
    assert fast(a).d is not fast(a).d  # the factory is called for each object
    for args in ([], [a, b, c], [a, b, c, [], 1.0, 2, 3]):  # none, all positional (c keyword-only or not), too many
        assert _refusal(lambda: fast(*args)) == _refusal(lambda: plain(*args))


@pytest.mark.parametrize("slots", [True, False])
def test_the_class_is_the_dataclass_one(slots: bool) -> None:
    plain, fast = _pair(slots=slots)
    assert dataclasses.is_dataclass(fast)
    assert repr(fast.__dataclass_params__) == repr(plain.__dataclass_params__)
    assert [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
            for f in dataclasses.fields(fast)] == [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.hash, f.compare, f.kw_only)
        for f in dataclasses.fields(plain)]
    assert fast.__match_args__ == plain.__match_args__
    assert fast.__dict__.get("__slots__") == plain.__dict__.get("__slots__")
    assert str(inspect.signature(fast)) == str(inspect.signature(plain))
    assert fast.__doc__ == plain.__doc__
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        assert getattr(fast, name).__qualname__ == getattr(plain, name).__qualname__
    assert set(plain.__dict__) <= set(fast.__dict__) <= set(plain.__dict__) | {"_fast_new"}
    assert hasattr(fast(1), "__dict__") == hasattr(plain(1), "__dict__") == (not slots)


def _undocumented(decorate):
    @decorate
    class C:
        a: list
        b: int = 2

    return C


def test_recursion_and_the_docstring_the_dataclass_writes() -> None:
    plain, fast = _undocumented(dataclasses.dataclass(frozen=True, slots=True)), _undocumented(frozen_dataclass)
    assert fast.__doc__ == plain.__doc__ == "C(a: 'list', b: 'int' = 2)"
    fast_cycle: list = []
    plain_cycle: list = []
    fast_obj, plain_obj = fast(fast_cycle), plain(plain_cycle)
    fast_cycle.append(fast_obj)
    plain_cycle.append(plain_obj)
    assert repr(fast_obj) == repr(plain_obj) == "_undocumented.<locals>.C(a=[...], b=2)"


@pytest.mark.parametrize("count", [0, 1, 2])
def test_equality_and_hash_over_any_number_of_fields(count: int) -> None:
    names = ["a", "b"][:count]
    plain = dataclasses.make_dataclass("C", names, frozen=True, slots=True)
    ns = {"__annotations__": {name: "int" for name in names}, "__doc__": "C.", "__module__": __name__}
    fast = frozen_dataclass(type("C", (), ns))
    stand_ins = {name: fast.__dict__[name] for name in ("__repr__", "__eq__", "__hash__")}
    nan = float("nan")
    for values in ([1, 2], [nan, nan]):
        args = values[:count]
        assert (fast(*args) == fast(*args)) == (plain(*args) == plain(*args))  # a NaN is the same object in both
        assert hash(fast(*args)) == hash(plain(*args))
        assert repr(fast(*args)) == repr(plain(*args))
        compiled = {name: fast.__dict__[name] for name in stand_ins}  # the first call put the compiled one in place
        assert all(compiled[name] is not stand_ins[name] for name in stand_ins)
        assert compiled["__hash__"].__qualname__ == "C.__hash__" and compiled["__eq__"].__code__.co_name == "__eq__"
        assert stand_ins["__hash__"](fast(*args)) == hash(plain(*args))  # a stand-in held elsewhere: the same answer
        assert fast.__dict__["__hash__"] is compiled["__hash__"]  # and no second compile


def test_refused_where_it_cannot_make_the_class() -> None:
    with pytest.raises(TypeError):
        @frozen_dataclass
        class PostInit:
            """A class."""
            a: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError):
        @frozen_dataclass
        class OwnSetattr:
            """A class."""
            a: int

            def __setattr__(self, name: str, value: object) -> None:
                pass

    with pytest.raises(TypeError):
        @frozen_dataclass
        class LeftOut:
            """A class."""
            a: int = dataclasses.field(default=0, init=False)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    with pytest.raises(TypeError):
        @frozen_dataclass
        class Derived(Base):
            """A class."""
            b: int = 0


def _own(decorate, hash_too: bool):
    @decorate
    class C:
        """A class."""
        a: int

        def __init__(self, a: int) -> None:
            object.__setattr__(self, "a", a * 2)

        def __repr__(self) -> str:
            return "own"

        def __eq__(self, other: object) -> bool:
            return True

        if hash_too:
            def __hash__(self) -> int:
                return 7

    return C


@pytest.mark.parametrize("slots", [True, False])
@pytest.mark.parametrize("hash_too", [True, False])
def test_methods_of_the_class_own_are_kept_as_the_dataclass_keeps_them(slots: bool, hash_too: bool) -> None:
    plain = _own(dataclasses.dataclass(frozen=True, slots=slots), hash_too)
    fast = _own(frozen_dataclass(slots=slots), hash_too)
    for name in ("__init__", "__repr__", "__eq__", "__hash__"):
        assert getattr(fast, name).__qualname__ == getattr(plain, name).__qualname__
    assert (fast(2).a, repr(fast(2)), fast(2) == fast(3), hash(fast(2))) == (
        plain(2).a, repr(plain(2)), plain(2) == plain(3), hash(plain(2)))


@given(st.integers(), st.none() | st.text(max_size=5), st.integers(), st.booleans())
def test_the_builder_makes_what_the_generated_init_makes(a: int, b: str | None, c: int, kw: bool) -> None:
    plain, fast = _pair(c=kw)
    build = builder(fast)
    assert build is not fast and builder(fast) is build
    for args, kwargs in _calls(a, b, c):
        made, expected = build(*args, **kwargs), fast(*args, **kwargs)
        assert type(made) is fast and made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)
        assert dataclasses.astuple(made) == dataclasses.astuple(plain(*args, **kwargs))
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.a = a  # type: ignore[misc]
        with pytest.raises((TypeError, AttributeError)):  # as for any instance (3.11's frozen __setattr__)
            made.__class__ = plain  # the builder's way in is not its users'
        assert type(made) is fast
    assert build(a).d is not build(a).d
    for args in ([], [a, b, c], [a, b, c, [], 1.0, 2, 3]):
        assert (_refusal(lambda: build(*args)) is None) == (_refusal(lambda: plain(*args)) is None)


def test_no_builder_where_none_was_made() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class NotFast:
        a: int

    assert builder(NotFast) is NotFast

    @frozen_dataclass
    class Fast:
        """A class."""
        a: int

    assert builder(Fast) is not Fast and builder(Fast)(3) == Fast(3)


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
