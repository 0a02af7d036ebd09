"""Who plays, as one value: :class:`Player`, what every opener and the link read.

A host, a joiner and a resumed player are the same person with the same key,
name, known peers, record file and time bounds; before this value each of those
was a parameter of ``open_host``, ``open_join``, ``open_resume`` and ``open_link``,
so a new one touched four signatures.  Now it is a field here and a read where it
is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.transport.limits import Timeouts
from p2pkoikoi.transport.store.identity import KnownPeers


@dataclass(frozen=True)
class Player:
    """The person at this end: identity, name, and what stays the same across matches.

    ``record_path``: where the record is written (None: the default path, picked at
    the first write); ``known_peers``: the names and keys met before (None: no
    check).  The repr leaves the private key and the known peers out (a secret, and
    a file's contents), so it can be logged.
    """

    identity: Ed25519PrivateKey = field(repr=False)
    name: str
    known_peers: KnownPeers | None = field(default=None, repr=False)
    record_path: Path | None = None
    timeouts: Timeouts = Timeouts()
