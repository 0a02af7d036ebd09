"""What :func:`~p2pkoikoi.session.verify.check.verify_record` reports: each check, and what
an otherwise valid record lacks (``p2pkoikoi verify`` exits 3 for a valid but
incomplete record, 0 only for a complete one: docs/verify.md)."""

from __future__ import annotations

from p2pkoikoi.engine.values import value
from p2pkoikoi.session.records.record import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@value
class Check:
    """One check of a record: its name, ``pass``/``fail``/``skip`` and why."""

    name: str
    status: str  # "pass", "fail" or "skip"
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status != "fail"


@value
class VerifyReport:
    """Every check of one record, in order, and what keeps it from being complete."""

    checks: tuple[Check, ...]
    #: what keeps a valid record from being complete, one phrase each (empty: complete)
    lacks: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def complete(self) -> bool:
        """A finished match whose result both players signed (and every check holds)."""
        return self.ok and not self.lacks

    @property
    def first_failure(self) -> Check | None:
        return next((c for c in self.checks if c.status == "fail"), None)

    def to_dict(self) -> dict[str, Any]:
        first = self.first_failure
        return {
            "ok": self.ok,
            "complete": self.complete,
            "lacks": list(self.lacks),
            "first_failure": first.name if first else None,
            "checks": [
                {"name": c.name, "status": c.status, "detail": c.detail} for c in self.checks
            ],
        }


class Report:
    """The checks as they are made (a :class:`VerifyReport` once done)."""

    def __init__(self) -> None:
        self.checks: list[Check] = []
        #: what an otherwise valid record lacks, found by a check (a hidden deal's audit)
        self.lacks: list[str] = []

    def add(self, name: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(name, "pass" if ok else "fail", detail))
        return ok

    def skip(self, name: str, detail: str) -> None:
        self.checks.append(Check(name, "skip", detail))


def lacks(r: Record, rep: Report) -> list[str]:
    """What keeps ``r`` from being complete, one phrase each (empty: complete)."""
    passed = {c.name for c in rep.checks if c.status == "pass"}
    out: list[str] = []
    if r.forfeit is not None:
        who = ("host", "joiner")[r.forfeit.seat]
        out.append(f"the {who} forfeited ({r.forfeit.reason}): one player's account")
    elif r.result is None:
        out.append("the match did not finish")
    out.extend(rep.lacks)
    for seat, role in enumerate(("host", "joiner")):
        player = (r.host, r.joiner)[seat]
        name = f" ({player.name})" if player is not None else ""
        if r.match_seed is not None and f"start {role}" not in passed:
            out.append(f"the {role}{name} never signed this match (no start signature)")
        if r.result is not None and f"final signature {role}" not in passed:
            why = f": {r.missing}" if r.missing else ""
            out.append(
                f"the {role}'s final signature{why}" if why else f"the {role}'s final signature"
            )
    return out
