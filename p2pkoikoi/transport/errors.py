"""Errors of the transport layer; each message is one line the user reads.

They derive from :class:`KoiKoiError` so the CLI dispatcher prints them and
exits with their ``exit_code`` without a traceback.
"""

from __future__ import annotations

from p2pkoikoi.engine.errors import KoiKoiError


class TransportError(KoiKoiError):
    """Base of the network errors: the connection, not the game, went wrong."""

    exit_code = 1


class ConnectError(TransportError):
    """We could not reach the other player (refused, unreachable, no listener)."""


class PeerTimeoutError(TransportError):
    """A handshake step took longer than its deadline."""


class RevealTimeoutError(PeerTimeoutError):
    """The host committed to a value but never revealed it: the host forfeits."""


class PeerSilentError(TransportError):
    """The peer stopped answering heartbeats for longer than the hard bound."""


class ListenAddressError(ConnectError):
    """``--bind`` names an address this machine does not have, or no address at all."""

    exit_code = 2


class ConfigError(TransportError):
    """The identity or known-peers file cannot be read or written."""

    exit_code = 2


class PeerFloodError(TransportError):
    """The peer sent pings or chats far faster than any honest program does."""
