"""A malicious invite points the joiner anywhere (issue 22, item 11).

An invite is text from someone else.  One that lists eight loopback ports made
the joiner connect to all eight and send its hello to a listener on 6379 (as a
Redis server would be).  A real headless joiner is given such an invite; eight
listeners on loopback count who was dialed."""

from __future__ import annotations

import select
import socket
import subprocess
from pathlib import Path

from procs import LIMIT, cli, env_for, lines

from p2pkoikoi.session import encode_invite


def test_an_invite_of_loopback_ports_is_warned_about_and_dials_one(tmp_path: Path) -> None:
    listeners = []
    for _ in range(8):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        listeners.append(s)
    try:
        invite = encode_invite(
            [("127.0.0.1", s.getsockname()[1]) for s in listeners], bytes(range(16))
        )
        joined = subprocess.run(
            cli("join", invite, "--headless", "--bot", "random", "--timeout", "2"),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=LIMIT,
            env=env_for(tmp_path, "joiner"),
        )
        assert joined.returncode != 0
        warnings = [e["text"] for e in lines(joined.stdout) if e["event"] == "warning"]
        first = f"127.0.0.1:{listeners[0].getsockname()[1]}"
        assert warnings[0] == (
            f"the invite names {first}, a loopback address (this computer itself): right"
            " only if the host runs on this computer; an invite from anyone else should not"
            " point there"
        ), joined.stdout
        assert len(warnings) == 8 and all(
            w.endswith("besides another: not dialed") for w in warnings[1:]
        )
        # the connections the joiner made wait in the listeners' backlogs
        dialed = [s for s in listeners if select.select([s], [], [], 0)[0]]
        assert dialed == listeners[:1], [s.getsockname() for s in dialed]
    finally:
        for s in listeners:
            s.close()
