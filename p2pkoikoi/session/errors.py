"""Errors of the session layer; each message is what the user reads."""

from __future__ import annotations

from p2pkoikoi.engine.errors import InputError, KoiKoiError


class ProtocolError(KoiKoiError):
    """Base of the session's protocol errors."""


class LocalProtocolError(ProtocolError):
    """We (the local program or its user) misused the session: e.g. sent out of turn."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol, or the bytes from the network are bad."""


class VersionMismatchError(RemoteProtocolError):
    """The peer speaks another protocol version."""


class RulesMismatchError(RemoteProtocolError):
    """The two players do not agree on the rules (a difference, or a decline)."""


class RulesDeclinedError(RulesMismatchError):
    """The joiner's person chose Decline on the rules screen: an answer, not a fault."""


class CheatingError(RemoteProtocolError):
    """The peer provably cheated: a wrong reveal, a forged signature."""


class RefusedError(RemoteProtocolError):
    """The host refused this connection (it plays with someone else, or is not resuming)."""


class ResumeError(RemoteProtocolError):
    """A resumed connection is not the same player or the same match."""


class WrongSecretError(RemoteProtocolError):
    """The peer's first encrypted frame does not decrypt: it does not hold our code,
    invite or resume secret (one failed PAKE guess, which a host counts per code)."""

    def __init__(self, message: str, via: str) -> None:
        super().__init__(message)
        self.via = via


class InviteError(InputError):
    """A malformed or mistyped invite string."""


class RecordError(InputError):
    """A malformed match record file."""
