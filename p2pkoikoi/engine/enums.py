"""``ValueEnum``: the engine's enums, made as the standard library makes its own.

Theory of operation
-------------------
Every command that reads rules defines the engine's 17 enums (the rule settings,
card kinds, phases, action kinds).  In CPython 3.11 ``class X(enum.Enum)`` runs
``EnumType``'s checks and bookkeeping member by member: the 14 enums of the rules
took about 1.5 ms, a tenth of what ``verify`` spends above the interpreter's own
start-up once the standard library is loaded (issue 25).  The standard library
makes its own enums (``re.RegexFlag``, ``http.HTTPStatus``, ``signal.Signals``)
with ``enum._simple_enum``, which builds the same class from a plain one without
those checks, in about a third of the time.

A subclass of :class:`ValueEnum` is such an enum: at run time the class
statement makes a plain class and hands it to ``enum._simple_enum(enum.Enum)``,
so what it makes is an :class:`enum.Enum` subclass (``isinstance(x,
enum.Enum)``, members, values, ``__members__``, pickling, properties and
methods: all as usual).  ``tests/engine/test_enums.py`` compares each with the same
class statement made the checked way, with the standard library's own
comparison, so the checks skipped here (duplicate or reserved names) are made
there.  Type checkers read ``ValueEnum`` as :class:`enum.Enum`.  Should a later
Python drop ``_simple_enum``, the class is made the checked way.
"""

from __future__ import annotations

import enum

__all__ = ["ValueEnum", "checked_enum"]

_SIMPLE = getattr(enum, "_simple_enum", None)


def checked_enum(name: str, body: dict[str, object]) -> type[enum.Enum]:
    """The enum ``name`` with the class body ``body``, made as ``class X(enum.Enum)``
    makes it: what :class:`ValueEnum` makes where there is no ``_simple_enum``."""
    namespace = enum.EnumType.__prepare__(name, (enum.Enum,))
    for key, value in body.items():
        namespace[key] = value
    made = enum.EnumType(name, (enum.Enum,), namespace)
    assert issubclass(made, enum.Enum)
    return made


TYPE_CHECKING = False  # typing's flag without importing typing (see cli/__init__.py)
if TYPE_CHECKING:
    from enum import Enum as ValueEnum
else:

    class _ClassBody:
        """What ``_simple_enum`` reads of the class it converts, its ``__name__`` and
        ``__dict__``, without making that class: the class statement's namespace is
        handed over as it is (a throwaway class per enum was a quarter of the cost
        of making one, 1 M instructions of ``verify`` for 17 enums; issue 25)."""

        __slots__ = ("_name", "_body")

        def __init__(self, name: str, body: dict[str, object]) -> None:
            self._name = name
            self._body = body

        @property
        def __name__(self) -> str:
            return self._name

        @property
        def __dict__(self) -> dict[str, object]:  # type: ignore[override]
            return self._body

    class _ValueEnumType(type):
        """Makes each subclass of :class:`ValueEnum` an :class:`enum.Enum`."""

        def __new__(mcls, name: str, bases: tuple[type, ...], body: dict[str, object]) -> type:
            if not bases:  # ValueEnum itself
                return super().__new__(mcls, name, bases, body)
            if _SIMPLE is None:
                return checked_enum(name, body)
            made: type = _SIMPLE(enum.Enum)(_ClassBody(name, body))
            return made

    class ValueEnum(metaclass=_ValueEnumType):
        """Subclass it as :class:`enum.Enum` (see the module's docstring)."""
