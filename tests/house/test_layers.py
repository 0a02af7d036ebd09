"""The architecture's import rules: each layer imports only the ones below it.

engine (stdlib only) < session < transport < ui / cli; bots use only the engine
(and the bot protocol's own I/O).  Checked on the source, so a stray import in
any module fails here.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "p2pkoikoi"

ALLOWED = {
    "engine": {"engine"},
    "session": {"engine", "session"},
    "transport": {"engine", "session", "transport"},
    "bots": {"engine", "bots"},
    # The command line sits on the interface; the start screen gets what its
    # choices run as callbacks, so ui never imports cli.
    "ui": {"engine", "session", "transport", "bots", "ui"},
    "cli": {"engine", "session", "transport", "bots", "ui", "cli"},
}
# Banned in the engine even though they are standard library: I/O, clock, global randomness.
ENGINE_BANNED = {
    "os",
    "io",
    "time",
    "datetime",
    "random",
    "socket",
    "subprocess",
    "threading",
    "asyncio",
    "pathlib",
    "sys",
    "secrets",
    "select",
}


def imports_of(path: Path, root: Path = PACKAGE.parent) -> set[str]:
    """Every module ``path`` imports, anywhere in it, relative imports made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # the package a relative import starts from (a module's, or __init__'s own)
    package = list(path.relative_to(root).parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                assert node.module is not None
                out.add(node.module)
                continue
            base = package[: len(package) - (node.level - 1)]
            if node.module:
                out.add(".".join([*base, node.module]))
            else:  # from . import x, y: each name may be a module
                out.update(".".join([*base, a.name]) for a in node.names)
    return out


def layer_files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    files = layer_files(layer)
    assert files, f"layer {layer} has no modules"
    for path in files:
        for mod in imports_of(path):
            top = mod.split(".")[0]
            if top == "p2pkoikoi":
                parts = mod.split(".")
                if len(parts) == 1:
                    continue  # the package root holds only the version and the project's URLs
                assert parts[1] in ALLOWED[layer], f"{path.name} ({layer}) imports {mod}"


def test_engine_is_pure_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names)
    for path in layer_files("engine"):
        for mod in imports_of(path):
            top = mod.split(".")[0]
            if top in ("p2pkoikoi", "__future__"):
                continue
            assert top in stdlib, f"{path.name} imports non-stdlib {mod}"
            assert top not in ENGINE_BANNED, (
                f"{path.name} imports {mod}: no I/O, clock or global random in the engine"
            )


def test_relative_imports_are_checked_too(tmp_path: Path) -> None:
    """``from ..cli import x`` in ui counts as importing p2pkoikoi.cli (and would fail)."""
    fake = tmp_path / "p2pkoikoi" / "ui" / "x.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..cli import build_parser\nfrom . import app\n", encoding="utf-8")
    found = imports_of(fake, root=tmp_path)
    assert found == {"p2pkoikoi.cli", "p2pkoikoi.ui.app"}
    assert "cli" not in ALLOWED["ui"]
