"""The engine's errors: every refusal is a ValueError with a message a person can act on."""

from __future__ import annotations


class EngineError(ValueError):
    """Base of every error the rules engine raises on bad input."""


class CircuitError(EngineError):
    """A circuit file or object is malformed."""


class ScenarioError(EngineError):
    """A scenario file does not describe a valid position."""


class InputError(EngineError):
    """An input was refused; nothing was changed.

    ``index`` is the position of the refused input within a ``;``-joined submission and
    ``legal`` lists the options that were legal at that point.
    """

    def __init__(self, message: str, legal: list[str] | None = None, index: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.legal = list(legal or [])
        self.index = index


class InvalidInputError(InputError):
    """The input is not valid notation."""


class IllegalInputError(InputError):
    """The input is valid notation but not a legal answer to the pending decision."""


class GameOverError(IllegalInputError):
    """The game has ended: no input is accepted."""
