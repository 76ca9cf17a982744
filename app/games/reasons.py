"""An engine's refusal (:class:`app.games.errors.Reason`) said in a reader's language.

The engines word a refused input in English only (they are pure: no catalogue); their reason
keeps its message template and fields. Here the template is looked up in the catalogue and the
fields that are game words (a die colour, a Titan, a card, a crew) are named with the game's
own words (its ``describe`` module), as the rest of the page or mail names them. In English
the game words stay the engine's (its templates are written around them: "the french crew"),
so the reason reads exactly as the engine wrote it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.i18n import language, translate
from app.games.errors import Field, Reason, Word, Words

GameWord = Callable[[str, str, str], str]
"""A game word of a kind (``die``, ``card``...) in a language: ``(kind, value, lang)``."""


def as_is(kind: str, value: str, lang: str) -> str:
    """The word as the engine wrote it (a game that names none of its words)."""
    return value


@dataclass(frozen=True)
class SaidField:
    """A field of a reason that is said in the reader's language (``say(lang)``, as a
    :class:`app.service.errors.ServiceError` field is)."""

    value: Word | Words | Reason
    word: GameWord

    def say(self, lang: str | None) -> str:
        if isinstance(self.value, Word | Words) and language(lang) == "en":
            return str(self.value)  # (the English templates are written around these words)
        if isinstance(self.value, Word):
            return self.word(self.value.kind, self.value.value, language(lang))
        if isinstance(self.value, Words):
            return ", ".join(self.word(self.value.kind, value, language(lang))
                             for value in self.value.values)
        template, fields = reason_words(self.value, self.word)
        return translate(lang, template, **{key: _said(value, lang)
                                            for key, value in fields.items()})


def _said(value: Any, lang: str | None) -> Any:
    return value.say(lang) if isinstance(value, SaidField) else value


def _field(value: Field, word: GameWord) -> Any:
    return value if isinstance(value, str | int) else SaidField(value, word)


def reason_words(reason: Reason, word: GameWord = as_is) -> tuple[str, dict[str, Any]]:
    """The reason as a catalogue message and its fields (those in words said with ``word``):
    the ``words`` of a refusal."""
    return reason.template, {key: _field(value, word) for key, value in reason.fields.items()}
