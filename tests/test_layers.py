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

PACKAGE = Path(__file__).resolve().parent.parent / "p2pkoikoi"

ALLOWED = {
    "engine": {"engine"},
    "session": {"engine", "session"},
    "transport": {"engine", "session", "transport"},
    "bots": {"engine", "bots"},
    # The interface and the command line are one layer: the start screen runs commands.
    "ui": {"engine", "session", "transport", "bots", "ui", "cli"},
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


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
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
