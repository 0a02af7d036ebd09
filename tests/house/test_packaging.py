"""What an installed copy shows a user points somewhere that exists.

A wheel, ``pipx install`` or ``uv tool install`` puts no docs/ or protocol/ folder on
disk, and a package index shows the README without the repository around it: so every
``--help`` text, the invite screen and the README point at files by web address, and
each address names a file (and a heading) that is in this repository.  The sdist
itself is built, unpacked and tested by ``.ci/sdist`` (a CI step after the suite).
"""

from __future__ import annotations

import argparse
import re
import tomllib
from pathlib import Path

import pytest

from p2pkoikoi import HOME_URL, doc_url
from p2pkoikoi.cli.net_run import invite_lines
from p2pkoikoi.cli.parsing import build_parser

ROOT = Path(__file__).resolve().parents[2]
FILE_URL = re.compile(re.escape(HOME_URL) + r"/blob/main/([^\s)#]+)(?:#([^\s)]+))?")
# a repository path written as if the reader had the checkout
RELATIVE_DOC = re.compile(r"(?<![/\w])(?:docs|protocol|examples)/[\w./-]+")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def check_addresses(text: str, where: str, *, bare_paths: bool = False) -> int:
    """Every repository address in ``text`` names a file (and heading) here, whole
    (an address broken across lines names no file); unless ``bare_paths``, no pointer
    is a relative path.  Returns how many addresses there were."""
    bare = RELATIVE_DOC.search(FILE_URL.sub("", text))
    assert bare_paths or not bare, f"{where}: a path an installed copy does not have: {bare}"
    found = FILE_URL.findall(text)
    for path, anchor in found:
        target = ROOT / path
        assert target.is_file(), f"{where}: {path} is not a file of the repository"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), re.M)
            assert anchor in {slug(h) for h in headings}, f"{where}: no heading #{anchor} in {path}"
    return len(found)


def all_parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    top = build_parser()
    out = [("p2pkoikoi", top)]
    for action in top._subparsers._group_actions if top._subparsers else []:
        assert isinstance(action, argparse._SubParsersAction)
        out += [(f"p2pkoikoi {name}", p) for name, p in action.choices.items()]
    return out


def test_help_points_at_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    total = 0
    parsers = all_parsers()
    assert len(parsers) > 5
    for name, parser in parsers:
        text = parser.format_help()
        total += check_addresses(text, f"{name} --help")
    assert total >= 3  # host, resume, practice --ai


def test_help_addresses_survive_wrapping(monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse would break an address at a hyphen or mid-word; ours keeps it whole."""
    monkeypatch.setenv("COLUMNS", "60")
    help_text = dict(all_parsers())["p2pkoikoi practice"].format_help()
    assert doc_url("docs/engine-protocol.md") in help_text.split()
    assert max(len(line) for line in help_text.splitlines() if HOME_URL not in line) <= 60


def test_invite_screen_points_at_an_address() -> None:
    lines = invite_lines("koi1-abc", 47474)
    assert check_addresses("\n".join(lines), "the invite screen") == 1


def test_readme_links_work_on_a_package_index() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert links
    for link in links:
        assert link.startswith(("https://", "#")), f"README link {link} is relative"
    # link texts may name the file ([docs/network.md](https://...)); the targets are addresses
    addresses = check_addresses(readme, "README.md", bare_paths=True)
    assert addresses == sum(link.startswith(HOME_URL) for link in links)


def test_metadata() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = meta["project"]
    assert project["license"] == "MIT"
    for name in project["license-files"]:
        assert "MIT License" in (ROOT / name).read_text(encoding="utf-8")
    assert project["urls"]["Homepage"] == HOME_URL
    for url in project["urls"].values():
        check_addresses(url, "pyproject.toml [project.urls]")
    # one version: pyproject reads it from p2pkoikoi.__version__
    assert "version" not in project and "version" in project["dynamic"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "p2pkoikoi.__version__"}


def test_tests_import_their_helpers_by_module_name() -> None:
    """The sdist's suite runs ``pytest`` from the unpacked tree without the checkout on
    ``sys.path`` (so that ``import p2pkoikoi`` finds the installed copy): a helper
    imported as ``tests.x`` is not found there, only as ``x`` (pytest puts tests/ on
    the path)."""
    tests = Path(__file__).resolve().parents[1]
    offenders = [
        f"{path.name}:{n}"
        for path in sorted(tests.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith(("from tests.", "import tests"))
    ]
    assert offenders == [], offenders
