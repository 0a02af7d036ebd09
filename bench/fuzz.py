"""Fuzz the frame decoder and the session: seeded, reproducible, no crash allowed.

Long-running: never part of the test suite.  Four kinds of input, each case
drawn from its own ``random.Random(f"{seed}/{kind}/{case}")`` so any one case
can be replayed alone (``--only KIND --case N``):

``random``    random bytes (random length, sometimes a plausible frame header)
              into ``decode_frame`` and, for every complete frame, ``decode_message``;
``frame``     a valid message of every type (from a real match) mutated at the
              byte level or the msgpack level (a field's value replaced by one of
              another type or an extreme, a key added or removed, the type or
              version changed), framed, into the decoder;
``stream``    a valid byte stream of one direction of a whole match, mutated at
              the byte level (flips, inserts, deletes, duplicates, truncation,
              a length field set to 0 / 1 / 65536 / 65537 / 2^32-1), fed in random
              chunks to a fresh receiving :class:`Session` that also plays its own
              side of the recorded match;
``message``   the same, but one message is mutated *inside* the encryption (at
              the msgpack level, then sealed with the right key and nonce), so the
              session's handlers see hostile content that decrypts.

The only exceptions allowed are the protocol's own (``ProtocolError`` and
other ``KoiKoiError`` subclasses); a session that failed must report the
same error again on the next call.  Anything else is a crash: printed with
its kind and case number, and the exit status is 1.  Usage::

    nohup python bench/fuzz.py --seed 1 > bench/fuzz.out 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgpack  # type: ignore[import-untyped]

from p2pkoikoi.engine import KoiKoiError, get_preset
from p2pkoikoi.session import (
    NEED_DATA,
    ProtocolError,
    SendAction,
    Session,
    State,
    channel,
    wire,
)
from p2pkoikoi.session.testing import make_pair, random_chooser, run_pair

KINDS = ("random", "frame", "stream", "message")
DEFAULT_COUNTS = {"random": 450_000, "frame": 430_000, "stream": 60_000, "message": 60_000}
INTERESTING_LENGTHS = (0, 1, 2, 31, 32, 33, 65535, 65536, 65537, 2**31, 2**32 - 1)


# ---------------------------------------------------------------------- the corpus
class KeyCapture(channel.Channel):
    """A Channel that remembers its key (installed while recording the corpus)."""

    keys: list[bytes] = []

    def __init__(self, key: bytes) -> None:
        super().__init__(key)
        KeyCapture.keys.append(key)


@dataclass
class Direction:
    """One direction of a recorded match, as the receiver sees it."""

    receiver: str  # "host" or "joiner"
    frames: list[bytes]  # whole frames (header included), in order
    plaintexts: list[bytes]  # message payload of each frame (the hello is plaintext)
    key: bytes  # the sender's key (seals frames 1..n with counters 0..n-1)
    local_actions: list[str]  # the receiver's own actions, in order


@dataclass
class Corpus:
    label: str
    directions: tuple[Direction, Direction]
    messages: list[bytes]  # valid plaintext messages of every type


def split_frames(data: bytes) -> list[bytes]:
    out = []
    while data:
        payload, rest = wire.decode_frame(data)
        assert payload is not None
        out.append(data[: wire.HEADER + len(payload)])
        data = rest
    return out


def record_corpus(label: str) -> Corpus:
    rules = get_preset("online").with_settings(rounds=1)
    original = channel.Channel
    KeyCapture.keys = []
    channel.Channel = KeyCapture  # type: ignore[misc]
    try:
        host, joiner = make_pair(rules, label=label)
        streams: tuple[bytearray, bytearray] = (bytearray(), bytearray())

        def tap(seat: int, data: bytes) -> bytes:
            streams[seat].extend(data)
            return data

        run_pair(host, joiner, random_chooser(7), tap=tap)
    finally:
        channel.Channel = original  # type: ignore[misc]
    assert host.state is State.DONE and joiner.state is State.DONE
    # channel creation order: joiner (send, recv) or host first, depending on who got the hello
    # first; identify each key by opening the first encrypted frame of each direction.
    dirs = []
    for sender, receiver_sess, receiver in ((0, joiner, "joiner"), (1, host, "host")):
        frames = split_frames(bytes(streams[sender]))
        key = next(k for k in KeyCapture.keys if _opens(k, frames[1]))
        chan = channel.Channel(key)
        plains = [frames[0][wire.HEADER :]] + [chan.open(f[wire.HEADER :]) for f in frames[1:]]
        seat = 1 if receiver == "joiner" else 0
        local = [a.action for a in receiver_sess.record().actions if a.seat == seat]
        dirs.append(Direction(receiver, frames, plains, key, local))
    # a few side-channel messages too
    extra = [
        wire.encode_message(m)
        for m in (
            wire.PingMsg(nonce=b"12345678"),
            wire.PongMsg(nonce=b""),
            wire.ChatMsg(text="hello there"),
            wire.AbortMsg(reason="bye"),
            wire.ByeMsg(),
            wire.DeclineMsg(reason="no", expected=rules.encode()),
            wire.ResignMsg(seq=3, sig=bytes(64)),
        )
    ]
    messages = dirs[0].plaintexts + dirs[1].plaintexts + extra
    return Corpus(label, (dirs[0], dirs[1]), messages)


def _opens(key: bytes, frame: bytes) -> bool:
    try:
        channel.Channel(key).open(frame[wire.HEADER :])
    except ProtocolError:
        return False
    return True


# ---------------------------------------------------------------------- mutators
def mutate_bytes(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 1, 2, 3, 8))):
        op = rng.randrange(9)
        if op == 0 and b:  # flip a bit
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:  # set a byte
            b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x7F, 0x80, 0xC1, rng.randrange(256)))
        elif op == 2:  # insert bytes
            i = rng.randrange(len(b) + 1)
            b[i:i] = rng.randbytes(rng.choice((1, 2, 4, rng.randrange(1, 64))))
        elif op == 3 and b:  # delete a range
            i = rng.randrange(len(b))
            del b[i : i + rng.randrange(1, 16)]
        elif op == 4 and b:  # truncate
            del b[rng.randrange(len(b)) :]
        elif op == 5 and b:  # duplicate a range
            i = rng.randrange(len(b))
            j = min(len(b), i + rng.randrange(1, 64))
            b[j:j] = b[i:j]
        elif op == 6 and pool:  # splice with another valid input
            other = rng.choice(pool)
            i, j = rng.randrange(len(b) + 1), rng.randrange(len(other) + 1)
            b = b[:i] + bytearray(other[j:])
        elif op == 7 and len(b) >= 4:  # an interesting length field somewhere
            i = rng.randrange(len(b) - 3)
            b[i : i + 4] = rng.choice(INTERESTING_LENGTHS).to_bytes(4, "big")
        elif op == 8 and b:  # swap two bytes
            i, j = rng.randrange(len(b)), rng.randrange(len(b))
            b[i], b[j] = b[j], b[i]
    return bytes(b)


def odd_value(rng: random.Random) -> Any:
    return rng.choice(
        (
            None,
            True,
            False,
            0,
            -1,
            1,
            2,
            99,
            100,
            2**31 - 1,
            2**31,
            2**63 - 1,
            -(2**63),
            2**64 - 1,
            1.5,
            float("nan"),
            "",
            "x" * 65,
            "x" * 201,
            "\x00\x1b[2J",
            "play 1a",
            "koikoi",
            "0" * 64,
            "g" * 64,
            b"",
            bytes(31),
            bytes(32),
            bytes(33),
            bytes(64),
            bytes(8193),
            [],
            [1, 2],
            [1, 2, 3],
            list(range(9)),
            {},
            {"a": 1},
            {1: 2},
            msgpack.ExtType(1, b"x"),
        )
    )


def mutate_message(rng: random.Random, payload: bytes, pool: list[bytes]) -> bytes:
    """At the msgpack level when it parses; else at the byte level."""
    if rng.random() < 0.3:
        return mutate_bytes(rng, payload, pool)
    obj = msgpack.unpackb(payload, raw=False)
    for _ in range(rng.choice((1, 1, 2))):
        op = rng.randrange(6)
        keys = list(obj)
        if op == 0 and keys:
            obj[rng.choice(keys)] = odd_value(rng)
        elif op == 1 and keys:
            del obj[rng.choice(keys)]
        elif op == 2:
            obj[rng.choice(("extra", "rules", "sig", "seq", "nonce", "x" * 40))] = odd_value(rng)
        elif op == 3:
            obj["type"] = rng.choice(
                [*wire.TYPE_NAMES.values(), "resume", "", "HELLO", 1, None, b"hello"]
            )
        elif op == 4:
            obj["v"] = rng.choice((0, 2, -1, True, None, "1", 2**64 - 1))
        elif op == 5 and "seq" in obj and isinstance(obj["seq"], int):
            obj["seq"] += rng.choice((-1, 1, 2, -(2**31)))
    try:
        out: bytes = msgpack.packb(obj, use_bin_type=True)
    except (OverflowError, TypeError, ValueError):
        return mutate_bytes(rng, payload, pool)
    return out


def chunks(rng: random.Random, data: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rng.choice((1, 3, 7, 64, 1000, 65536, rng.randrange(1, 200)))
        out.append(data[i : i + n])
        i += n
    return out


# ---------------------------------------------------------------------- targets
class Crash(Exception):
    pass


def decode_all(data: bytes) -> None:
    """Every frame in ``data`` through the decoder; only protocol errors allowed."""
    rest = data
    while True:
        payload, rest = wire.decode_frame(rest)
        if payload is None:
            return
        wire.decode_message(payload)


def fresh_receiver(corpus: Corpus, d: Direction) -> Session:
    rules = get_preset("online").with_settings(rounds=1)
    host, joiner = make_pair(rules, label=corpus.label)
    return host if d.receiver == "host" else joiner


def feed(session: Session, parts: list[bytes], local: list[str]) -> None:
    """Feed ``parts``; play the receiver's recorded actions on its turns; end of stream."""
    todo = list(local)
    for part in [*parts, b""]:
        session.receive_data(part)
        while True:
            try:
                ev = session.next_event()
            except KoiKoiError as exc:
                try:
                    session.next_event()
                except KoiKoiError as again:
                    if again is not exc:
                        raise Crash(f"a failed session raised another error: {again!r}") from None
                else:
                    raise Crash("a failed session did not report its error again") from None
                session.data_to_send()
                return
            if ev is NEED_DATA:
                break
        session.data_to_send()
        m = session.match
        while (
            todo and session.state is State.PLAY and m is not None and m.to_act == session.our_seat
        ):
            session.send(SendAction(todo.pop(0)))
            m = session.match


def case_random(rng: random.Random, corpus: Corpus) -> None:
    n = rng.choice((0, 1, 3, 4, 5, 16, 100, rng.randrange(0, 2000)))
    data = rng.randbytes(n)
    if rng.random() < 0.5 and n >= 4:  # a plausible header: reach decode_message often
        data = (n - 4).to_bytes(4, "big") + data[4:] if n > 4 else data
    decode_all(data)


def case_frame(rng: random.Random, corpus: Corpus) -> None:
    payload = mutate_message(rng, rng.choice(corpus.messages), corpus.messages)
    if 1 <= len(payload) <= wire.MAX_FRAME:
        decode_all(wire.encode_frame(payload))
    if payload:
        wire.decode_message(payload)


def case_stream(rng: random.Random, corpus: Corpus) -> None:
    d = rng.choice(corpus.directions)
    stream = b"".join(d.frames)
    # mutate around a random frame boundary so late frames are reached too
    cut = sum(len(f) for f in d.frames[: rng.randrange(len(d.frames))])
    data = stream[:cut] + mutate_bytes(rng, stream[cut:], d.frames)
    feed(fresh_receiver(corpus, d), chunks(rng, data), d.local_actions)


def case_message(rng: random.Random, corpus: Corpus) -> None:
    d = rng.choice(corpus.directions)
    i = rng.randrange(len(d.frames))
    bad = mutate_message(rng, d.plaintexts[i], corpus.messages)
    if i == 0:
        frame = wire.encode_frame(bad) if 1 <= len(bad) <= wire.MAX_FRAME else b"\0\0\0\0"
    else:
        chan = channel.Channel(d.key)
        chan.counter = i - 1
        frame = wire.encode_frame(chan.seal(bad)) if bad else b"\0\0\0\0"
    data = b"".join(d.frames[:i]) + frame + b"".join(d.frames[i + 1 :])
    feed(fresh_receiver(corpus, d), chunks(rng, data), d.local_actions)


CASES: dict[str, Callable[[random.Random, Corpus], None]] = {
    "random": case_random,
    "frame": case_frame,
    "stream": case_stream,
    "message": case_message,
}


def run_case(kind: str, seed: int, n: int, corpus: Corpus) -> str | None:
    """None, or the crash as text."""
    rng = random.Random(f"{seed}/{kind}/{n}")
    try:
        CASES[kind](rng, corpus)
    except KoiKoiError:  # ProtocolError and the engine's own errors: the allowed outcomes
        return None
    except Exception:
        return traceback.format_exc()
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    for kind in KINDS:
        ap.add_argument(f"--{kind}", type=int, default=DEFAULT_COUNTS[kind], metavar="N")
    ap.add_argument("--only", choices=KINDS, help="run one kind (with --case: one case)")
    ap.add_argument("--case", type=int, help="replay this one case number of --only")
    args = ap.parse_args()
    corpus = record_corpus(f"fuzz-{args.seed}")
    if args.case is not None:
        assert args.only, "--case needs --only"
        crash = run_case(args.only, args.seed, args.case, corpus)
        print(crash or "no crash")
        return 1 if crash else 0
    kinds = (args.only,) if args.only else KINDS
    totals: dict[str, Any] = {}
    crashes: list[str] = []
    start = time.monotonic()
    for kind in kinds:
        count: int = getattr(args, kind)
        t0 = time.monotonic()
        for n in range(count):
            crash = run_case(kind, args.seed, n, corpus)
            if crash:
                crashes.append(f"{kind} case {n}:\n{crash}")
                print(f"CRASH {kind} case {n} (replay: --only {kind} --case {n})\n{crash}")
        totals[kind] = {"inputs": count, "seconds": round(time.monotonic() - t0, 1)}
        print(f"{kind}: {count} inputs in {totals[kind]['seconds']}s", flush=True)
    result = {
        "seed": args.seed,
        "inputs": sum(t["inputs"] for t in totals.values()),
        "by_kind": totals,
        "crashes": len(crashes),
        "seconds": round(time.monotonic() - start, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(result, indent=1), flush=True)
    return 1 if crashes else 0


if __name__ == "__main__":
    raise SystemExit(main())
