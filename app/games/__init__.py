"""The games Titan Post serves, one package each, and what they share.

Each game lives in its own folder (``app/games/<game>/``): its pure rules engine in ``engine/``
(notation, state, rules, scenario, computer player), and beside it the layers above: its
:class:`~app.games.base.Ruleset` (``ruleset.py``), words, board picture, mail and text board.
What every game shares sits here: the ruleset protocol (:mod:`.base`), the logged game
(:mod:`.logged`), the scenario file runner (:mod:`.scenario_file`), the random source
(:mod:`.rng`) and the engine errors (:mod:`.errors`).

:data:`GAMES` is the registry: a game's name, its package and the names of its ruleset and UI
classes (``<package>.ruleset`` and ``<package>.ui``; the UI is reached through
:func:`app.games.ui.game_ui`). Each is imported the first time it is asked for, so a command that
needs one game's engine never loads the other's, nor a picture or a template
(docs/adding-a-game.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from .base import Ruleset


@dataclass(frozen=True)
class Game:
    """Where a game's parts are: ``<package>.ruleset.<ruleset>`` and ``<package>.ui.<ui>``;
    and its title, for what names every game without loading one (the command's help, the
    API's reference)."""

    package: str
    ruleset: str
    ui: str
    title: str


GAMES: Final[dict[str, Game]] = {
    "titan-race": Game("app.games.titanrace", "TitanRaceRuleset", "TitanRaceUI", "Titan Race"),
    "great-race": Game("app.games.greatrace", "GreatRaceRuleset", "GreatRaceUI",
                       "The Great Race"),
}
"""Every game by its ruleset name (the name stored with each game)."""

DEFAULT_GAME: Final = next(iter(GAMES))
"""The game of a request or a row that names none: the first, the only one there was before
there were more (the API's games, the link pages' older rows)."""

_LOADED: dict[str, Ruleset] = {}


def ruleset(name: str) -> Ruleset:
    """The rules of game ``name`` (:class:`~.base.SetupError` for a name not in
    :data:`GAMES`)."""
    try:
        return _LOADED[name]
    except KeyError:
        pass
    from .base import SetupError

    try:
        game = GAMES[name]
    except KeyError:
        raise SetupError(f"unknown ruleset '{name}'") from None
    rules: Ruleset = getattr(import_module(f"{game.package}.ruleset"), game.ruleset)()
    _LOADED[name] = rules
    return rules


def forget(name: str) -> None:
    """Drop the ruleset loaded for game ``name``, whose entry has left :data:`GAMES` (a game
    the tests register for a while): :func:`ruleset` no longer serves it."""
    _LOADED.pop(name, None)


def piece_names(name: str, pieces: dict[str, Any]) -> list[str]:
    """The names of the pieces a seat of a game ``name`` plays (its ``Seat.pieces``), for
    display: :meth:`~.base.Ruleset.piece_names`."""
    return ruleset(name).piece_names(pieces)


def template_folder(name: str) -> Path:
    """The folder of game ``name``'s own templates (``app/games/<game>/templates/``): its
    pages' parts in ``pages/`` (included as ``games/<name>/<file>``) and its mails in ``mail/``.
    Found without importing the game's package."""
    spec = find_spec(GAMES[name].package)
    assert spec is not None and spec.submodule_search_locations is not None
    return Path(next(iter(spec.submodule_search_locations))) / "templates"

