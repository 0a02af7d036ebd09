"""Short codes: what a host reads aloud, like ``7-crossover-clockwork``.

Theory of operation
-------------------
A code is a public *number* (1..9999, usually 1..99: LAN discovery announces it, so a joiner on
the same network finds the host from it; it carries no secret) followed by two
words of the PGP word list (:mod:`p2pkoikoi.session.codes.wordlist`): the first from
the three-syllable "odd" list, the second from the two-syllable "even" list.
The two words are two secret bytes: 16 bits.  That is far too little to stand
on its own, so a code is only ever used as the password of a PAKE (SPAKE2,
protocol/README.md section 5): somebody without the code gets one guess per
connection and nothing to test offline, and a host accepts at most
:data:`MAX_FAILED_ATTEMPTS` wrong guesses before it stops accepting the code.
An attacker's chance is then 3 in 65,536 per code (protocol/README.md, section 2).

Parsing is forgiving about how a person types or pastes: any mix of spaces,
hyphens, dots, commas or underscores between the parts (or none between the
words), capitals, quotes.  Each mistake is named in one line
(:class:`~p2pkoikoi.session.errors.InviteError`), with a suggestion for a
misspelt word and a clear message for two words in the wrong order (the two
lists are disjoint, which is what makes a swap detectable).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final

from p2pkoikoi.session.codes.wordlist import EVEN, EVEN_INDEX, ODD, ODD_INDEX
from p2pkoikoi.session.errors import InviteError

CODE_NUMBER_MIN: Final = 1
#: numbers 1..99 unless the DHT shows them taken (protocol/dht.md: the number space grows)
CODE_NUMBER_MAX: Final = 9999
#: the numbers a host picks from when nothing says they are taken
CODE_NUMBER_SHORT: Final = 99
#: words after the number; each carries one byte (8 bits)
CODE_WORDS: Final = 2
CODE_SECRET_BYTES: Final = CODE_WORDS
#: failed PAKE attempts a host accepts on one code before it stops accepting it
MAX_FAILED_ATTEMPTS: Final = 3
EXAMPLE: Final = "7-crossover-clockwork"

#: quotes a copy from a chat, a mail or a word processor may wrap around the text
QUOTES: Final = "'\"`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a"
_SEPARATORS: Final = re.compile(r"[\s\-_.,/]+")


def strip_typing(text: str) -> str:
    """Lowercase, without quotes; whitespace kept (callers decide what it separates)."""
    return "".join(c for c in text if c not in QUOTES).lower()


def _word_list(position: int) -> tuple[tuple[str, ...], dict[str, int]]:
    """Word ``position`` (0-based, after the number) uses the odd list first, then even."""
    return (ODD, ODD_INDEX) if position % 2 == 0 else (EVEN, EVEN_INDEX)


@dataclasses.dataclass(frozen=True, slots=True)
class ShortCode:
    """A parsed code: the public number and the secret words (lowercase)."""

    number: int
    words: tuple[str, ...]

    def __str__(self) -> str:
        return "-".join((str(self.number), *self.words))

    @property
    def secret(self) -> bytes:
        """The bytes the words stand for (word i = its index in its list)."""
        return bytes(_word_list(i)[1][w] for i, w in enumerate(self.words))


def encode_code(number: int, secret: bytes) -> str:
    """The code text for ``number`` and :data:`CODE_SECRET_BYTES` secret bytes."""
    if isinstance(number, bool) or not CODE_NUMBER_MIN <= number <= CODE_NUMBER_MAX:
        raise InviteError(
            f"code: the number {number} is outside {CODE_NUMBER_MIN}..{CODE_NUMBER_MAX}"
        )
    if len(secret) != CODE_SECRET_BYTES:
        raise InviteError(f"code: the secret must be {CODE_SECRET_BYTES} bytes")
    return str(ShortCode(number, tuple(_word_list(i)[0][b] for i, b in enumerate(secret))))


def looks_like_code(text: str) -> bool:
    """True when ``text`` (as typed) starts like a code: a digit after quotes and spaces."""
    s = strip_typing(text).lstrip()
    return bool(s) and s[0].isdigit()


#: what separates the number and the words as people type them
_TYPED_PARTS = re.compile(r"[\s\-_.,/]+")


@dataclasses.dataclass(frozen=True, slots=True)
class WordChoices:
    """Tab on a code being typed: which word it is (0: the first, 1: the second),
    the letters typed of it and the words of its list that start with them."""

    position: int
    typed: str
    words: tuple[str, ...]


def word_choices(text: str) -> WordChoices | None:
    """What the word being typed at the end of ``text`` could be; None for an
    invite, before the number, or past the second word.  The first word comes
    from the PGP odd list, the second from the even list (the one place both the
    start screen and ``join``'s prompt complete from)."""
    if not looks_like_code(text):
        return None
    parts = _TYPED_PARTS.split(strip_typing(text).lstrip())
    position = len(parts) - 2  # parts[0] is the number
    if position not in (0, 1):
        return None
    typed = parts[-1]
    words, _ = _word_list(position)
    return WordChoices(position, typed, tuple(w for w in words if w.startswith(typed)))


def _segment(letters: str, position: int) -> list[str] | None:
    """Split run-together words (``crossoverclockwork``) along the alternating lists."""
    if not letters:
        return []
    words, _ = _word_list(position)
    for w in words:
        if letters.startswith(w):
            rest = _segment(letters[len(w) :], position + 1)
            if rest is not None:
                return [w, *rest]
    return None


def _suggest(word: str, position: int) -> str:
    import difflib  # only for a mistyped word (start-up of every other command)

    words, _ = _word_list(position)
    near = difflib.get_close_matches(word, words, n=1, cutoff=0.7)
    return f" (did you mean {near[0]!r}?)" if near else ""


def decode_code(text: str) -> ShortCode:
    """Parse a code as typed or pasted; raises :class:`InviteError` naming the mistake."""
    s = strip_typing(text).strip()
    if not s:
        raise InviteError(f"no code given: a code looks like {EXAMPLE}")
    if not s.isascii():
        odd = next(c for c in s if not c.isascii())
        raise InviteError(f"code: {odd!r} cannot appear in a code (like {EXAMPLE})")
    m = re.match(r"(\d+)", s)
    if m is None:
        raise InviteError(f"code: it starts with the host's number, like {EXAMPLE}")
    digits, rest = m.group(1), s[m.end() :]
    number = int(digits)
    if not CODE_NUMBER_MIN <= number <= CODE_NUMBER_MAX or len(digits) > 6:
        raise InviteError(
            f"code: the number {digits} is outside {CODE_NUMBER_MIN}..{CODE_NUMBER_MAX}"
        )
    tokens = [t for t in _SEPARATORS.split(rest) if t]
    bad = next((c for t in tokens for c in t if not c.isalpha()), None)
    if bad is not None:
        raise InviteError(f"code: {bad!r} cannot appear in a code's words (like {EXAMPLE})")
    if not tokens:
        raise InviteError(f"code: the words are missing after {number} (like {EXAMPLE})")
    words = tokens
    if len(tokens) != CODE_WORDS or any(t not in _word_list(i)[1] for i, t in enumerate(tokens)):
        joined = _segment("".join(tokens), 0)
        if joined is not None and len(joined) == CODE_WORDS:
            words = joined
    if (
        len(words) == CODE_WORDS
        and all(w in EVEN_INDEX or w in ODD_INDEX for w in words)
        and all(w not in _word_list(i)[1] for i, w in enumerate(words))
    ):
        right = "-".join((str(number), *reversed(words)))
        raise InviteError(f"code: the two words are swapped: it should be {right}")
    for i, w in enumerate(words):
        if i >= CODE_WORDS:
            break
        if w not in _word_list(i)[1]:
            if w in _word_list(i + 1)[1]:
                which = "second" if i == 0 else "first"
                raise InviteError(
                    f"code: {w!r} is a {which} word, not a {('first', 'second')[i]} one: "
                    "check the code's order"
                )
            raise InviteError(f"code: {w!r} is not a code word{_suggest(w, i)}")
    if len(words) != CODE_WORDS:
        raise InviteError(
            f"code: {CODE_WORDS} words follow the number, not {len(words)} (like {EXAMPLE})"
        )
    return ShortCode(number, tuple(words))
