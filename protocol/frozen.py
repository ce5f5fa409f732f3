"""``frozen_dataclass``: ``@dataclass(frozen=True[, slots=True])`` made at a fraction of the cost, and built so too.

Making a frozen dataclass writes the source of six methods and compiles each (``exec``): some 3 M instructions
a class, and the daemon makes some forty before it listens, about a sixth of its start-up. Five of those methods
are the same for every frozen class but for the field names: ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__``. ``frozen_dataclass`` lets the dataclass machinery make everything else
(fields, ``__dataclass_params__``, ``__match_args__``, the slotted class) and gives ``__setattr__`` and
``__delattr__`` as closures over the names, doing what the generated ones do (``FrozenInstanceError`` with the
same message; otherwise 3.11's own ``super`` of the class as it was before its slots), and ``__repr__``,
``__eq__`` and ``__hash__`` as stand-ins that compile, at their first call, the very method the dataclass
writes and put it in their place: only the classes whose objects are shown, compared or hashed pay for it,
and those then run the dataclass's own code. A method the class defines itself is kept, as the dataclass keeps
it; a slotted class gets the dataclass's pickling state; ``__dataclass_params__`` says frozen.
``tests/protocol/test_frozen.py`` holds each to what ``@dataclass(frozen=True[, slots=True])`` makes.

``__init__`` is still compiled, as the one method on the hot path. In a slotted class it sets the fields through
their slot descriptors, which do not go through the frozen ``__setattr__`` (the generated one calls
``object.__setattr__`` per field, about 0.2 µs each; the objects made for every request on the hot path, a
request's context, an OffsetCommit and its partitions, each offset record's key and value, paid some 5 µs of a
commit's 45 that way); without slots it calls ``object.__setattr__`` as the generated one does. Defaults and
default factories are the dataclass's. A class it cannot make so (its own ``__setattr__`` or ``__delattr__``, a
``__post_init__``, a dataclass base, a field left out of ``__init__``) is refused with a ``TypeError`` at its
definition: write ``@dataclass(frozen=True)`` there.

``builder(cls)``: for the few call sites that make hundreds of thousands of objects of one class (a replay
of the offsets log builds an ``OffsetCommitValue`` per record), a function with ``__init__``'s signature
that builds the same object at less than half the cost of ``cls(...)``, made by its first call. A member
descriptor's ``__set__`` called from Python is a wrapped C call (some 500 instructions a field under callgrind,
with ``cls(...)``'s own ``__init__`` lookup and call on top); a plain attribute store into a slot is one
specialised bytecode. The builder stores into an instance of a private twin class (the same ``__slots__``, the
same layout, no ``__setattr__``) and then makes it an instance of ``cls`` by assigning ``__class__``, which
CPython allows exactly between such layout-equal classes: what the caller gets is an ordinary instance of the
frozen class, immutable like any other (~1,850 instructions instead of ~4,600 for the five fields of an
``OffsetCommitValue``). Classes the twin cannot stand for (another base class) get ``cls`` itself.
"""

from __future__ import annotations

import dataclasses
import reprlib
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_KEPT = ("__init__", "__repr__", "__eq__")  # a class's own is kept, as the dataclass keeps it (and __hash__: below)
_REFUSED = ("__setattr__", "__delattr__", "__post_init__")


def frozen_dataclass(cls: type[T] | None = None, /, *, slots: bool = True) -> Any:
    """``@dataclass(frozen=True, slots=True)`` (``@frozen_dataclass``) or ``@dataclass(frozen=True)``
    (``@frozen_dataclass(slots=False)``), made as the module's docstring says; refuses what it cannot make."""
    if cls is None:
        return lambda cls: frozen_dataclass(cls, slots=slots)
    refused = ([name for name in (*_REFUSED, *(("__slots__",) if slots else ())) if name in cls.__dict__]
               + [base.__name__ for base in cls.__mro__[1:] if dataclasses.is_dataclass(base)])
    if refused:
        raise TypeError(f"frozen_dataclass cannot make {cls.__qualname__} ({', '.join(refused)}): "
                        "use @dataclass(frozen=True)")
    original = cls  # what the dataclass's own __setattr__ and __delattr__ name (3.11: the class before its slots)
    documented = bool(cls.__doc__)
    own = {name for name in _KEPT if name in cls.__dict__}
    own_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)  # the dataclass's test of an explicit __hash__
    if not (own_hash is dataclasses.MISSING or (own_hash is None and "__eq__" in cls.__dict__)):
        own.add("__hash__")
    made = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    fields = dataclasses.fields(made)
    if "__init__" not in own:
        parameters = _parameters(fields)
        if parameters is None:
            raise TypeError(f"frozen_dataclass cannot make {cls.__qualname__} (a field left out of __init__, or "
                            "one named self): use @dataclass(frozen=True)")
        made.__init__ = _init(made, fields, slots, *parameters)  # type: ignore[misc]
        if slots:
            setattr(made, _BUILDER, None)  # builder(cls) makes it when first asked for (few classes have a caller)
    for method in _frozen_methods(made, original, tuple(f.name for f in fields), [f.name for f in fields if f.repr],
                                  [f.name for f in fields if f.compare],
                                  [f.name for f in fields if (f.compare if f.hash is None else f.hash)]):
        if method.__name__ not in own:
            method.__qualname__ = f"{made.__qualname__}.{method.__name__}"
            setattr(made, method.__name__, method)
    if slots:  # what the dataclass gives a frozen slotted class, for pickling
        for name, method in (("__getstate__", dataclasses._dataclass_getstate),  # type: ignore[attr-defined]
                             ("__setstate__", dataclasses._dataclass_setstate)):  # type: ignore[attr-defined]
            if name not in original.__dict__:
                setattr(made, name, method)
    params = made.__dataclass_params__  # type: ignore[attr-defined]
    params.init = params.repr = params.eq = params.frozen = True
    if not documented:  # what the dataclass would have written (it wrote one before this __init__ was there)
        import inspect

        made.__doc__ = made.__name__ + str(inspect.signature(made)).replace(" -> None", "")
    return made


def _tuple(obj: str, names: list[str]) -> str:
    """``(obj.a,obj.b,)``: the tuple the dataclass's generated methods compare and hash."""
    return "(" + "".join(f"{obj}.{name}," for name in names) + ")"


def _compiled_by_first_call(owner: type, name: str, params: str, body: str) -> Callable[..., object]:
    """A stand-in for ``owner.<name>`` that, when first called, compiles the method as the dataclass writes it,
    puts it in its own place on ``owner`` and answers with it: only the classes whose objects are compared, hashed
    or shown pay for the compile, and those then run the very code the dataclass would have given them."""

    def stand_in(self: object, *args: object) -> object:
        method = owner.__dict__[name]
        if method is stand_in:  # (a caller holding the stand-in itself is not made to compile it again)
            namespace: dict[str, object] = {}
            exec(f"def {name}({params}):\n{body}", namespace)  # noqa: S102
            method = namespace[name]
            if name == "__repr__":
                method = reprlib.recursive_repr()(method)  # the dataclass's: a repr that reaches itself shows '...'
            method.__qualname__ = f"{owner.__qualname__}.{name}"
            setattr(owner, name, method)
        return method(self, *args)

    stand_in.__name__ = name
    return stand_in


def _frozen_methods(made: type, cls: type, names: tuple[str, ...], shown: list[str], compared: list[str],
                    hashed: list[str]) -> tuple[Callable[..., object], ...]:
    """``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` as ``dataclasses`` writes them
    for a frozen class of these fields (``cls``: the class as it was before its slots, the one 3.11's own
    methods name)."""
    fields_text = ", ".join(f"{name}={{self.{name}!r}}" for name in shown)
    methods = [
        _compiled_by_first_call(made, "__repr__", "self",
                                f' return self.__class__.__qualname__ + f"({fields_text})"'),
        _compiled_by_first_call(made, "__eq__", "self, other",
                                " if other.__class__ is self.__class__:\n"
                                f"  return {_tuple('self', compared)}=={_tuple('other', compared)}\n"
                                " return NotImplemented"),
        _compiled_by_first_call(made, "__hash__", "self", f" return hash({_tuple('self', hashed)})"),
    ]

    def __setattr__(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return (*methods, __setattr__, __delattr__)


def _init(cls: type, fields: tuple[dataclasses.Field, ...], slots: bool, signature: str,
          namespace: dict[str, object], values: list[str]) -> Callable[..., None]:
    """``cls.__init__``: each field set through its slot's descriptor, or without slots as the dataclass sets it
    (``object.__setattr__``, past the frozen ``__setattr__``)."""
    namespace = {**namespace, "_setattr": object.__setattr__}
    body = []
    for i, (f, value) in enumerate(zip(fields, values)):
        if slots:
            namespace[f"_set{i}"] = getattr(cls, f.name).__set__  # the slot's member descriptor (a base's, if there)
            body.append(f"    _set{i}(self, {value})")
        else:
            body.append(f"    _setattr(self, {f.name!r}, {value})")
    exec(f"def __init__({signature}):\n" + ("\n".join(body) or "    pass"), namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    init.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}  # type: ignore[attr-defined]
    return init  # type: ignore[return-value]


def _parameters(fields: tuple[dataclasses.Field, ...]) -> tuple[str, dict[str, object], list[str]] | None:
    """``__init__``'s parameter list as the dataclass writes it, the namespace of its defaults and factories, and
    each field's value in terms of them; None where a field is left out of ``__init__`` or named ``self``."""
    namespace: dict[str, object] = {"_HAS_DEFAULT_FACTORY": dataclasses._HAS_DEFAULT_FACTORY}  # type: ignore[attr-defined]
    params: list[str] = []
    keyword_only: list[str] = []
    values: list[str] = []
    for i, f in enumerate(fields):
        if not f.init or f.name == "self":
            return None
        value = f.name
        if f.default_factory is not dataclasses.MISSING:  # the dataclass's own sentinel: the same signature
            namespace[f"_factory{i}"] = f.default_factory
            param = f"{f.name}=_HAS_DEFAULT_FACTORY"
            value = f"_factory{i}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
        elif f.default is not dataclasses.MISSING:
            namespace[f"_default{i}"] = f.default
            param = f"{f.name}=_default{i}"
        else:
            param = f.name
        (keyword_only if f.kw_only else params).append(param)
        values.append(value)
    return ", ".join(["self", *params, *(["*", *keyword_only] if keyword_only else [])]), namespace, values


_BUILDER = "_fast_new"  # the class attribute ``builder`` reads: None until the first call makes it


def builder(cls: type[T]) -> Callable[..., T]:
    """``cls``'s fast constructor (same signature, same object), or ``cls`` where there is none."""
    if _BUILDER not in cls.__dict__:
        return cls
    if cls.__dict__[_BUILDER] is None:
        setattr(cls, _BUILDER, staticmethod(_make_builder(cls) or cls))  # type: ignore[arg-type]
    return getattr(cls, _BUILDER)  # (the function, not its staticmethod)


def _make_builder(cls: type) -> Callable[..., object] | None:
    """The twin-class builder (see the module's docstring), when ``cls``'s layout is its slots alone."""
    fields = dataclasses.fields(cls)
    names = [f.name for f in fields]
    parameters = _parameters(fields)
    if parameters is None or cls.__bases__ != (object,) or {"self", "_twin", "_cls"} & set(names):
        return None
    twin = type(f"_{cls.__name__}Slots", (object,), {"__slots__": cls.__slots__, "__module__": cls.__module__})
    try:  # CPython's own check that the two layouts are the same
        twin().__class__ = cls
    except TypeError:
        return None
    signature, namespace, values = parameters
    namespace = {**namespace, "_twin": twin, "_cls": cls}
    body = "".join(f"    self.{name} = {value}\n" for name, value in zip(names, values))
    exec(f"def {_BUILDER}({signature.removeprefix('self, ').removeprefix('self')}):\n    self = _twin()\n"  # noqa: S102
         + body + "    self.__class__ = _cls\n    return self", namespace)
    build = namespace[_BUILDER]
    build.__qualname__ = f"{cls.__qualname__}.{_BUILDER}"  # type: ignore[attr-defined]
    return build  # type: ignore[return-value]
