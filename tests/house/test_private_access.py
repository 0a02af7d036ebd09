"""No module of session/ or transport/ reads or writes another object's private fields.

The check ruff's SLF001 makes (``ruff check --select SLF001``, in the project's
settings), done on the source so it runs with the test suite and needs no ruff:
an attribute ``x._name`` (not a dunder) on anything but ``self``, ``cls`` or
``super()`` is a finding, unless its line says ``# noqa: SLF001`` with a reason.
Each part of the session and of the link owns its state behind a small interface;
a part that reaches into another's ``_fields`` is the shape issue 27 removed.
"""

from __future__ import annotations

import ast
import re

import pytest
from test_layers import PACKAGE

CHECKED = ("session", "transport")
# the names ruff's SLF001 leaves alone by default (namedtuple and enum API)
IGNORED_NAMES = {"_make", "_asdict", "_replace", "_fields", "_field_defaults", "_name_", "_value_"}
NOQA = re.compile(r"#\s*noqa:[^#]*\bSLF001\b\s*\S")  # a noqa with a reason after it


def _own_instances(cls: ast.ClassDef, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names in a method that hold an instance of its own class (as ruff reads them): a
    parameter annotated with the class, a name bound to ``cls(...)``, ``C(...)`` or
    ``object.__new__(cls)``, or one asserted ``isinstance(x, C)``."""
    own = {"cls", cls.name}

    def is_own(expr: ast.expr | None) -> bool:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return expr.value == cls.name
        return isinstance(expr, ast.Name) and expr.id in own

    names = {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs] if is_own(a.annotation)}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            call = node.value
            func = call.func
            new = isinstance(func, ast.Attribute) and func.attr == "__new__"
            if is_own(func) or (new and call.args and is_own(call.args[0])):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and is_own(node.args[1])
            and isinstance(node.args[0], ast.Name)
        ):
            names.add(node.args[0].id)
    return names


def findings(source: str) -> list[tuple[int, str]]:
    """(line, ``owner._name``) for each private access in ``source``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    own: dict[int, set[str]] = {}  # id(attribute node) -> own-class names in its method
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    names = _own_instances(cls, fn)
                    for node in ast.walk(fn):
                        own[id(node)] = names
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
            continue
        if name in IGNORED_NAMES:
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and (
            owner.id in ("self", "cls", "mcs") or owner.id in own.get(id(node), ())
        ):
            continue
        if (
            isinstance(owner, ast.Call)
            and isinstance(owner.func, ast.Name)
            and owner.func.id == "super"
        ):
            continue
        if NOQA.search(lines[node.lineno - 1]):
            continue
        out.append((node.lineno, f"{ast.unparse(owner)}.{name}"))
    return sorted(out)


def test_the_check_finds_what_slf001_finds() -> None:
    src = (
        "class A:\n"
        "    def f(self, other):\n"
        "        self._x = other._y\n"
        "        super()._z()\n"
        "        return other.__class__, p._asdict(), q._w  # noqa: SLF001  a test helper\n"
        "    @classmethod\n"
        "    def g(cls, s):\n"
        "        return cls._k, s._state, s._q  # noqa: SLF001\n"
        "    @classmethod\n"
        "    def h(cls, o: A, p: 'A', q: B):\n"
        "        n = object.__new__(cls)\n"
        "        m = cls()\n"
        "        assert isinstance(r, A)\n"
        "        return n._a, m._b, o._c, p._d, r._e, q._f\n"
    )
    # a bare noqa (no reason) does not count; instances of the method's own class do not
    assert findings(src) == [(3, "other._y"), (8, "s._q"), (8, "s._state"), (14, "q._f")]


@pytest.mark.parametrize("folder", CHECKED)
def test_no_module_reaches_into_another_objects_private_fields(folder: str) -> None:
    bad = []
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for line, what in findings(path.read_text(encoding="utf-8")):
            bad.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {what}")
    assert not bad, f"{len(bad)} private accesses (SLF001) in {folder}/:\n" + "\n".join(bad)
