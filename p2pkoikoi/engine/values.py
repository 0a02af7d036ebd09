"""Frozen value classes, built cheaply: ``@value`` is ``@dataclass(frozen=True, slots=True)``.

Theory of operation
-------------------
A one-shot command (``verify``, ``score``) pays for every class it defines, and the
standard decorator compiles six generated functions per class, after importing
:mod:`inspect` for it.  :func:`value` makes the same class without importing
:mod:`dataclasses`, and compiles each generated method only when it is first looked
up: most commands make a few values and compare, hash or show none of them.

* ``__init__`` (fields in order, defaults, then ``__post_init__`` if the class
  has one), ``__repr__`` (``Name(a=1, b='x')``, pasteable), ``__eq__`` and
  ``__hash__`` over the fields as a tuple, ``__match_args__``;
* each of those four is at first a :class:`_Lazy` descriptor in the class: the
  first lookup (comparing two, ``Cls.__init__``, :func:`inspect.signature`)
  compiles the method and puts it in the class in the descriptor's place, so
  every later call is a plain function call, as fast as the dataclass's own
  methods (the interpreter's slots for ``__init__``, ``__eq__``, ``__hash__``
  and ``__repr__`` look a descriptor up like a function);
* ``__slots__``, so the class is rebuilt without its defaults as class
  attributes, as ``slots=True`` does;
* frozen: ``__setattr__`` and ``__delattr__`` raise
  :class:`dataclasses.FrozenInstanceError` (imported only then);
  ``__getstate__``/``__setstate__`` keep pickling and :mod:`copy` working;
* a method the class defines itself (``__repr__``, ``__eq__``, ``__hash__``,
  ``__init__``) is kept, as the dataclass decorator keeps it.

A value is still a dataclass to the standard library: ``__dataclass_fields__``
is computed on first use (from :func:`dataclasses.make_dataclass` with the
same fields and defaults), so ``dataclasses.fields``, ``replace``, ``asdict``
and pytest's comparison of two values work unchanged.  The package's own
code uses :func:`replace` and :func:`field_names` here, which need none of it.

Only what the package's values use is supported: no ``field()`` options, no
``ClassVar`` fields, no inheritance between values.
"""

from __future__ import annotations

from collections import deque
from itertools import repeat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_: object) -> object:
        """Type checkers' marker (PEP 681); at run time, nothing."""
        return lambda cls: cls


_MISSING: Any = object()


def _frozen_error(name: str) -> Exception:
    import dataclasses  # only when someone tries: the usual exception, as dataclasses raise it

    return dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _setattr(self: object, name: str, value: object) -> None:
    raise _frozen_error(name)


def _delattr(self: object, name: str) -> None:
    raise _frozen_error(name)


class _LazyFields:
    """``__dataclass_fields__``, made on first use, then stored on the class."""

    def __get__(self, obj: object, owner: type) -> dict[str, Any]:
        import dataclasses

        defaults: dict[str, Any] = owner.__value_defaults__  # type: ignore[attr-defined]
        types: dict[str, str] = owner.__value_types__  # type: ignore[attr-defined]
        spec: list[Any] = []
        for name in owner.__value_fields__:  # type: ignore[attr-defined]
            if name in defaults:
                spec.append((name, types[name], dataclasses.field(default=defaults[name])))
            else:
                spec.append((name, types[name]))
        shadow = dataclasses.make_dataclass(owner.__name__, spec, frozen=True)
        fields: dict[str, Any] = getattr(shadow, "__dataclass_fields__")  # noqa: B009
        type.__setattr__(owner, "__dataclass_fields__", fields)
        return fields


def _source(method: str, names: tuple[str, ...], defaults: dict[str, Any], post: bool) -> str:
    """The source of one generated method."""
    mine = ", ".join(f"self.{n}" for n in names)
    if method == "__init__":
        params = ", ".join(f"{n}=_d_{n}" if n in defaults else n for n in names)
        sets = "".join(f"    _set(self, {n!r}, {n})\n" for n in names) or "    pass\n"
        return f"def __init__(self, {params}):\n{sets}" + (
            "    self.__post_init__()\n" if post else ""
        )
    if method == "__repr__":
        shown = ", ".join(f"{n}={{self.{n}!r}}" for n in names)
        return f"def __repr__(self):\n    return f'{{self.__class__.__qualname__}}({shown})'\n"
    if method == "__eq__":
        theirs = ", ".join(f"other.{n}" for n in names)
        return (
            "def __eq__(self, other):\n"
            "    if other.__class__ is self.__class__:\n"
            f"        return ({mine},) == ({theirs},)\n"
            "    return NotImplemented\n"
        )
    return f"def __hash__(self):\n    return hash(({mine},))\n"


def _compile(cls: type, method: str) -> Any:
    """The generated ``method`` of the value class ``cls``, compiled, put in the class."""
    names: tuple[str, ...] = cls.__value_fields__  # type: ignore[attr-defined]
    defaults: dict[str, Any] = cls.__value_defaults__  # type: ignore[attr-defined]
    src = _source(method, names, defaults, hasattr(cls, "__post_init__"))
    scope: dict[str, Any] = {"_set": object.__setattr__}
    scope.update({f"_d_{n}": d for n, d in defaults.items()})
    exec(compile(src, f"<value {cls.__qualname__}>", "exec"), scope)  # noqa: S102
    fn = scope[method]
    fn.__qualname__ = f"{cls.__qualname__}.{method}"
    type.__setattr__(cls, method, fn)
    return fn


class _Lazy:
    """A generated method of the value class ``owner``, compiled on its first lookup,
    which then puts the function in the class in this descriptor's place."""

    __slots__ = ("method", "owner")

    def __init__(self, method: str) -> None:
        self.method = method
        self.owner: type | None = None  # the value class, set once it is made

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        cls = self.owner
        assert cls is not None
        fn = _compile(cls, self.method)
        return fn if obj is None else fn.__get__(obj, objtype)


_GENERATED = ("__init__", "__repr__", "__eq__", "__hash__")


@dataclass_transform(frozen_default=True)
def value(cls: type[T]) -> type[T]:
    """The class as a frozen, slotted value (see the module's docstring)."""
    body = dict(cls.__dict__)
    types: dict[str, str] = dict(body.get("__annotations__", {}))
    names = tuple(types)
    defaults = {n: body.pop(n) for n in names if n in body}
    lazy = [_Lazy(name) for name in _GENERATED if name not in body]
    body.update({m.method: m for m in lazy})

    def __getstate__(self: object) -> list[object]:
        return [getattr(self, n) for n in names]

    def __setstate__(self: object, state: list[object]) -> None:
        for n, v in zip(names, state, strict=True):
            object.__setattr__(self, n, v)

    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__qualname__"] = cls.__qualname__
    body.update(
        __slots__=names,
        __match_args__=names,
        __setattr__=_setattr,
        __delattr__=_delattr,
        __getstate__=__getstate__,
        __setstate__=__setstate__,
        __value_fields__=names,
        __value_types__=types,
        __value_defaults__=defaults,
        __dataclass_fields__=_LazyFields(),
    )
    meta: Any = type(cls)
    made: type[T] = meta(cls.__name__, cls.__bases__, body)
    for m in lazy:
        m.owner = made
    return made


def make(cls: type[T], *fields: object) -> T:
    """An instance of the value class ``cls`` from all of its fields in order, made
    without ``__init__`` (nor ``__post_init__``'s checks): for the tables of values a
    module builds at import from values it knows are good (``engine.actions``' 244
    actions) and a record's actions once checked, whose checks need not run twice."""
    names = cls.__value_fields__  # type: ignore[attr-defined]
    if len(fields) != len(names):
        raise TypeError(f"{cls.__qualname__} has {len(names)} fields, not {len(fields)}")
    obj = object.__new__(cls)
    _exhaust(map(_set_field, repeat(obj), names, fields))
    return obj


_set_field = object.__setattr__
_sink: deque[object] = deque(maxlen=0)
_exhaust = _sink.extend  # runs an iterator to its end, keeping nothing


def field_names(obj: object) -> tuple[str, ...]:
    """A value's (or value class's) field names, in order."""
    names: tuple[str, ...] = obj.__value_fields__  # type: ignore[attr-defined]
    return names


def field_types(cls: type) -> dict[str, str]:
    """A value class's fields and their annotations, as written (strings)."""
    types: dict[str, str] = cls.__value_types__  # type: ignore[attr-defined]
    return types


def replace(obj: T, **changes: Any) -> T:
    """A copy of the value ``obj`` with some fields changed (``dataclasses.replace``)."""
    for name in field_names(obj):
        if name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)
