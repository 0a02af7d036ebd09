"""python -m indie join INVITE | host [--port N] [--rules P] [--set K=V] [--rounds N]."""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sys
from typing import Any

from . import handshake, rules
from .hidden import HiddenMatch
from .opendeal import OpenMatch
from .wire import make_invite, parse_invite


def emit(**kv: Any) -> None:
    print(json.dumps(kv), flush=True)


def close_politely(sock: socket.socket, ch: Any) -> None:
    try:
        ch.send({"type": "bye"})
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(3)
        while sock.recv(65536):
            pass
    except OSError:
        pass
    sock.close()


def play(
    sess: handshake.Session, rng: random.Random, verbose: bool, resign_at: int, drop_at: int = 0
) -> dict[str, Any]:
    log = (lambda *a: print("#", *a, file=sys.stderr, flush=True)) if verbose else None
    if sess.rules["deal"] == "open":
        return OpenMatch(sess, rng, log, resign_at).run()
    m = HiddenMatch(sess, rng, log, resign_at)
    m.drop_at = drop_at
    return m.run()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="indie")
    sub = ap.add_subparsers(dest="cmd", required=True)
    j = sub.add_parser("join")
    j.add_argument("invite", nargs="*")
    j.add_argument("--code", help="a short code (canonical form), with --addr: no discovery here")
    j.add_argument("--addr", help="HOST:PORT of the host, for --code")
    h = sub.add_parser("host")
    h.add_argument("--port", type=int, default=0)
    h.add_argument("--bind", default="127.0.0.1")
    h.add_argument("--rules", default="rulebook")
    h.add_argument("--set", action="append", default=[])
    h.add_argument("--rounds", type=int)
    h.add_argument("--turn-limit", type=int, default=600)
    for p in (j, h):
        p.add_argument("--name", default="indie")
        p.add_argument("--seed", type=int)
        p.add_argument("--verbose", action="store_true")
        p.add_argument(
            "--resign-at", type=int, default=0, help="resign at this own decision of play"
        )
        p.add_argument(
            "--rematch", type=int, default=0, help="play N more matches on the connection"
        )
    j.add_argument(
        "--drop-at", type=int, default=0, help="cut the connection before own move N, then resume"
    )
    a = ap.parse_args(argv)
    rng = random.Random(a.seed)
    if a.cmd == "join":
        if a.code:
            host, port_text = a.addr.rsplit(":", 1)
            sock = socket.create_connection((host, int(port_text)), timeout=120)
            sess = handshake.join(sock, b"", a.name, a.code)
            sess.addr = (host, int(port_text))
        else:
            addrs, secret = parse_invite(" ".join(a.invite))
            host, port = addrs[0]
            sock = socket.create_connection((host, port), timeout=120)
            sess = handshake.join(sock, secret, a.name)
            sess.addr = (host, port)
    else:
        r = rules.preset(a.rules)
        for kv in a.set:
            k, v = kv.split("=", 1)
            old = r[k]
            r[k] = (v == "true") if isinstance(old, bool) else int(v) if isinstance(old, int) else v
        if a.rounds:
            r["rounds"] = a.rounds
        srv = socket.create_server((a.bind, a.port))
        secret = os.urandom(16)
        emit(event="invite", invite=make_invite([(a.bind, srv.getsockname()[1])], secret))
        sock, _ = srv.accept()
        sock.settimeout(120)
        srv.close()
        sess = handshake.host(sock, secret, a.name, r, a.turn_limit)
    emit(event="started", role=sess.role, session_id=sess.h0.hex())
    result = play(sess, rng, a.verbose, a.resign_at, getattr(a, "drop_at", 0))
    emit(event="over", match=1, **result)
    for _ in range(a.rematch):
        handshake.rematch(sess)
        result = play(sess, rng, a.verbose, 0)
        emit(event="over", match=sess.match, **result)
    close_politely(sess.ch.sock, sess.ch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
