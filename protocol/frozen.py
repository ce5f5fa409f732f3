"""``fast_init``: a frozen, slotted dataclass built at a third of the cost, still frozen.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__`` (its own
``__setattr__`` refuses), about 0.2 µs a field; the objects made for every request on the hot path (a
request's context, an OffsetCommit and its partitions, each offset record's key and value) paid some
5 µs of a commit's 45 that way. ``fast_init`` replaces only ``__init__``: it sets the fields through their
slot descriptors, which do not go through ``__setattr__`` at all. Everything else is the dataclass's own
(equality, hash, repr, ``replace``, and ``FrozenInstanceError`` on assignment). Classes it cannot serve
as they are (no ``__slots__``, a ``__post_init__``, a ``default_factory``, an init-only field) are left
unchanged. ``tests/protocol/test_frozen.py`` holds it to the generated ``__init__``.

``builder(cls)``: for the few call sites that make hundreds of thousands of objects of one class (a replay
of the offsets log builds an ``OffsetCommitValue`` per record), a function with ``__init__``'s signature
that builds the same object at less than half the cost of ``cls(...)``. A member descriptor's ``__set__``
called from Python is a wrapped C call (some 500 instructions a field under callgrind, with ``cls(...)``'s
own ``__init__`` lookup and call on top); a plain attribute store into a slot is one specialised
bytecode. The builder stores into an instance of a private twin class (the same ``__slots__``, the same
layout, no ``__setattr__``) and then makes it an instance of ``cls`` by assigning ``__class__``, which
CPython allows exactly between such layout-equal classes: what the caller gets is an ordinary instance of
the frozen class, immutable like any other (~1,850 instructions instead of ~4,600 for the five fields of an
``OffsetCommitValue``). Classes the twin cannot stand for (another base class) get ``cls`` itself.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, TypeVar

T = TypeVar("T")


def fast_init(cls: type[T]) -> type[T]:
    """Decorate a ``@dataclass(frozen=True, slots=True)`` class (placed above the dataclass decorator)."""
    if not dataclasses.is_dataclass(cls) or "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__"):
        return cls
    namespace: dict[str, object] = {}
    params: list[str] = []
    keyword_only: list[str] = []
    body: list[str] = []
    for i, f in enumerate(dataclasses.fields(cls)):
        if not f.init or f.default_factory is not dataclasses.MISSING:
            return cls
        if f.default is dataclasses.MISSING:
            param = f.name
        else:
            namespace[f"_default{i}"] = f.default
            param = f"{f.name}=_default{i}"
        (keyword_only if f.kw_only else params).append(param)
        namespace[f"_set{i}"] = getattr(cls, f.name).__set__  # the slot's member descriptor (a base's, if there)
        body.append(f"    _set{i}(self, {f.name})")
    signature = ", ".join(["self", *params, *(["*", *keyword_only] if keyword_only else [])])
    exec(f"def __init__({signature}):\n" + ("\n".join(body) or "    pass"), namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__doc__ = cls.__init__.__doc__  # type: ignore[misc]
    cls.__init__ = init  # type: ignore[misc]
    _add_builder(cls, signature, [f.name for f in dataclasses.fields(cls)], namespace)
    return cls


_BUILDER = "_fast_new"  # the class attribute ``builder`` reads


def builder(cls: type[T]) -> Callable[..., T]:
    """``cls``'s fast constructor (same signature, same object), or ``cls`` when ``fast_init`` made none."""
    return getattr(cls, _BUILDER) if _BUILDER in cls.__dict__ else cls  # (the function, not its staticmethod)


def _add_builder(cls: type, signature: str, names: list[str], namespace: dict[str, object]) -> None:
    """The twin-class builder (see the module's docstring), when ``cls``'s layout is its slots alone."""
    if cls.__bases__ != (object,) or _BUILDER in cls.__dict__ or {"self", "_twin", "_cls"} & set(names):
        return
    twin = type(f"_{cls.__name__}Slots", (object,), {"__slots__": cls.__slots__, "__module__": cls.__module__})
    try:  # CPython's own check that the two layouts are the same
        twin().__class__ = cls
    except TypeError:
        return
    namespace["_twin"], namespace["_cls"] = twin, cls
    body = [f"    self.{name} = {name}" for name in names]
    exec(f"def {_BUILDER}({signature.removeprefix('self, ').removeprefix('self')}):\n    self = _twin()\n"  # noqa: S102
         + "".join(line + "\n" for line in body) + "    self.__class__ = _cls\n    return self", namespace)
    build = namespace[_BUILDER]
    build.__qualname__ = f"{cls.__qualname__}.{_BUILDER}"  # type: ignore[attr-defined]
    setattr(cls, _BUILDER, staticmethod(build))  # type: ignore[arg-type]
