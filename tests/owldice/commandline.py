"""Owl Dice on the command line (:mod:`app.games.commandline`): its set-up (it takes no flag but
``--variant standard``) and a game between computer players for ``engine demo``."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from app.games.commandline import FlagsRefused, SetupFlags
from app.games.rng import Rng


def setup_of(flags: SetupFlags, lang: str) -> tuple[dict[str, Any], str]:
    given = [dest for dest, value in flags.items()
             if dest != "variant" and value not in (None, False, (), [])]
    if given:
        raise FlagsRefused(f"Owl Dice takes no {', '.join(sorted(given))}")
    variant = flags.variant or "standard"
    if variant != "standard":
        raise FlagsRefused(f"Owl Dice has no variant '{variant}'")
    return {"glade": "hollow-oak"}, variant


class OwlDemo:
    """Computer owls playing a whole game."""

    def __init__(self, pieces: list[str] | None, seed: int, lang: str) -> None:
        from .engine import OWLS, OwlDice, new_game
        from .ruleset import OwlDiceRuleset

        self.rules = OwlDiceRuleset()
        self.game = OwlDice(new_game(pieces or list(OWLS[:2]), rng=Rng(seed)))
        self.seed = seed
        self.lang = lang

    def title(self) -> str:
        return f"Owl Dice, seed {self.seed}"

    def over(self) -> bool:
        return self.game.state.phase == "over"

    def step(self) -> tuple[str, str, str]:
        from .describe import describe_option

        move = self.rules.bot_move(self.game)
        who = move.split()[1] if move.startswith("hoot") else self.game.state.lead
        self.game.apply_each(move)
        return who, describe_option(move, None, self.lang), move

    def turn(self) -> Hashable:
        return self.game.state.round

    def board(self) -> Any:
        from .ui import OwlDiceUI

        return OwlDiceUI().board_text(self.game.view(), None, self.lang)

    def result(self) -> str:
        return f"won by {', '.join(self.game.view()['winners'])} (seed {self.seed})"


def demo(flags: SetupFlags, seed: int, lang: str) -> OwlDemo:
    """Two computer owls (Owl Dice declares no demo flag of its own for its owls: the commands'
    options are made before the tests register it)."""
    setup_of(flags, lang)
    return OwlDemo(None, seed, lang)
