"""``EventTuple``: named tuples made without compiling anything (engine/events.py).

``collections.namedtuple`` (and so ``typing.NamedTuple``) builds each class's
``__new__`` with ``eval``; for the engine's 13 events that was about 9 M
instructions of every command that loads the engine, ``verify`` among them
(issue 25).  A subclass of :class:`EventTuple` is the same kind of class, built by
a metaclass from the class body's annotations; type checkers read it as a
``typing.NamedTuple``.
"""

from __future__ import annotations

__all__ = ["EventTuple"]

# ``typing.TYPE_CHECKING`` without importing ``typing`` (see p2pkoikoi/cli/__init__.py):
# type checkers read any ``TYPE_CHECKING`` as true, so to them a subclass of
# ``EventTuple`` is a ``typing.NamedTuple`` with its fields' types.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple as EventTuple
else:
    try:  # what ``collections.namedtuple`` makes its fields with: a C descriptor
        from _collections import _tuplegetter
    except ImportError:  # another Python: the same through ``property``
        from operator import itemgetter

        def _tuplegetter(index, doc):
            return property(itemgetter(index), doc=doc)

    _tuple_new = tuple.__new__
    _MISSING = object()

    class _EventTupleMeta(type):
        """Makes each subclass of ``EventTuple`` what ``typing.NamedTuple`` makes of it.

        Nothing is checked: type checkers check these classes as NamedTuples (fields
        with defaults last, no field starting with ``_``, no NamedTuple method redone).
        """

        def __new__(mcls, name, bases, ns):
            if bases != (tuple,):  # an event class (not EventTuple itself)
                # the fields' names only: their types are strings here (``annotations``
                # from ``__future__``), and nothing evaluates them
                fields = tuple(ns.get("__annotations__", ()))
                defaults = {f: ns[f] for f in fields if f in ns}
                for i, f in enumerate(fields):
                    ns[f] = _tuplegetter(i, f"Alias for field number {i}")
                ns.setdefault("__doc__", f"{name}{fields!r}".replace("'", ""))
                ns.update(
                    __slots__=(),
                    __match_args__=fields,
                    _fields=fields,
                    _field_defaults=defaults,
                    _required=len(fields) - len(defaults),
                    _default_values=tuple(defaults.values()),
                    _repr_fmt="(" + ", ".join(f"{f}=%r" for f in fields) + ")",
                )
            return super().__new__(mcls, name, bases, ns)

    class EventTuple(tuple, metaclass=_EventTupleMeta):
        """A class as ``typing.NamedTuple`` makes it, made without compiling anything.

        ``collections.namedtuple`` builds each class's ``__new__`` with ``eval``, and
        ``typing`` adds its own work: 0.68 million instructions a class, 9 million for
        the 13 events, all of it part of ``verify``'s start-up (issue 25).  A subclass
        of this one is a tuple of its annotated fields with a NamedTuple's API: fields
        by name (``_tuplegetter``, as namedtuple's) and by index, ``_fields``,
        ``_field_defaults``, ``__match_args__``, construction by position and by
        keyword (a ``TypeError`` for a wrong argument), NamedTuple's ``__repr__``,
        equality and hashing as tuples, ``_make``, ``_replace``, ``_asdict``,
        pickling and :mod:`copy`.  The methods are this class's, shared: they read
        the subclass's tables.  Type checkers see ``typing.NamedTuple`` instead.
        """

        __slots__ = ()

        def __new__(cls, *args, **kwargs):
            fields = cls._fields
            n = len(args)
            if not kwargs:
                if n == len(fields):
                    return _tuple_new(cls, args)
                if cls._required <= n < len(fields):  # the last fields' defaults
                    return _tuple_new(cls, args + cls._default_values[n - cls._required :])
            named = dict(zip(fields, args, strict=False))
            repeated = n > len(fields) or named.keys() & kwargs
            named.update(kwargs)
            defaults = cls._field_defaults
            values = [named.pop(f, defaults.get(f, _MISSING)) for f in fields]
            if repeated or named or any(v is _MISSING for v in values):
                raise TypeError(
                    f"{cls.__name__}() takes ({', '.join(fields)}), not {n} "
                    f"arguments by position and {', '.join(kwargs) or 'none'} by keyword"
                )
            return _tuple_new(cls, values)

        @classmethod
        def _make(cls, iterable):
            result = _tuple_new(cls, iterable)
            if len(result) != len(cls._fields):
                raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
            return result

        def _replace(self, /, **kwargs):
            result = self._make(map(kwargs.pop, self._fields, self))
            if kwargs:
                raise ValueError(f"Got unexpected field names: {list(kwargs)!r}")
            return result

        def _asdict(self):
            return dict(zip(self._fields, self, strict=True))

        def __repr__(self):
            return self.__class__.__name__ + self._repr_fmt % self

        def __getnewargs__(self):
            return tuple(self)
