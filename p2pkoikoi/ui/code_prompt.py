"""The prompt of ``p2pkoikoi join`` with no code: type the code with Tab completion
of its words (as ``wormhole receive`` does), or paste the invite.

A code is the host's number and two words (``7-crossover-clockwork``): the first
from the PGP word list's three-syllable (odd) list, the second from its
two-syllable (even) list, so Tab completes each word from the list of its place.
Enter accepts only what ``join`` can use (an invite or a whole code); a mistake
is named below the line, as ``join`` would name it, and the line stays to be
corrected.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.validation import ValidationError, Validator

from p2pkoikoi.engine.errors import InputError, KoiKoiError
from p2pkoikoi.session.codes.code import word_choices
from p2pkoikoi.session.codes.invite import parse_join_target

PROMPT = "Code or invite (Tab completes a word): "


class CodeCompleter(Completer):
    """Completes the word being typed from the list of its place in the code (after
    the number: the odd list, then the even list), adding the hyphen that follows a
    first word.  Nothing is offered for an invite or before the number."""

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        choices = word_choices(document.text_before_cursor)
        if choices is None:
            return
        tail = "-" if choices.position == 0 else ""
        for word in choices.words:
            yield Completion(word + tail, start_position=-len(choices.typed), display=word)


class JoinTargetValidator(Validator):
    """Enter takes the line only when ``join`` can use it."""

    def validate(self, document: Document) -> None:
        try:
            parse_join_target(document.text)
        except KoiKoiError as exc:
            raise ValidationError(message=str(exc)) from None


def ask_join_target() -> str:
    """The code or invite, typed at the terminal.  Without a terminal: one line (exit 2)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError(
            "join needs the code or the invite: p2pkoikoi join CODE "
            "(without a terminal there is nobody to ask)"
        )
    session: PromptSession[str] = PromptSession(
        PROMPT,
        completer=CodeCompleter(),
        complete_while_typing=False,
        validator=JoinTargetValidator(),
        validate_while_typing=False,
    )
    try:
        return session.prompt()
    except EOFError:
        raise InputError("no code given: join needs the code or the invite") from None
