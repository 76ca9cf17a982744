"""The engine's errors: every refusal is a ValueError with a message a person can act on.

A refused input's reason is a :class:`Reason`: a message template and its fields. Its ``str``
is the English text (the engine's contract, quoted by scenario files and ``titanpost engine
run``); the layers above put the template in the reader's language from the catalogue, and the
fields that are game words (:class:`Word`, :class:`Words`) in the game's own words. The engine
stays pure: :func:`N_` only marks a template for the extractor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union


def N_(text: str) -> str:
    """Marks ``text`` as a message id for the extractor (babel.cfg reads app/**.py); the
    engine itself never translates."""
    return text


@dataclass(frozen=True)
class Word:
    """A game word in a reason (``kind``: ``die``, ``titan``, ``card``, ``crew``, ``box``):
    English as the engine writes it, named in the reader's language above."""

    kind: str
    value: str

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Words:
    """A list of game words of one ``kind``, written ``a, b, c``."""

    kind: str
    values: tuple[str, ...]

    def __str__(self) -> str:
        return ", ".join(self.values)


Field = Union[str, int, Word, Words, "Reason"]
"""A reason's field: notation and numbers (the same in every language), a game word, or a
reason of its own (a clause the template embeds)."""


@dataclass(frozen=True)
class Reason:
    """Why an input was refused: ``template`` (a catalogue message id) and its ``fields``."""

    template: str
    fields: Mapping[str, Field] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.template.format(**{key: str(value) for key, value in self.fields.items()})


class EngineError(ValueError):
    """Base of every error the rules engine raises on bad input."""


class CircuitError(EngineError):
    """A circuit file or object is malformed."""


class ScenarioError(EngineError):
    """A scenario file does not describe a valid position."""


class InputError(EngineError):
    """An input was refused; nothing was changed.

    ``index`` is the position of the refused input within a ``;``-joined submission and
    ``legal`` lists the options that were legal at that point. ``message`` is English; given
    as a :class:`Reason`, it is kept as ``reason`` too.
    """

    def __init__(self, message: str | Reason, legal: list[str] | None = None,
                 index: int = 0) -> None:
        super().__init__(str(message))
        self.message = str(message)
        self.reason = message if isinstance(message, Reason) else None
        """The message as a :class:`Reason`, when the engine gave one (for other languages)."""
        self.legal = list(legal or [])
        self.index = index


class InvalidInputError(InputError):
    """The input is not valid notation."""


class IllegalInputError(InputError):
    """The input is valid notation but not a legal answer to the pending decision."""


class GameOverError(IllegalInputError):
    """The game has ended: no input is accepted."""
