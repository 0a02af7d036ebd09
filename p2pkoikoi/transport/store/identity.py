"""Long-term identities, known peers and where files go.

Why files at all: the protocol proves who signed a match with an Ed25519 key,
which only means something if the key outlives one match.  So each user has
one key in the config directory, created on first use, and a ``known_peers``
file remembering which fingerprint each opponent's name had (trust on first
use, as SSH does): a changed key is reported, never silently accepted.

Every file is written atomically (temporary file in the same directory,
``fsync``, ``rename``) so a crash leaves the old or the new version, never half
of one.  Paths follow XDG: ``$XDG_CONFIG_HOME/p2pkoikoi`` (default
``~/.config/p2pkoikoi``) for the identity, overridable by ``--config-dir`` or
``$P2PKOIKOI_CONFIG_DIR``; ``$XDG_DATA_HOME/p2pkoikoi/records`` (default
``~/.local/share/p2pkoikoi/records``) for match records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import json
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.engine.rules import RuleSet
from p2pkoikoi.session.crypto import fingerprint, public_bytes
from p2pkoikoi.transport.errors import ConfigError, IdentityChangedError
from p2pkoikoi.transport.store.skeleton import differences, name_key

APP: Final = "p2pkoikoi"
IDENTITY_FILE: Final = "identity.key"
KNOWN_PEERS_FILE: Final = "known_peers"
RECORD_SUFFIX: Final = ".koikoi"


def config_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The configuration directory: ``override``, ``$P2PKOIKOI_CONFIG_DIR``, then XDG."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("P2PKOIKOI_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".config"
    return base / APP


def records_dir() -> Path:
    """Where match records go by default (``$XDG_DATA_HOME/p2pkoikoi/records``)."""
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / APP / "records"


def check_record_path(path: Path | None) -> None:
    """Raise :class:`ConfigError` unless a record can be written at ``path``
    (``None``: in :func:`records_dir`, where records go by default).

    Called before listening or dialing, so that a record path that is a
    directory, or lies in a directory that cannot be created or written, fails
    at once with one line instead of in the middle of the handshake.
    """
    if path is not None and path.is_dir():
        raise ConfigError(f"cannot write the record {path}: it is a directory")
    if path is not None and not path.parent.is_dir():  # a typo is not a reason to mkdir -p
        raise ConfigError(
            f"cannot write the record {path}: the directory {path.parent} does not exist"
        )
    directory = records_dir() if path is None else path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".probe.", suffix=".tmp")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        where = f"the record {path}" if path is not None else f"records in {directory}"
        raise ConfigError(f"cannot write {where}: {exc.strerror or exc}") from None


def atomic_write(path: Path, data: bytes, mode: int = 0o644, *, durable: bool = True) -> None:
    """Replace ``path`` by ``data`` so that a crash leaves either version whole.

    Writes a temporary file in the same directory (so ``rename`` is atomic),
    ``fsync``s it, renames it over ``path``, then ``fsync``s the directory so
    the rename itself survives a power cut.  ``durable=False`` skips both
    flushes (for files that a power cut may lose: a record before its match
    started, which nothing can resume anyway).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` survive a power cut (best effort: some file
    systems cannot open or sync a directory, and lose nothing else by it)."""
    try:
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def load_or_create_identity(directory: Path) -> Ed25519PrivateKey:
    """The user's Ed25519 key from ``directory/identity.key``; created (0600) if missing."""
    path = directory / IDENTITY_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            atomic_write(path, pem, mode=0o600)
        except OSError as exc:
            raise ConfigError(f"cannot create identity {path}: {exc.strerror or exc}") from None
        return key
    except OSError as exc:
        raise ConfigError(f"cannot read identity {path}: {exc.strerror or exc}") from None
    check_private_mode(path)
    try:
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ConfigError(
            f"{path} is not a readable identity key; move it away to make a new one"
        ) from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ConfigError(f"{path} holds a key that is not Ed25519")
    return loaded


def check_private_mode(path: Path) -> None:
    """Refuse a private file that other users may read, as ssh refuses such a key.

    The identity key signs every move a player makes: a copy in someone
    else's hands is that player's signature.  The program never loosens the
    mode itself; it says how to fix it, so the user notices the exposure.
    """
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if mode & 0o077:
        raise ConfigError(
            f"{path} can be read by other users (permissions {mode & 0o777:04o}); "
            f"it must be private: chmod 600 {path}"
        )


def own_fingerprint(key: Ed25519PrivateKey) -> str:
    return fingerprint(public_bytes(key))


#: how each fingerprint character is read aloud: letters by the ICAO/NATO
#: alphabet (understood over a bad phone line in most languages), digits as words
_SPOKEN: Final = {
    **{
        c: w
        for c, w in zip(
            "abcdefghijklmnopqrstuvwxyz",
            [
                "alfa",
                "bravo",
                "charlie",
                "delta",
                "echo",
                "foxtrot",
                "golf",
                "hotel",
                "india",
                "juliett",
                "kilo",
                "lima",
                "mike",
                "november",
                "oscar",
                "papa",
                "quebec",
                "romeo",
                "sierra",
                "tango",
                "uniform",
                "victor",
                "whiskey",
                "xray",
                "yankee",
                "zulu",
            ],
            strict=True,
        )
    },
    **dict(zip("234567", ["two", "three", "four", "five", "six", "seven"], strict=True)),
}


def spoken_fingerprint(fp: str) -> str:
    """A fingerprint as words to read aloud, one group of four per ``/``.

    >>> spoken_fingerprint("s67t-rovc")
    'sierra six seven tango / romeo oscar victor charlie'
    """
    return " / ".join(" ".join(_SPOKEN[c] for c in group) for group in fp.split("-"))


class PeerStatus(enum.Enum):
    """What ``known_peers`` says of a peer's identity."""

    KNOWN = "known"  #: this fingerprint was seen before
    NEW = "new"  #: neither this fingerprint nor this name was seen before
    CHANGED = "changed"  #: this name was seen before, with another key


@dataclasses.dataclass(frozen=True)
class PeerCheck:
    """The answer of :meth:`KnownPeers.check`: the status, and for a changed key
    the fingerprints the name had before."""

    status: PeerStatus
    name: str
    fingerprint: str
    previous: tuple[str, ...] = ()
    #: the known name this one looks like, when it is not the same string (a changed
    #: key found by the confusable skeleton: "jоiny" with a Cyrillic о for "joiny")
    looks_like: str = ""

    @property
    def warning(self) -> str:
        """The one line a person reads about a changed key ("" otherwise)."""
        if self.status is not PeerStatus.CHANGED:
            return ""
        if self.looks_like:
            odd = differences(self.name, self.looks_like)
            return (
                f"{self.name} looks like {self.looks_like} ({odd or 'another case'}), whom "
                f"you know as {', '.join(self.previous)}, but has the identity "
                f"{self.fingerprint}; someone may be impersonating them"
            )
        return (
            f"{self.name}'s identity changed: known as {', '.join(self.previous)}, now "
            f"{self.fingerprint}; if you did not expect this, someone may be impersonating them"
        )


AskNewKey = Callable[[PeerCheck, RuleSet], Awaitable[bool]]


class KnownPeers:
    """Fingerprint -> name, remembered across matches (``known_peers``, JSON).

    Keyed by fingerprint because the key is the identity and the name only a
    label anybody can choose: two friends may both be called "player", and a
    friend may rename themselves without becoming a stranger.  A name that
    arrives with a fingerprint never seen before, while it is known with
    another, is the case SSH warns about: the caller decides (a question at the
    table, an error in headless mode unless ``--accept-new-key``).

    The file is ``{"version": 2, "peers": {FINGERPRINT: {"name": NAME}}}``; the
    first release's ``{NAME: FINGERPRINT}`` is read and rewritten in this form.
    """

    VERSION: Final = 2

    def __init__(
        self,
        path: Path,
        peers: Mapping[str, str] | None = None,
        *,
        accept_new_key: bool = False,
    ) -> None:
        self.path = path
        #: fingerprint -> the name it last used
        self.peers: dict[str, str] = dict(peers or {})
        #: ``--accept-new-key``: a changed key is remembered with a warning, not refused
        self.accept_new_key = accept_new_key
        #: a person to ask about a changed key (the host's table); None: decide by
        #: ``accept_new_key`` alone.  Called with the check and the rules on offer.
        self.ask: AskNewKey | None = None

    @classmethod
    def load(cls, directory: Path, *, accept_new_key: bool = False) -> KnownPeers:
        path = directory / KNOWN_PEERS_FILE
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path, accept_new_key=accept_new_key)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
        bad = ConfigError(
            f'{path} is not a known-peers file (JSON: {{"version": 2, "peers": '
            '{FINGERPRINT: {"name": NAME}}}); move it away to start a new one'
        )
        if not isinstance(obj, dict):
            raise bad
        if "version" not in obj:  # the first release: {name: fingerprint}
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
                raise bad
            return cls(path, {fp: name for name, fp in obj.items()}, accept_new_key=accept_new_key)
        peers = obj.get("peers")
        if obj.get("version") != cls.VERSION or not isinstance(peers, dict):
            raise bad
        out: dict[str, str] = {}
        for fp, entry in peers.items():
            if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)):
                raise bad
            out[str(fp)] = entry["name"]
        return cls(path, out, accept_new_key=accept_new_key)

    def fingerprints_of(self, name: str) -> tuple[str, ...]:
        """Every fingerprint known under ``name`` or a name that looks like it (the
        same UTS #39 confusable skeleton, case folded: transport/store/skeleton.py), sorted."""
        key = name_key(name)
        return tuple(sorted(fp for fp, known in self.peers.items() if name_key(known) == key))

    def check(self, name: str, peer_fingerprint: str) -> PeerCheck:
        """Look a peer up without changing anything (see :meth:`remember`)."""
        if peer_fingerprint in self.peers:
            return PeerCheck(PeerStatus.KNOWN, name, peer_fingerprint)
        previous = self.fingerprints_of(name)
        if previous:
            names = sorted({self.peers[fp] for fp in previous} - {name})
            like = names[0] if names and all(self.peers[fp] != name for fp in previous) else ""
            return PeerCheck(PeerStatus.CHANGED, name, peer_fingerprint, previous, like)
        return PeerCheck(PeerStatus.NEW, name, peer_fingerprint)

    def admit(self, name: str, peer_fingerprint: str) -> PeerCheck:
        """The peer a match is about to be played with: remembered, or refused.

        A changed key raises :class:`IdentityChangedError` unless the user
        accepted it (``--accept-new-key``, or the question on the table, which
        calls :meth:`remember` first); otherwise the peer is remembered.
        """
        check = self.check(name, peer_fingerprint)
        if check.status is PeerStatus.CHANGED and not self.accept_new_key:
            raise IdentityChangedError(
                f"{check.warning}: not playing (if they really have a new key, play "
                "again with --accept-new-key)"
            )
        self.remember(name, peer_fingerprint)
        return check

    def remember(self, name: str, peer_fingerprint: str) -> None:
        """Store (or relabel) a peer the user plays with, and save the file."""
        if self.peers.get(peer_fingerprint) == name:
            return
        self.peers[peer_fingerprint] = name
        self.save()

    def save(self) -> None:
        body = {
            "version": self.VERSION,
            "peers": {fp: {"name": name} for fp, name in sorted(self.peers.items())},
        }
        data = json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        try:
            atomic_write(self.path, data.encode("utf-8"), mode=0o600)
        except OSError as exc:
            raise ConfigError(f"cannot write {self.path}: {exc.strerror or exc}") from None


_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")


def default_record_path(peer: str | None, now: datetime.datetime | None = None) -> Path:
    """``records_dir()/<date>-<peer>.koikoi``, made unique with ``-2``, ``-3``... ."""
    now = now or datetime.datetime.now()
    safe = _UNSAFE.sub("_", peer or "unknown").strip("._") or "peer"
    stem = f"{now:%Y-%m-%d-%H%M%S}-{safe}"
    base = records_dir()
    path = base / f"{stem}{RECORD_SUFFIX}"
    n = 2
    while path.exists():
        path = base / f"{stem}-{n}{RECORD_SUFFIX}"
        n += 1
    return path
