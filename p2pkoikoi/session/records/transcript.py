"""The transcript prefix a record implies: both auths and the accept (``T_c``).

Shared by :mod:`~p2pkoikoi.session.verify.check` and :mod:`~p2pkoikoi.session.records.resume`,
so the entries are spelled once (protocol/README.md section 6).
"""

from __future__ import annotations

import p2pkoikoi.session.crypto as crypto
from p2pkoikoi.session.records.record import Record


def transcript_to_accept(r: Record) -> bytes:
    """The transcript after both auths and the accept (``T_c``, what the commitment binds)."""
    assert r.session_id is not None and r.rules is not None
    assert r.host is not None and r.joiner is not None
    rules = r.rules.encode()
    t = transcript_origin(r.session_id, r.match_number, r.previous)
    t = crypto.absorb(t, "auth", "host", r.host.name, r.host.key, rules, r.turn_limit)
    t = crypto.absorb(t, "auth", "joiner", r.joiner.name, r.joiner.key, b"", 0)
    return crypto.absorb(t, "accept", r.rules.fingerprint())


def transcript_origin(h0: bytes, match_number: int, previous: bytes | None) -> bytes:
    """T0: the connection's first match starts from H0 alone, a rematch from H0, its
    number and the previous match's final transcript (protocol/README.md section 13)."""
    if match_number == 1 or previous is None:
        return crypto.transcript_start(h0)
    return crypto.rematch_start(h0, match_number, previous)
