"""Mutation testing of engine/, session/ and transport/ against their own tests: are the tests honest?

A benchmark, not part of the test suite or ``.ci/run``: it prints a kill rate per
file and every surviving mutant.  What the figures mean and the mutants judged
equivalent (with the reason for each): ``docs/mutation.md``.

Theory of operation
-------------------
Mutants come from the module's AST, one small change each (the classic operators):

``cmp``     a comparison flipped: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``,
            ``is`` <-> ``is not``, ``in`` <-> ``not in``;
``const``   an integer constant +1 and -1 (not booleans);
``bool``    ``and`` <-> ``or``;
``not``     the condition of an ``if``, ``while``, conditional expression or
            comprehension filter negated;
``return``  a returned value changed: ``True`` <-> ``False``, anything else to ``None``;
``del``     a statement inside a function replaced by ``pass``.

Not mutated: docstrings, annotations, ``assert`` statements (type narrowing, they
only ever fail on a bug elsewhere), imports and definitions, and any statement on a
line marked ``# pragma: no cover`` or ``# pragma: no mutate`` (unreachable guards).

Each mutant is written into a private copy of the repository, the mutated module
re-rendered with ``ast.unparse``.  A fork server runs the tests: this process
imports pytest, hypothesis, trio and the other heavy dependencies once (never
p2pkoikoi itself), then forks one child per mutant that runs ``pytest -x`` on the
module's own test files only (:data:`TESTS`) and imports the mutated copy.  A
child that fails, errors or outlives the timeout kills the mutant; its whole
process group is killed on timeout.  Hypothesis runs derandomized with no example
database, so a run is repeatable: same code, same tests, same ``--seed``, same
figures.

A mutant is named by a key that survives edits elsewhere in the file:
``file:function:operator:source-of-the-node#k`` (``k`` counts equal triples).
Keys listed in ``docs/mutation.md`` under "Equivalent mutants" are left out of the
kill rate (they are still run and reported if they are killed).

Usage::

    python bench/mutation.py                                  # every file, every mutant
    python bench/mutation.py --files engine/match.py --sample 150 --seed 1
    python bench/mutation.py --files session/verify/check.py --jobs 2 --json out.json
    python bench/mutation.py --files engine/yaku.py --list    # the mutants, not run
    python bench/mutation.py --only 'match.py:_may_call'      # keys containing this
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import random
import re
import select
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "p2pkoikoi"
DOCS = REPO / "docs" / "mutation.md"

#: the session machine's tests: fast in-memory tests with exact outcomes first (-x
#: stops at the first failure); the slow fuzzing and hidden-resume modules last, paid
#: in full by survivors only.  One ``Session`` runs through all the modules below.
SESSION_TESTS: tuple[str, ...] = (
    "test_session_parts.py",  # each part's repr, the phase's table of moves
    "test_session_mutants.py",
    "test_session_exact.py",
    "test_session_edges.py",
    "test_session_match.py",
    "test_rematch_session.py",  # rematch paths (section 13)
    "test_resume_session.py",
    "test_hidden_session.py",  # the hidden deal's paths through the session
    "test_turn_limit.py",  # the turn limit and forfeits by time
    "test_journal.py",  # records written step by step, resumed from the file
    "test_session_errors.py",
    "test_hidden_resume.py",
)
#: session.py and the modules that hold the parts of its protocol (objects of their own)
SESSION_MACHINE = (
    "session/session.py",
    "session/frames.py",
    "session/states.py",
    "session/phases.py",
    "session/identity.py",
    "session/matches.py",
    "session/views.py",
    "session/handshake.py",
    "session/commit_reveal.py",
    "session/play.py",
    "session/forfeits.py",
    "session/side_channel.py",
    "session/rematch_session.py",
    "session/resume_session.py",
    "session/mental/session_part.py",
)

#: the link's tests: whole matches of two links in memory (test_transport.py), then
#: leaving, rematches, the turn limit, reconnects and the hidden deal over a link
LINK_TESTS: tuple[str, ...] = (
    "test_transport.py",
    "test_link_parts.py",  # the parts seen from a raw session at the other end
    "test_leave.py",
    "test_rematch_link.py",
    "test_turn_limit.py",
    "test_reconnect.py",
    "test_hidden_link.py",
    "test_reconnect_tcp.py",  # `p2pkoikoi resume`: a link that starts with no stream
)
#: the link and the state it shares with its parts
LINK_PARTS = (
    "transport/link/network.py",
    "transport/link/lifetime.py",
    "transport/link/event_router.py",
    "transport/link/endings.py",
    "transport/link/local_moves.py",
    "transport/link/match_run.py",
    "transport/link/pulse.py",
    "transport/link/table_feed.py",
)

#: each module's own tests, fastest and most exact first (``-x`` stops at the first
#: failure); a module not listed here is tested by every test file that imports it.
TESTS: dict[str, tuple[str, ...]] = {
    "engine/match.py": (
        "test_match_rules.py",
        "test_match_views.py",
        "test_koikoijapan.py",
        "test_match.py",
        "test_playout.py",  # Playout checked move for move against MatchState
        "test_hidden_match.py",  # the hidden deal's paths: Phase.DEAL, deal(), rehand()
    ),
    "engine/yaku.py": ("test_yaku.py", "test_koikoijapan.py", "test_match_rules.py"),
    "engine/cards.py": ("test_cards_deal.py",),
    "engine/deal.py": ("test_cards_deal.py",),
    "engine/rules.py": ("test_rules.py",),
    "engine/presets.py": ("test_presets.py", "test_rules.py"),
    "engine/actions.py": ("test_rules.py", "test_match.py"),
    "engine/events.py": ("test_match_rules.py", "test_match.py"),
    **dict.fromkeys(SESSION_MACHINE, SESSION_TESTS),
    **dict.fromkeys(
        (
            "session/verify/check.py",
            "session/verify/ends.py",
            "session/verify/hidden.py",
            "session/verify/report.py",
        ),
        (
            "test_verify.py",
            "test_verify_details.py",
            "test_rematch_session.py",  # rematch records (chained transcripts)
            "test_turn_limit.py",  # resignations and forfeits by time
            "test_hidden_session.py",  # hidden-deal records
            "test_hidden_verify_cheats.py",
            "test_hostile_records.py",
        ),
    ),
    "session/records/record.py": ("test_record.py", "test_verify.py"),
    "session/wire.py": ("test_wire.py", "test_wire_vectors.py"),
    "session/crypto.py": ("test_wire.py", "test_session_errors.py"),
    # transport/: in-memory links under trio's mock clock first (a few seconds a
    # file), the slower gate and TCP reconnect tests only where they are the subject
    **dict.fromkeys(LINK_PARTS, LINK_TESTS),
    "transport/link/supervisor.py": (
        "test_reconnect.py",
        "test_link_parts.py",
        "test_transport.py",
        "test_hidden_link.py",
        "test_reconnect_tcp.py",
    ),
    "transport/link/heartbeat.py": (
        "test_link_parts.py",
        "test_transport.py",
        "test_hidden_link.py",
        "test_reconnect.py",
    ),
    "transport/link/turn_clock.py": ("test_turn_limit.py", "test_link_parts.py"),
    "transport/link/rematch.py": (
        "test_rematch_link.py",
        "test_link_parts.py",
        "test_transport.py",
    ),
    "transport/link/key_question.py": ("test_gate.py", "test_link_parts.py", "test_transport.py"),
    "transport/link/handshake.py": (
        "test_transport.py",
        "test_link_parts.py",
        "test_ui_net.py",
        "test_gate.py",
    ),
    "transport/link/connection.py": (
        "test_transport.py",
        "test_link_parts.py",
        "test_reconnect.py",
    ),
    "transport/open/gate.py": ("test_link_parts.py", "test_gate.py"),
    "transport/link/reconnect.py": (
        "test_reconnect.py",
        "test_link_parts.py",
        "test_reconnect_tcp.py",
        "test_gate.py",  # the host's limits on reconnection attempts, over TCP
    ),
}
SKIP_FILES = {"__init__.py", "errors.py", "testing.py"}
PRELOAD = (
    "pytest",
    "_pytest.config",
    "hypothesis",
    "hypothesis.extra.pytestplugin",
    "trio",
    "pytest_trio",
    "msgpack",
    "cryptography.hazmat.primitives.asymmetric.ed25519",
    "cryptography.hazmat.primitives.asymmetric.x25519",
    "cryptography.hazmat.primitives.ciphers.aead",
    "cryptography.hazmat.primitives.kdf.hkdf",
    "prompt_toolkit",
)
PRAGMA = re.compile(r"#\s*pragma:\s*no (cover|mutate)")

_CMP_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_CMP_TEXT = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


@dataclass(frozen=True)
class Mutant:
    """One change to one module: ``index`` is the node's place in ``ast.walk`` order."""

    file: str  # relative to the package, e.g. "engine/match.py"
    key: str
    line: int
    op: str
    index: int
    variant: str  # which change at that node: "+1", "-1", "" ...

    def describe(self) -> str:
        return f"{self.file}:{self.line} {self.op}"


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, timeout, survived
    seconds: float


@dataclass
class FileReport:
    file: str
    tests: tuple[str, ...]
    outcomes: list[Outcome] = field(default_factory=list)
    baseline_seconds: float = 0.0
    total_mutants: int = 0


# ---------------------------------------------------------------------- generating
_SOURCES: dict[str, str] = {}


def source_of(file: str) -> str:
    """The module's text as this run first read it: editing the tree during a run
    changes neither the mutants nor what is restored after each one."""
    if file not in _SOURCES:
        _SOURCES[file] = (PACKAGE / file).read_text()
    return _SOURCES[file]


def _skipped_lines(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if PRAGMA.search(line)}


def _annotate(tree: ast.Module, source: str) -> dict[int, tuple[str, bool]]:
    """For each node (by id): its enclosing function's qualified name, and whether
    it must not be mutated (docstring, annotation, assert, pragma line)."""
    skip_lines = _skipped_lines(source)
    info: dict[int, tuple[str, bool]] = {}

    def visit(node: ast.AST, qual: str, skip: bool) -> None:
        if isinstance(node, ast.stmt | ast.excepthandler) and (
            node.lineno in skip_lines or isinstance(node, (ast.Assert, ast.Import, ast.ImportFrom))
        ):
            skip = True
        info[id(node)] = (qual, skip)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{qual}.{node.name}" if qual else node.name
            for child in ast.iter_child_nodes(node):
                visit(child, inner, skip or _is_annotation(node, child))
            _mark_docstring(node, info)
            return
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            ann = name in ("annotation", "returns")
            # an ``else:  # pragma: no cover`` clause: the pragma sits on the line above
            if name == "orelse" and children and isinstance(children[0], ast.stmt):
                first = children[0].lineno
                if first - 1 in skip_lines:
                    for c in children:
                        visit(c, qual, True)
                    continue
            for c in children:
                if isinstance(c, ast.AST):
                    visit(c, qual, skip or ann)
        if isinstance(node, ast.Module):
            _mark_docstring(node, info)

    visit(tree, "", False)
    return info


def _is_annotation(parent: ast.AST, child: ast.AST) -> bool:
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and child is parent.returns


def _mark_docstring(node: ast.AST, info: dict[int, tuple[str, bool]]) -> None:
    body = getattr(node, "body", None)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        for n in ast.walk(body[0]):
            info[id(n)] = (info[id(n)][0], True)


def _in_function(tree: ast.Module) -> set[int]:
    """Ids of statements directly inside a function body (the ``del`` candidates)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.stmt) and sub is not node:
                    out.add(id(sub))
    return out


def _short(node: ast.AST) -> str:
    """The node's source, first line only (a compound statement's header)."""
    text = ast.unparse(node).splitlines()[0] if isinstance(node, ast.stmt) else ast.unparse(node)
    text = text.replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."


def _changes(
    node: ast.AST, in_func: bool, parent_is_annassign_nov: bool
) -> Iterator[tuple[str, str]]:
    """(operator label, variant) for each mutant of ``node``."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            flip = _CMP_FLIP.get(type(op))
            if flip is not None:
                yield f"cmp {_CMP_TEXT[type(op)]} -> {_CMP_TEXT[flip]}", str(i)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        yield f"const {node.value} -> {node.value + 1}", "+1"
        yield f"const {node.value} -> {node.value - 1}", "-1"
    elif isinstance(node, ast.BoolOp):
        yield ("bool and -> or" if isinstance(node.op, ast.And) else "bool or -> and"), ""
    elif isinstance(node, (ast.If, ast.While, ast.IfExp)):
        yield "not: negate condition", ""
    elif isinstance(node, ast.comprehension):
        for i in range(len(node.ifs)):
            yield "not: negate filter", str(i)
    if isinstance(node, ast.Return) and node.value is not None:
        v = node.value
        if isinstance(v, ast.Constant) and isinstance(v.value, bool):
            yield f"return {v.value} -> {not v.value}", ""
        elif not (isinstance(v, ast.Constant) and v.value is None):
            yield "return -> None", ""
    if (
        in_func
        and isinstance(node, ast.stmt)
        and not isinstance(
            node,
            (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.Pass,
                ast.Global,
                ast.Nonlocal,
                ast.Assert,
                ast.Import,
                ast.ImportFrom,
            ),
        )
        and not parent_is_annassign_nov
    ):
        yield "del: statement -> pass", ""


def mutants_of(file: str) -> list[Mutant]:
    source = source_of(file)
    tree = ast.parse(source)
    info = _annotate(tree, source)
    in_func = _in_function(tree)
    seen: dict[str, int] = {}
    out: list[Mutant] = []
    for index, node in enumerate(ast.walk(tree)):
        qual, skip = info.get(id(node), ("", True))
        if skip:
            continue
        bare_ann = isinstance(node, ast.AnnAssign) and node.value is None
        for op, variant in _changes(node, id(node) in in_func, bare_ann):
            base = f"{file}:{qual or '<module>'}:{op}:{_short(node)}"
            k = seen.get(base, 0)
            seen[base] = k + 1
            line = getattr(node, "lineno", 0) or getattr(getattr(node, "target", None), "lineno", 0)
            out.append(Mutant(file, f"{base}#{k}", line, op, index, variant))
    out.sort(key=lambda m: (m.line, m.index, m.variant))
    return out


def mutate_source(m: Mutant) -> str:
    tree = ast.parse(source_of(m.file))
    node = next(n for i, n in enumerate(ast.walk(tree)) if i == m.index)
    op = m.op.split(":")[0].split(" ")[0]
    if op == "cmp":
        i = int(m.variant)
        node.ops[i] = _CMP_FLIP[type(node.ops[i])]()  # type: ignore[attr-defined]
    elif op == "const":
        node.value += 1 if m.variant == "+1" else -1  # type: ignore[attr-defined]
    elif op == "bool":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()  # type: ignore[attr-defined]
    elif op == "not":
        if isinstance(node, ast.comprehension):
            i = int(m.variant)
            node.ifs[i] = ast.UnaryOp(ast.Not(), node.ifs[i])
        else:
            node.test = ast.UnaryOp(ast.Not(), node.test)  # type: ignore[attr-defined]
    elif op == "return":
        v = node.value  # type: ignore[attr-defined]
        if isinstance(v, ast.Constant) and isinstance(v.value, bool):
            node.value = ast.Constant(not v.value)  # type: ignore[attr-defined]
        else:
            node.value = ast.Constant(None)  # type: ignore[attr-defined]
    elif op == "del":
        _replace_stmt(tree, node, ast.Pass())
    else:  # pragma: no cover - every operator is handled above
        raise AssertionError(op)
    return ast.unparse(ast.fix_missing_locations(tree))


def _replace_stmt(tree: ast.AST, old: ast.AST, new: ast.stmt) -> None:
    for parent in ast.walk(tree):
        for _, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return
    raise AssertionError("statement not found")


def test_files_for(file: str) -> tuple[str, ...]:
    """The module's test files, as paths under tests/ (each in its layer's folder)."""
    where = {t.name: t.relative_to(REPO / "tests").as_posix() for t in suite_files()}
    if file in TESTS:
        return tuple(where[t] for t in TESTS[file] if t in where)
    mod = "p2pkoikoi." + file[:-3].replace("/", ".")
    pkg, name = mod.rsplit(".", 1)
    found = []
    for t in suite_files():
        text = t.read_text()
        if mod in text or re.search(rf"from {re.escape(pkg)} import [^\n]*\b{name}\b", text):
            found.append(where[t.name])
    return tuple(found)


def suite_files() -> list[Path]:
    """Every test file of the suite, in its folder."""
    return sorted((REPO / "tests").rglob("test_*.py"))


def equivalent_keys() -> dict[str, str]:
    """Keys listed in docs/mutation.md under "Equivalent mutants", with their reasons:
    each bullet names one or more keys in backticks, then ``:`` and the reason."""
    if not DOCS.exists():
        return {}
    out: dict[str, str] = {}
    in_section = False
    for line in DOCS.read_text().splitlines():
        if line.startswith("## "):
            in_section = line.strip().lower().startswith("## equivalent mutants")
            continue
        if not in_section or not re.match(r"^[-*] `", line):
            continue
        keys = re.findall(r"`([^`]+#\d+)`", line)
        reason = line.rsplit("`:", 1)[-1].strip()
        for k in keys:
            out[k] = reason
    return out


# ---------------------------------------------------------------------- running
class ForkServer:
    """Runs pytest in forked children against private copies of the repository."""

    def __init__(self, jobs: int, timeout: float | None, verbose: bool) -> None:
        self.timeout = timeout
        self.verbose = verbose
        self.live: set[int] = set()  # pids of the children running now
        self.root = Path(tempfile.mkdtemp(prefix="p2pkoikoi-mutation-"))
        self.slots: list[Path] = []
        ignore = shutil.ignore_patterns(
            ".git", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", ".pytest_cache"
        )
        for j in range(jobs):
            dst = self.root / f"w{j}"
            shutil.copytree(REPO, dst, ignore=ignore)
            self.slots.append(dst)
        import compileall

        for dst in self.slots:
            compileall.compile_dir(dst / "p2pkoikoi", quiet=2)
        for name in PRELOAD:
            __import__(name)

    def close(self) -> None:
        """Kill the mutants still running (interrupted run) and remove the copies."""
        for pid in self.live:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        shutil.rmtree(self.root, ignore_errors=True)

    def _start(self, slot: int, file: str, source: str | None, tests: tuple[str, ...]) -> int:
        work = self.slots[slot]
        target = work / "p2pkoikoi" / file
        target.write_text(source if source is not None else source_of(file))
        for pyc in (target.parent / "__pycache__").glob(target.stem + ".*.pyc"):
            pyc.unlink()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 3
            try:
                os.setpgid(0, 0)
                os.chdir(work)
                sys.path.insert(0, str(work))
                os.environ["PYTHONPATH"] = str(work)
                os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
                sys.dont_write_bytecode = True
                if not self.verbose:
                    fd = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(fd, 1)
                    os.dup2(fd, 2)
                from hypothesis import settings

                settings.register_profile("mutation", database=None, derandomize=True)
                settings.load_profile("mutation")
                import pytest

                args = ["-x", "-q", "-p", "no:cacheprovider", *(f"tests/{t}" for t in tests)]
                code = int(pytest.main(args))
            finally:
                os._exit(code)
        return pid

    def run(
        self,
        jobs: list[tuple[Mutant | None, str, str | None, tuple[str, ...]]],
        done: Callable[[int, str, float], None] | None = None,
    ) -> list[tuple[str, float]]:
        """Run each (mutant, file, source, tests); status per job in order.

        ``done(job, status, seconds)`` is called as each job finishes."""
        results: list[tuple[str, float]] = [("", 0.0)] * len(jobs)
        pending = list(range(len(jobs)))
        running: dict[int, tuple[int, int, int, float]] = {}  # pidfd -> (job, pid, slot, start)
        free = list(range(len(self.slots)))
        while pending or running:
            while pending and free:
                j = pending.pop(0)
                slot = free.pop(0)
                _, file, source, tests = jobs[j]
                pid = self._start(slot, file, source, tests)
                self.live.add(pid)
                running[os.pidfd_open(pid)] = (j, pid, slot, time.monotonic())
            now = time.monotonic()
            wait = None
            if self.timeout is not None:
                wait = max(0.0, min(st + self.timeout for _, _, _, st in running.values()) - now)
            ready, _, _ = select.select(list(running), [], [], wait)
            now = time.monotonic()
            for fd in list(running):
                j, pid, slot, st = running[fd]
                if fd in ready:
                    _, status = os.waitpid(pid, 0)
                    code = os.waitstatus_to_exitcode(status)
                    results[j] = ("survived" if code == 0 else f"killed:{code}", now - st)
                elif self.timeout is not None and now - st >= self.timeout:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    results[j] = ("timeout", now - st)
                else:
                    continue
                os.close(fd)
                del running[fd]
                self.live.discard(pid)
                if done is not None:
                    done(j, *results[j])
                free.append(slot)
                # restore the slot's copy for the next job
                orig = jobs[j][1]
                (self.slots[slot] / "p2pkoikoi" / orig).write_text(source_of(orig))
        return results


# ---------------------------------------------------------------------- reporting
def _mutated_line(m: Mutant) -> str:
    """The changed line, as the mutant reads (for the survivor list)."""
    orig = ast.unparse(ast.parse(source_of(m.file))).splitlines()
    new = mutate_source(m).splitlines()
    for a, b in zip(orig, new, strict=False):
        if a != b:
            return b.strip()
    return "(statement removed)" if len(new) != len(orig) else ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs="*", help="modules under p2pkoikoi/, e.g. engine/match.py")
    ap.add_argument("--sample", type=int, help="at most N mutants per file, drawn with --seed")
    ap.add_argument("--seed", default="0", help="seed for --sample (default 0)")
    ap.add_argument("--timeout", type=float, help="seconds per mutant (default 3x baseline + 10)")
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    ap.add_argument("--only", help="run only mutants whose key contains this text")
    ap.add_argument(
        "--survivors",
        metavar="JSON",
        help="run only the mutants that survived in an earlier --json file (after adding tests)",
    )
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("--json", help="write every outcome to this file")
    ap.add_argument("--verbose", action="store_true", help="show pytest's output")
    args = ap.parse_args(argv)
    # a plain `kill` still cleans up (the children and the private copies)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if args.files:
        files = [f.removeprefix("p2pkoikoi/") for f in args.files]
    else:
        files = [
            str(p.relative_to(PACKAGE))
            for sub in ("engine", "session", "transport")
            for p in sorted((PACKAGE / sub).glob("*.py"))
            if p.name not in SKIP_FILES
        ]
    equivalent = equivalent_keys()
    plan: dict[str, list[Mutant]] = {}
    for f in files:
        ms = mutants_of(f)
        total = len(ms)
        if args.only:
            ms = [m for m in ms if args.only in m.key]
        if args.survivors:
            earlier = json.loads(Path(args.survivors).read_text())
            keep = {
                o["key"]
                for o in earlier
                if o["status"] == "survived" and o["key"] not in equivalent
            }
            ms = [m for m in ms if m.key in keep]
            total = len(ms)
        if args.sample is not None and len(ms) > args.sample:
            ms = random.Random(f"{args.seed}:{f}").sample(ms, args.sample)
            ms.sort(key=lambda m: (m.line, m.index, m.variant))
        plan[f] = ms
        if args.list:
            print(f"# {f}: {len(ms)} of {total} mutants; tests: {' '.join(test_files_for(f))}")
            for m in ms:
                mark = "  [equivalent]" if m.key in equivalent else ""
                print(f"{m.line:5d}  {m.key}{mark}")
    if args.list:
        return 0

    server = ForkServer(max(1, args.jobs), None, args.verbose)
    reports: list[FileReport] = []
    try:
        for f in files:
            tests = test_files_for(f)
            rep = FileReport(f, tests, total_mutants=len(mutants_of(f)))
            reports.append(rep)
            if not tests or not plan[f]:
                print(f"{f}: {'no tests' if not tests else 'no mutants'}; skipped", flush=True)
                continue
            server.timeout = None
            ((status, secs),) = server.run([(None, f, None, tests)])
            rep.baseline_seconds = secs
            if status != "survived":
                print(f"{f}: its tests fail without any mutant ({status}); skipped", flush=True)
                continue
            server.timeout = args.timeout if args.timeout else 3 * secs + 10
            print(
                f"{f}: {len(plan[f])} of {rep.total_mutants} mutants, tests {' '.join(tests)}"
                f" (baseline {secs:.1f} s, timeout {server.timeout:.0f} s)",
                flush=True,
            )
            jobs: list[tuple[Mutant | None, str, str | None, tuple[str, ...]]] = [
                (m, f, mutate_source(m), tests) for m in plan[f]
            ]

            counts = {"killed": 0, "timeout": 0, "survived": 0}

            def done(
                j: int,
                status: str,
                secs: float,
                ms: list[Mutant] = plan[f],
                counts: dict[str, int] = counts,
            ) -> None:
                kind = status.split(":")[0]
                counts[kind] += 1
                if kind == "survived":
                    tag = " (equivalent)" if ms[j].key in equivalent else ""
                    print(f"  survived{tag}: {ms[j].key}  [line {ms[j].line}]", flush=True)
                n = sum(counts.values())
                if n % 10 == 0 or n == len(ms):
                    print(
                        f"  [{n}/{len(ms)}] killed {counts['killed']}, timed out"
                        f" {counts['timeout']}, survived {counts['survived']}",
                        flush=True,
                    )

            for m, (status, secs) in zip(plan[f], server.run(jobs, done), strict=True):
                rep.outcomes.append(Outcome(m, status.split(":")[0], secs))
    finally:
        server.close()

    print()
    print(
        f"{'file':28} {'mutants':>7} {'killed':>6} {'t/o':>4} {'surv':>5} {'equiv':>5} {'rate':>7}"
    )
    for rep in reports:
        if not rep.outcomes:
            continue
        eq = [o for o in rep.outcomes if o.mutant.key in equivalent and o.status == "survived"]
        killed = [o for o in rep.outcomes if o.status in ("killed", "timeout")]
        tos = [o for o in rep.outcomes if o.status == "timeout"]
        surv = [o for o in rep.outcomes if o.status == "survived" and o not in eq]
        denom = len(rep.outcomes) - len(eq)
        rate = 100.0 * len(killed) / denom if denom else 100.0
        print(
            f"{rep.file:28} {len(rep.outcomes):7d} {len(killed):6d} {len(tos):4d}"
            f" {len(surv):5d} {len(eq):5d} {rate:6.1f}%"
        )
    survivors = [
        o
        for rep in reports
        for o in rep.outcomes
        if o.status == "survived" and o.mutant.key not in equivalent
    ]
    if survivors:
        print("\nsurvivors (not judged equivalent):")
        for o in survivors:
            print(f"  {o.mutant.key}\n      line {o.mutant.line}: {_mutated_line(o.mutant)}")
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                [
                    {
                        "file": o.mutant.file,
                        "key": o.mutant.key,
                        "line": o.mutant.line,
                        "status": o.status,
                        "equivalent": o.mutant.key in equivalent,
                        "seconds": round(o.seconds, 2),
                    }
                    for rep in reports
                    for o in rep.outcomes
                ],
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
