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
import datetime
import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pkoikoi.session.crypto import fingerprint, public_bytes
from p2pkoikoi.transport.errors import ConfigError

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
    if not durable:
        return
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
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
    try:
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ConfigError(
            f"{path} is not a readable identity key; move it away to make a new one"
        ) from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ConfigError(f"{path} holds a key that is not Ed25519")
    return loaded


def own_fingerprint(key: Ed25519PrivateKey) -> str:
    return fingerprint(public_bytes(key))


class KnownPeers:
    """Peer name -> fingerprint, remembered across matches (``known_peers``, JSON)."""

    def __init__(self, path: Path, peers: Mapping[str, str] | None = None) -> None:
        self.path = path
        self.peers: dict[str, str] = dict(peers or {})

    @classmethod
    def load(cls, directory: Path) -> KnownPeers:
        path = directory / KNOWN_PEERS_FILE
        try:
            obj = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from None
        if not isinstance(obj, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in obj.items()
        ):
            raise ConfigError(f"{path} should map peer names to fingerprints (a JSON object)")
        return cls(path, obj)

    def check(self, name: str, peer_fingerprint: str) -> str | None:
        """Remember a new peer; a warning text when ``name`` had another key before.

        A changed key is not overwritten: the user decides (by editing the
        file) whether the new key is really the same person.
        """
        known = self.peers.get(name)
        if known == peer_fingerprint:
            return None
        if known is None:
            self.peers[name] = peer_fingerprint
            self.save()
            return None
        return (
            f"{name}'s identity changed: known as {known}, now {peer_fingerprint}; "
            f"if you did not expect this, someone may be impersonating them "
            f"(to accept the new key, edit {self.path})"
        )

    def save(self) -> None:
        data = json.dumps(self.peers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
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
