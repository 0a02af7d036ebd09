"""JSON text for start-up-critical paths: the json package's results, without its import.

Theory of operation.  :mod:`json` does its work in CPython's C accelerator
(:mod:`_json`): the scanner that turns text into objects and the function that
quotes a string.  What importing :mod:`json` adds is its Python layer, whose
import compiles six regular expressions with the pure-Python :mod:`re` compiler:
about 5.6 M instructions, a thirtieth of ``p2pkoikoi verify``'s run, for a
command that decodes one record (issue 25).

* :func:`loads` drives the C scanner with exactly the settings of
  ``json.loads``'s default decoder.  For a valid document it returns what
  ``json.loads`` returns.  On anything else (a syntax error, extra data, a
  number too long to convert) it hands the text to ``json.loads`` itself, which
  raises its usual :class:`json.JSONDecodeError` (line, column, message): the
  C scanner reports its errors through :mod:`json.decoder`, which is not loaded
  here, so the error path imports it.  Bad input is rare and costs a second
  parse; good input never loads :mod:`json`.
* :func:`canonical` is ``json.dumps(obj, sort_keys=True, separators=(",", ":"))``
  for the types the package encodes canonically (dicts with string keys, lists,
  tuples, strings, integers, booleans, ``None``), with the C quoting function;
  any other value in the tree goes to ``json.dumps`` whole, so the bytes are the
  same in every case.

A Python without :mod:`_json` uses :mod:`json` throughout.
tests/engine/test_jsontext.py compares both functions with :mod:`json` on the
protocol's vectors, every preset's rules, generated trees and broken texts.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False  # typing's flag without importing typing (see cli/__init__.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    _C: Any = __import__("_json")  # (typeshed's stubs do not describe a scanner's context)
except ImportError:  # pragma: no cover (every CPython has it)
    _C = None

_WHITESPACE = " \t\n\r"  # JSON's whitespace, what json.decoder's pattern skips


#: the attributes the C scanner reads, as ``json.JSONDecoder()`` sets them
#: (``parse_constant`` is json.decoder's: it accepts NaN and the infinities)
_DEFAULT_DECODER = SimpleNamespace(
    strict=True,
    object_hook=None,
    object_pairs_hook=None,
    parse_float=float,
    parse_int=int,
    parse_constant={
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__,
)
_scan: Callable[[str, int], tuple[Any, int]] | None = (
    None if _C is None else _C.make_scanner(_DEFAULT_DECODER)
)
if _C is not None:
    _quote: Callable[[str], str] = _C.encode_basestring_ascii
else:  # pragma: no cover
    from json.encoder import py_encode_basestring_ascii as _quote


def loads(text: str) -> Any:
    """``json.loads(text)``: the same object, or the same exception."""
    if _scan is not None:
        start = len(text) - len(text.lstrip(_WHITESPACE)) if text[:1] in _WHITESPACE else 0
        try:
            obj, end = _scan(text, start)
        except Exception:  # noqa: BLE001 (json.loads below raises the precise error)
            pass
        else:
            if end == len(text) or not text[end:].strip(_WHITESPACE):
                return obj
    import json

    return json.loads(text)


def canonical(obj: Any) -> str:
    """``json.dumps(obj, sort_keys=True, separators=(",", ":"))``, the same text."""
    out: list[str] = []
    if _encode(obj, out, 0):
        return "".join(out)
    import json

    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def syntax_error(exc: ValueError) -> str | None:
    """Where and what a :class:`json.JSONDecodeError` from :func:`loads` says is wrong
    (``line 1, column 5: Expecting value``); None for any other ValueError (a number
    too long to convert).  Callers need not import :mod:`json` to tell them apart."""
    line = getattr(exc, "lineno", None)
    if line is None:
        return None
    return f"line {line}, column {getattr(exc, 'colno', '?')}: {getattr(exc, 'msg', exc)}"


def _encode(obj: Any, out: list[str], depth: int) -> bool:
    """Append ``obj``'s canonical text to ``out``; False if it holds anything but
    the plain types, or nests more than 100 deep (a loop among them): ``json.dumps``
    then writes it, or refuses it, itself."""
    kind = type(obj)
    if kind is str:
        out.append(_quote(obj))
    elif kind is bool:
        out.append("true" if obj else "false")
    elif kind is int:
        out.append(int.__repr__(obj))
    elif obj is None:
        out.append("null")
    elif depth > 100:
        return False
    elif kind is dict:
        if any(type(key) is not str for key in obj):
            return False
        out.append("{")
        for i, key in enumerate(sorted(obj)):
            if i:
                out.append(",")
            out.append(_quote(key))
            out.append(":")
            if not _encode(obj[key], out, depth + 1):
                return False
        out.append("}")
    elif kind is list or kind is tuple:
        out.append("[")
        for i, item in enumerate(obj):
            if i:
                out.append(",")
            if not _encode(item, out, depth + 1):
                return False
        out.append("]")
    else:
        return False
    return True
