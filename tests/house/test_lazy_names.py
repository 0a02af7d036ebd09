"""Every lazily loading module agrees with what it loads.

A module with a module-level ``__getattr__`` (PEP 562) that imports names on first
use keeps three lists of the same names: ``_LAZY`` (name to defining module, what
``__getattr__`` loads), the ``if TYPE_CHECKING:`` imports (what type checkers see)
and ``__all__`` (what it exports).  A name added to one and forgotten in another
is a name that fails only at run time, or only for type checkers: this holds them
together, for every such module the package has, found in the source.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from test_import_cycles import module_name
from test_layers import PACKAGE


def lazy_modules() -> dict[str, ast.Module]:
    """The package's modules that define a module-level ``__getattr__``, parsed."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
            out[module_name(path)] = tree
    return out


LAZY = lazy_modules()


def lazy_table(tree: ast.Module) -> dict[str, str]:
    """The module's ``_LAZY`` literal: each name and the module that defines it."""
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "_LAZY":
            assert node.value is not None  # type: ignore[attr-defined]
            table: dict[str, str] = ast.literal_eval(node.value)  # type: ignore[attr-defined]
            return table
    raise AssertionError("a module-level __getattr__ without a _LAZY table beside it")


def type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """What the module's ``if TYPE_CHECKING:`` block imports: name to module."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for item in node.body:
                assert isinstance(item, ast.ImportFrom) and item.module, ast.unparse(item)
                out.update({a.asname or a.name: item.module for a in item.names})
    return out


def test_the_lazy_modules_are_found() -> None:
    assert {"p2pkoikoi.engine", "p2pkoikoi.session"} <= set(LAZY)


@pytest.mark.parametrize("name", sorted(LAZY))
def test_the_three_lists_name_the_same_names(name: str) -> None:
    tree = LAZY[name]
    table = lazy_table(tree)
    assert type_checking_imports(tree) == table  # type checkers see what runs
    module = importlib.import_module(name)
    exported = set(module.__all__)
    assert set(table) <= exported, sorted(set(table) - exported)
    assert len(module.__all__) == len(exported), "a name listed twice in __all__"


@pytest.mark.parametrize("name", sorted(LAZY))
def test_each_listed_name_loads_from_its_module(name: str) -> None:
    module = importlib.import_module(name)
    for attr, source in lazy_table(LAZY[name]).items():
        assert getattr(module, attr) is getattr(importlib.import_module(source), attr), attr
    for attr in module.__all__:
        assert hasattr(module, attr), attr
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", sorted(LAZY))
def test_every_public_name_is_listed(name: str) -> None:
    """In a fresh interpreter, the names the module binds when imported and those
    it loads on demand are together exactly ``__all__``: nothing public is missing
    from it, and nothing in it is neither bound nor loadable."""
    probe = (
        "import importlib, sys\n"
        f"m = importlib.import_module({name!r})\n"
        "eager = {n for n in vars(m) if not n.startswith('_') and n != 'TYPE_CHECKING'\n"
        "         and not (type(vars(m)[n]) is type(sys) and n not in m.__all__)}\n"
        "print(sorted(eager))\n"
        "print(sorted(m.__all__))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.returncode == 0, proc.stderr
    eager_line, all_line = proc.stdout.splitlines()
    eager, exported = set(ast.literal_eval(eager_line)), set(ast.literal_eval(all_line))
    table = set(lazy_table(LAZY[name]))
    assert not eager & table, sorted(eager & table)  # a lazy name is not bound at import
    assert eager | table == exported, (sorted(exported - eager - table), sorted(eager - exported))


def test_the_engines_deal_is_the_function() -> None:
    """``deal`` is a submodule and a function: the package's attribute is the function."""
    import p2pkoikoi.engine as engine
    from p2pkoikoi.engine.deal import deal

    assert engine.deal is deal
