"""Exceptions whose message is what the user reads.

Every error the program raises on purpose derives from :class:`KoiKoiError`; the
command-line dispatcher prints ``str(error)`` on one line and exits with
``error.exit_code``.  Upper layers subclass these for their own errors.
"""

from __future__ import annotations


class KoiKoiError(Exception):
    """Base of every deliberate error; ``exit_code`` is the process status it maps to."""

    exit_code = 1


class InputError(KoiKoiError, ValueError):
    """Bad input from a person or a file: an unknown card, preset or setting, bad hex."""

    exit_code = 2


class IllegalActionError(KoiKoiError):
    """An action that the rules do not allow in the current state."""

    exit_code = 1
