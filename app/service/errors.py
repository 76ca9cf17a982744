"""The service's refusals (each with an HTTP-like status and, for what a player meets, its
catalogue message) and the checks of the one-line texts and e-mail addresses a request gives."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from app.core.i18n import N_, translate
from app.core.textrules import DIRECTION_MARKS, hidden_character, line_problem

_NOT_IN_ADDRESS = "@\\s\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(sorted(DIRECTION_MARKS))

EMAIL = re.compile(f"^[^{_NOT_IN_ADDRESS}]+@[^{_NOT_IN_ADDRESS}]+\\.[^{_NOT_IN_ADDRESS}]+\\Z")
"""An e-mail address as a seat takes it: no space, control, surrogate or direction mark (its
part before the @ is the player's name by default)."""

MAX_EMAIL = 254
MAX_INPUT = 500
"""The longest submission a seat may send (a move's text)."""


class ServiceError(Exception):
    """A refusal with an HTTP-like status and a message a person can act on.

    ``message`` is English, for the API and the logs. A refusal a player meets on a page, a
    link or in a mail's answer also carries ``words``: its catalogue message and fields, which
    :meth:`say` puts in the player's language."""

    status = 400

    def __init__(self, message: str, /, *, words: Words | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.words = words
        self.extra = extra

    def say(self, lang: str | None) -> str:
        """The refusal in ``lang``: its catalogue message, else the English ``message``. A
        field that is itself a refusal (``seat 2: {problem}``) or a part of an engine's reason
        (a clause, a game word) is said in ``lang`` too."""
        if self.words is None:
            return self.message
        text, values = self.words
        return translate(lang, text, **{key: value.say(lang) if isinstance(value, Sayable)
                                        else value for key, value in values.items()})


@dataclass(frozen=True)
class Phrase:
    """A refusal's field that is a catalogue message of its own (a game's words for something
    in a refusal said in neutral words): English as ``str``, said in a language with ``say``."""

    text: str

    def __str__(self) -> str:
        return self.text

    def say(self, lang: str | None) -> str:
        return translate(lang, self.text)


@runtime_checkable
class Sayable(Protocol):
    """A field said in the reader's language: a refusal of its own, or a clause or game word
    of an engine's reason (:class:`app.games.reasons.SaidField`)."""

    def say(self, lang: str | None) -> str: ...


Words = tuple[str, dict[str, Any]]
"""A catalogue message id and its ``{fields}``."""


class BadRequest(ServiceError):
    status = 400


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    status = 403


class WrongCreatorToken(Forbidden):
    """The creator token sent is not the game's (a guess, as far as rate limits go)."""


class NotFound(ServiceError):
    status = 404


class GameMovedOn(ServiceError):
    """The submission answered a decision that is no longer pending."""

    status = 409


class NotPlaying(ServiceError):
    """The game is not in a state that accepts this (not started, finished, abandoned)."""

    status = 409


class IllegalMove(ServiceError):
    status = 422


@dataclass(frozen=True)
class LineRule:
    """What one kind of one-line text (a name, a pause reason) may be: at most ``limit``
    characters, none of them a control character, a line break, a text-direction mark or a
    character that is not seen (see app/core/textrules.py); the two refusals are catalogue
    messages."""

    limit: int
    bad_character: str
    too_long: str

PLAYER_NAME: Final = LineRule(
    100,
    N_("a player's name is one line of characters that can be seen: no control, invisible or "
       "unassigned character, line break or text-direction mark (it holds {character})"),
    N_("a player's name is at most {limit} characters (this one has {length})"))

GAME_NAME: Final = LineRule(
    200,
    N_("a game's name is one line of characters that can be seen: no control, invisible or "
       "unassigned character, line break or text-direction mark (it holds {character})"),
    N_("a game's name is at most {limit} characters (this one has {length})"))

PAUSE_REASON: Final = LineRule(
    200,
    N_("a pause reason is one line of characters that can be seen: no control, invisible or "
       "unassigned character, line break or text-direction mark (it holds {character})"),
    N_("a pause reason is at most {limit} characters (this one has {length})"))


def checked_line(text: str, rule: LineRule, *, where: str = "") -> str:
    """``text`` trimmed, when it may be ``rule``'s kind of text; else BadRequest saying why
    (its English message after ``where``, e.g. ``seat 2: ``)."""
    text = text.strip()
    character = line_problem(text)
    if character is not None:
        fields: dict[str, Any] = {"character": character}
        raise BadRequest(where + rule.bad_character.format(**fields),
                         words=(rule.bad_character, fields))
    if len(text) > rule.limit:
        fields = {"limit": rule.limit, "length": len(text)}
        raise BadRequest(where + rule.too_long.format(**fields), words=(rule.too_long, fields))
    return text


def is_address(text: str) -> bool:
    """Whether ``text`` (trimmed, lower case) can be a seat's e-mail address: nothing in it
    unseen (an address that looks like another must be that other)."""
    return (len(text) <= MAX_EMAIL and EMAIL.match(text) is not None
            and hidden_character(text, emoji=False) is None)


UNSEEN_IN_ADDRESS: Final = N_(
    "the address '{email}' holds {character}, a character that cannot be seen (an invisible, "
    "format, private-use or unassigned character): type the address again")


def refuse_unseen_in_address(text: str) -> None:
    """BadRequest naming the first character of address ``text`` that cannot be seen (pasted
    from somewhere, or put there on purpose: the address would look like another); checked
    before :func:`is_address`, whose refusal could not say what is wrong with an address
    that looks right."""
    character = hidden_character(text, emoji=False)
    if character is not None:
        fields: dict[str, Any] = {"email": text, "character": character}
        raise BadRequest(UNSEEN_IN_ADDRESS.format(**fields), words=(UNSEEN_IN_ADDRESS, fields))

