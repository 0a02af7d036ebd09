"""No import cycles anywhere in the package, type-only imports included.

The graph is built from the source, the way tests/house/test_layers.py reads imports
(:func:`test_layers.imports_of`), with every import counted wherever it is (in a
function, under ``if TYPE_CHECKING``).  ``from pkg import x`` is an edge to
``pkg`` (its ``__init__`` runs and is asked for ``x``) and, when ``pkg.x`` is a
module, to that module too; so a module inside a package that imports from the
package's own ``__init__`` (which names the package's modules, if only for type
checkers) closes a cycle, and imports its siblings as ``from pkg.x import y`` or
``import pkg.x as x`` instead.  A cycle fails the test, named, with one loop
through it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import PACKAGE, imports_of

ROOT = PACKAGE.parent


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def edges_of(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """The package's modules that ``path`` imports (see the module docstring)."""
    out = set(imports_of(path, root))
    package = list(path.relative_to(root).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                assert node.module is not None
                base = node.module
            else:
                parts = package[: len(package) - (node.level - 1)]
                base = ".".join([*parts, node.module] if node.module else parts)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in out if m in known} - {module_name(path, root)}


def import_graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    return {name: edges_of(path, known) for name, path in mods.items()}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components with more than one module (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(sorted(comp))
    return found


def loop_through(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One shortest import loop from the component's first module back to it."""
    start, inside = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & inside):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    raise AssertionError("not a cycle")


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The reader itself: a type-only import, a function's import, ``from pkg import x``."""
    pkg = tmp_path / "p2pkoikoi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p2pkoikoi.b import B\n"
    )
    (pkg / "a.py").write_text("def f():\n    from p2pkoikoi import b, c\n")
    (pkg / "b.py").write_text("from . import c\n")
    (pkg / "c.py").write_text("import p2pkoikoi.a as a\n")
    known = {"p2pkoikoi", "p2pkoikoi.a", "p2pkoikoi.b", "p2pkoikoi.c"}

    def edges(name: str) -> set[str]:
        return edges_of(pkg / f"{name}.py", known, tmp_path)

    assert edges("__init__") == {"p2pkoikoi.b"}
    assert edges("a") == {"p2pkoikoi", "p2pkoikoi.b", "p2pkoikoi.c"}
    assert edges("b") == {"p2pkoikoi", "p2pkoikoi.c"}
    assert edges("c") == {"p2pkoikoi.a"}
    # and on the real package: session/__init__ names its modules for type checkers only
    graph = import_graph()
    assert "p2pkoikoi.session.session" in graph["p2pkoikoi.session"]


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert loop_through(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_the_package_has_no_import_cycles() -> None:
    graph = import_graph()
    cycles = strongly_connected(graph)
    report = "\n".join(
        f"{len(c)} modules: {', '.join(c)}\n  e.g. {' -> '.join(loop_through(graph, c))}"
        for c in cycles
    )
    assert not cycles, f"import cycles in p2pkoikoi/:\n{report}"
