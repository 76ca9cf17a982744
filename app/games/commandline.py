"""What the ``titanpost`` command asks of a game beyond its ruleset: the set-up its flags name
(``admin new-game``) and a race between computer players drawn on the terminal (``engine
demo``).

Each game answers in its own ``<package>.commandline`` module (found through the registry,
:data:`app.games.GAMES`), with two functions:

- ``setup_of(flags, lang) -> (setup, variant)``: the setup (the game's own JSON, as
  :meth:`~app.games.base.Ruleset.default_setup` gives it) and the variant that ``flags`` name;
- ``demo(flags, seed, lang) -> Demo``: a new race between computer players, with the pieces
  its own demo flag names (a ``demo_only`` :class:`SetupFlag`; none: the game's own choice).

Either raises :class:`FlagsRefused` for a flag the game does not take or a value it refuses,
the message in ``lang``. The set-up flags are declared by the games: each game's package
names its own in ``SETUP_FLAGS`` (a tuple of :class:`SetupFlag`), and both commands build
their options from every registered game's (:func:`setup_flags`), ``--variant`` besides. A
game reads those it has a use for and refuses the others, so that a new game needs no change
to the commands.
A module imports its drawing and words inside its functions, and only those: ``engine demo``
imports no more than the game's engine and its terminal board.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import ModuleType
from typing import Any, Protocol

from . import GAMES


@dataclass(frozen=True)
class SetupFlag:
    """A set-up flag a game takes on ``admin new-game`` and ``engine demo``: click's option
    declaration kept as data (the games import no command-line library). ``help`` and
    ``demo_help`` are catalogue message ids, their ``{fields}`` filled from ``values`` and
    ``demo_values`` (the demo's help: ``help`` when None). A ``demo_only`` flag is an
    option of ``engine demo`` alone."""

    decls: tuple[str, ...]
    dest: str
    help: str
    demo_help: str | None = None
    multiple: bool = False
    is_flag: bool = False
    metavar: str | None = None
    demo_metavar: str | None = None
    values: Mapping[str, str] = field(default_factory=dict)
    demo_values: Mapping[str, str] = field(default_factory=dict)
    demo_only: bool = False


class SetupFlags(dict[str, Any]):
    """The set-up flags as given, by their ``dest`` (``variant`` among them); a flag that no
    game declares, or that was not given, reads as None."""

    def __getattr__(self, name: str) -> Any:
        return self.get(name)


def setup_flags() -> list[SetupFlag]:
    """Every registered game's set-up flags (its package's ``SETUP_FLAGS``), in the registry's
    order, one flag a ``dest`` (the first game to declare it words it)."""
    found: dict[str, SetupFlag] = {}
    for game in GAMES.values():
        for flag in getattr(import_module(game.package), "SETUP_FLAGS", ()):
            found.setdefault(flag.dest, flag)
    return list(found.values())


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
