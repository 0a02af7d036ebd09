"""JSON text as the package reads and writes it: :mod:`json`, with one decoder and
one canonical encoder shared by rule sets, records and journals.

* :func:`loads` is ``json.loads``: the same objects, the same exceptions.
* :func:`canonical` is ``json.dumps(obj, sort_keys=True, separators=(",", ":"))``,
  the form whose bytes a rule set's fingerprint and a record's signatures cover:
  one definition, so no caller writes it with other options by mistake.
* :func:`syntax_error` tells a :class:`json.JSONDecodeError` (a place and a reason
  to show) from the other :class:`ValueError` ``loads`` raises (a number too long
  to convert), so callers can word each.

tests/engine/test_jsontext.py holds the module to :mod:`json` on the protocol's vectors,
every preset's rules, generated trees and broken texts.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# json is imported by the functions, on first use: ``score`` and ``rules`` load the
# rules module, which uses this one, but never read or write JSON text.


def loads(text: str) -> Any:
    """``json.loads(text)``: the same object, or the same exception."""
    import json

    return json.loads(text)


def canonical(obj: Any) -> str:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"))``, the same text."""
    import json

    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def syntax_error(exc: ValueError) -> str | None:
    """Where and what a :class:`json.JSONDecodeError` from :func:`loads` says is wrong
    (``line 1, column 5: Expecting value``); None for any other ValueError (a number
    too long to convert)."""
    import json

    if not isinstance(exc, json.JSONDecodeError):
        return None
    return f"line {exc.lineno}, column {exc.colno}: {exc.msg}"
