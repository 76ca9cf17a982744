"""What the ``titanpost`` command asks of a game beyond its ruleset: the set-up its flags name
(``admin new-game``) and a race between computer players drawn on the terminal (``engine
demo``).

Each game answers in its own ``<package>.commandline`` module (found through the registry,
:data:`app.games.GAMES`), with two functions:

- ``setup_of(flags, lang) -> (setup, variant)``: the setup (the game's own JSON, as
  :meth:`~app.games.base.Ruleset.default_setup` gives it) and the variant that ``flags`` name;
- ``demo(flags, pieces, seed, lang) -> Demo``: a new race between computer players, ``pieces``
  being the names given with ``--titans`` (None: the game's own choice), in seating order.

Either raises :class:`FlagsRefused` for a flag the game does not take or a value it refuses,
the message in ``lang``. The commands give every game the same flags: a game reads those it
has a use for and refuses the others, so that a new game needs no change to the commands.
A module imports its drawing and words inside its functions, and only those: ``engine demo``
imports no more than the game's engine and its terminal board.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from importlib import import_module
from types import ModuleType
from typing import Any, Protocol

from . import GAMES


@dataclass(frozen=True)
class BoardFlags:
    """The set-up flags of ``admin new-game`` and ``engine demo``, as given (none: None)."""

    circuits: tuple[str, ...] = ()
    """``--circuit``: boards by name or TOML file (Titan Race's circuits)."""
    start: str | None = None
    """``--start``: where the race starts (The Great Race's start city)."""
    leaders: bool = False
    """``--leaders``: with the Leader module (The Great Race)."""
    variant: str | None = None
    """``--variant``: one of the game's variants."""


class FlagsRefused(ValueError):
    """A set-up flag a game does not take, or a value it refuses (in the command's language)."""


class Demo(Protocol):
    """A race between computer players, one input at a time, worded in one language."""

    def title(self) -> str:
        """The heading: the game, its boards and the seed to replay it with."""

    def over(self) -> bool: ...

    def step(self) -> tuple[str, str, str]:
        """Play the computer's next input: who played it, what it does in words, its
        notation."""

    def turn(self) -> Hashable:
        """What changes when a new turn begins (the board is drawn once a turn)."""

    def board(self) -> Any:
        """The board as it stands, for the terminal (a rich renderable)."""

    def result(self) -> str:
        """The closing line: who won, after how long, the seed to replay it with."""


def commandline(game: str) -> ModuleType:
    """Game ``game``'s ``commandline`` module (KeyError for a game not in the registry)."""
    return import_module(f"{GAMES[game].package}.commandline")
