"""Resuming a hidden-deal match: cut the byte stream anywhere, resume both sides from their
records and their deal secrets (the .resume file's), and the match ends as one match."""

from __future__ import annotations

import pytest

from p2pkoikoi.engine import get_preset
from p2pkoikoi.session import LocalProtocolError, Resumed, Session, State
from p2pkoikoi.session.testing import (
    det_bytes,
    det_key,
    make_pair,
    play_until_cut,
    random_chooser,
    resumed,
    run_pair,
)
from p2pkoikoi.session.verify.check import verify_record

RULES = get_preset("online").with_settings(rounds=1, deal="hidden")


def test_cut_anywhere_in_a_hidden_match_then_resume_finishes_one_match() -> None:
    h, j = make_pair(RULES)
    sizes: list[int] = []

    def tap(seat: int, data: bytes) -> bytes:
        sizes.append(len(data))
        return data

    run_pair(h, j, random_chooser(7), tap=tap)
    full = sum(sizes)
    resumed_count = 0
    for k in range(1, 16):
        cut = full * k // 16
        h, j = make_pair(RULES)
        choose = random_chooser(7)
        if play_until_cut(h, j, choose, cut):
            continue
        if h.match is None or j.match is None:
            continue
        if h.record().is_complete and j.record().is_complete:
            continue
        nh, nj = resumed(h, f"resume/h{cut}"), resumed(j, f"resume/j{cut}")
        ev_h, ev_j = run_pair(nh, nj, choose)
        assert isinstance(ev_h[0], Resumed) and isinstance(ev_j[0], Resumed)
        assert nh.state is State.DONE and nj.state is State.DONE
        rh, rj = nh.record(), nj.record()
        assert rh.actions == rj.actions and rh.result == rj.result
        assert verify_record(rh).ok and verify_record(rj).ok
        resumed_count += 1
    assert resumed_count >= 8


def test_resuming_a_hidden_match_needs_the_deal_secret() -> None:
    h, j = make_pair(RULES)
    play_until_cut(h, j, random_chooser(1), 6000)
    with pytest.raises(LocalProtocolError, match="secret"):
        Session.resume(
            h.record(),
            h.role,
            identity_key=det_key("host"),
            resume_secret=h.resume_secret,
            entropy=det_bytes("e"),
        )
    with pytest.raises(LocalProtocolError, match="secret gives"):
        resumed(h, "resume/x", hidden_secret=bytes(32))


@pytest.mark.parametrize(
    ("who", "lost"),
    [("host", 1), ("host", 2), ("host", 5), ("joiner", 1), ("joiner", 3), ("joiner", 8)],
)
def test_a_side_that_lost_its_last_moves_takes_them_back_from_the_peer(who: str, lost: int) -> None:
    """Our record lost its last moves (a crash before the disk had them): the peer,
    ahead, re-sends them; our table makes exactly those moves again and play goes on."""
    import dataclasses

    h, j = make_pair(RULES)
    play_until_cut(h, j, random_chooser(3), 9000 + 700 * lost)
    assert h.match is not None and j.match is not None
    victim, other = (h, j) if who == "host" else (j, h)
    rec = victim.record()
    short = dataclasses.replace(
        rec, actions=rec.actions[:-lost], result=None, final_sigs=(None, None)
    )
    nv = Session.resume(
        short,
        victim.role,
        identity_key=det_key(victim.role.value),
        resume_secret=victim.resume_secret,
        entropy=det_bytes(f"entropy/resume/lost{who}{lost}"),
        hidden_secret=victim.hidden_secret,
    )
    no = resumed(other, f"resume/lost-other{who}{lost}")
    nh, nj = (nv, no) if who == "host" else (no, nv)
    run_pair(nh, nj, random_chooser(4))
    assert nh.state is State.DONE and nj.state is State.DONE
    assert nh.record().actions == nj.record().actions
    assert verify_record(nh.record()).ok and verify_record(nj.record()).ok
