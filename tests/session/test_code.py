"""Short codes, invites and the PGP word list: parsing as people type, paste and read aloud."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pkoikoi.cli import protect_read_aloud
from p2pkoikoi.session import (
    Invite,
    InviteError,
    ShortCode,
    decode_code,
    decode_invite,
    encode_code,
    encode_invite,
    parse_join_target,
    spaced_invite,
)
from p2pkoikoi.session.codes.invite import Address
from p2pkoikoi.session.codes.wordlist import EVEN, EVEN_ORIGINAL, ODD, ODD_ORIGINAL

SECRET = bytes(range(16))
INVITE = encode_invite([("192.168.1.20", 47474), ("2001:db8::7", 47474)], SECRET)


# ------------------------------------------------------------------ the word list
def test_word_list_known_properties() -> None:
    assert len(EVEN) == len(ODD) == 256
    assert len(set(EVEN)) == len(set(ODD)) == 256  # unique within each list
    assert not set(EVEN) & set(ODD)  # and between them: a swapped pair is detectable
    assert list(EVEN) == sorted(EVEN)  # the published order is alphabetical...
    odd = list(ODD)  # ...except one pair of the odd list, as published (0x09, 0x0A)
    assert odd[9:11] == ["applicant", "apollo"]
    assert odd[:9] + odd[11:] == sorted(odd[:9] + odd[11:])
    assert (EVEN_ORIGINAL[0], EVEN_ORIGINAL[255]) == ("aardvark", "Zulu")
    assert (ODD_ORIGINAL[0], ODD_ORIGINAL[255]) == ("adroitness", "Yucatan")
    # the list's published example: E5 82 94 F2 = "topmost Istanbul Pluto vagabond"
    data = bytes.fromhex("E58294F2")
    spoken = [(EVEN_ORIGINAL, ODD_ORIGINAL)[i % 2][b] for i, b in enumerate(data)]
    assert spoken == ["topmost", "Istanbul", "Pluto", "vagabond"]
    assert all(w.isalpha() and w.isascii() for w in EVEN + ODD)
    # no word is a prefix of another in its list, so run-together words split one way
    for words in (EVEN, ODD):
        assert not [(a, b) for a in words for b in words if a != b and b.startswith(a)]


@given(st.integers(1, 99), st.binary(min_size=2, max_size=2))
def test_code_round_trip(number: int, secret: bytes) -> None:
    text = encode_code(number, secret)
    assert decode_code(text) == ShortCode(number, tuple(text.split("-")[1:]))
    assert decode_code(text).secret == secret
    assert decode_code(text.upper().replace("-", " ")) == decode_code(text)


@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.ip_addresses().map(str),
                st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]\.example", fullmatch=True),
            ),
            st.integers(1, 65535),
        ),
        min_size=1,
        max_size=8,
    ),
    st.binary(min_size=16, max_size=16),
)
def test_invite_round_trip(addrs: list[tuple[str, int]], secret: bytes) -> None:
    text = encode_invite(addrs, secret)
    inv = decode_invite(text)
    assert inv.secret == secret and [a.port for a in inv.addresses] == [p for _, p in addrs]
    assert decode_invite(spaced_invite(text)) == inv
    assert str(inv) == text
    assert not any(group.startswith("-") for group in spaced_invite(text).split())


# ------------------------------------------------------------------ parsing, as typed
TYPED: list[tuple[str, str]] = [  # (as typed, what it is)
    ("7-crossover-clockwork", "7-crossover-clockwork"),
    ("7 crossover clockwork", "7-crossover-clockwork"),
    ("7 Crossover CLOCKWORK", "7-crossover-clockwork"),
    ('"7-crossover-clockwork"', "7-crossover-clockwork"),
    ("'7 crossover clockwork'", "7-crossover-clockwork"),
    ("\u201c7-crossover-clockwork\u201d", "7-crossover-clockwork"),
    ("7crossoverclockwork", "7-crossover-clockwork"),
    ("7 crossoverclockwork", "7-crossover-clockwork"),
    ("07, crossover. clockwork", "7-crossover-clockwork"),
    ("  7 -crossover -clockwork  ", "7-crossover-clockwork"),
    ("99-yucatan-zulu", "99-yucatan-zulu"),
    (INVITE, INVITE),
    (INVITE.upper(), INVITE),
    (f"'{INVITE}'", INVITE),
    (spaced_invite(INVITE), INVITE),
    (spaced_invite(INVITE).upper(), INVITE),
    (INVITE.replace("-", "- ").replace("+", "+\n"), INVITE),
    (" ".join(INVITE[i : i + 5] for i in range(0, len(INVITE), 5)), INVITE),
]


@pytest.mark.parametrize(("typed", "meant"), TYPED)
def test_parse_as_typed(typed: str, meant: str) -> None:
    assert str(parse_join_target(typed)) == meant


BAD: list[tuple[str, str]] = [  # (as typed, the one line that names the mistake)
    ("", "no invite or code given"),
    ("hello", "not an invite or a code"),
    ("7", "code: the words are missing after 7"),
    ("7-crossover", "code: 2 words follow the number, not 1"),
    ("7-crossover-clockwork-cobra", "code: 2 words follow the number, not 3"),
    (
        "7-clockwork-crossover",
        "code: the two words are swapped: it should be 7-crossover-clockwork",
    ),
    ("7-crosover-clockwork", "code: 'crosover' is not a code word (did you mean 'crossover'?)"),
    ("7-crossover-clokwork", "code: 'clokwork' is not a code word (did you mean 'clockwork'?)"),
    ("7-crossover-xyzzy", "code: 'xyzzy' is not a code word"),
    ("7-crossover-crossover", "code: 'crossover' is a first word, not a second one"),
    ("7-clockwork-clockwork", "code: 'clockwork' is a second word, not a first one"),
    ("0-crossover-clockwork", "code: the number 0 is outside 1..9999"),
    ("12345-crossover-clockwork", "code: the number 12345 is outside 1..9999"),
    ("7-cr0ssover-clockwork", "code: '0' cannot appear in a code's words"),
    ("7-crossöver-clockwork", "code: 'ö' cannot appear in a code"),
    ("koi1-192.0.2.7-7777-aaaqeayeaudaocajbifqydiob4-eybt", "an invite from an older release"),
    ("koi9-1", "not an invite: it should start with koi2-"),
    (INVITE[:-1] + ("a" if INVITE[-1] != "a" else "b"), "invite checksum does not match"),
    (INVITE.replace("47474", "47475", 1), "invite checksum does not match"),
    (INVITE[:30], "invite is incomplete"),
    ("koi2-192.0.2.7_1-aaaa-aa[a", "'[' cannot appear in an invite"),
    ("koi2-\u00fcn_1-aaaa-aaaa", "'ü' cannot appear in an invite"),
    ("koi2-" + "a" * 2000, "longer than 1000 characters"),
]


@pytest.mark.parametrize(("typed", "error"), BAD)
def test_each_mistake_is_named(typed: str, error: str) -> None:
    with pytest.raises(InviteError) as info:
        parse_join_target(typed)
    message = str(info.value)
    assert error in message and "\n" not in message


def test_encoder_limits() -> None:
    with pytest.raises(InviteError, match="at most 8 addresses"):
        encode_invite([("192.0.2.1", p) for p in range(1, 10)], SECRET)
    with pytest.raises(InviteError, match="at least one address"):
        encode_invite([], SECRET)
    with pytest.raises(InviteError, match="outside 1..65535"):
        encode_invite([("192.0.2.1", 0)], SECRET)
    with pytest.raises(InviteError, match="outside 1..9999"):
        encode_code(10000, bytes(2))
    assert decode_invite(INVITE) == Invite(
        (Address("192.168.1.20", 47474), Address("2001:db8::7", 47474)), SECRET
    )
    assert Address("2001:db8::7", 1).display == "[2001:db8::7]:1"


# ------------------------------------------------------------------ the command line
def test_read_aloud_groups_starting_with_a_hyphen_reach_join() -> None:
    argv = ["join", "koi2-192.0.2.7_1-", "aaaa", "-eybt", "--name", "-x", "--headless"]
    assert protect_read_aloud(argv) == [
        "join",
        "koi2-192.0.2.7_1-",
        "aaaa",
        " -eybt",
        "--name",
        "-x",
        "--headless",
    ]
    assert protect_read_aloud(["host", "-h"]) == ["host", "-h"]


def test_join_names_a_bad_code_in_one_line_exit_2() -> None:
    # the last group starts with a hyphen, as an older release showed it: not an option
    proc = subprocess.run(
        [sys.executable, "-m", "p2pkoikoi", "join", "7", "crosover", "-clockwork"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        "p2pkoikoi: code: 'crosover' is not a code word (did you mean 'crossover'?)"
    )
