"""Owl Dice's scenario files, for ``titanpost engine run`` / ``engine options`` (found through the
registry by the file's ``"game": "owl-dice"``): ``owls`` in seat order (default strix, bubo),
``seed`` (the older generator's: a scenario is exact), and ``inputs`` applied in turn with the
refusals of :func:`app.games.scenario_file.play_inputs`. A hoot is given with its owl
(``hoot strix 2``), as the reveal applies it."""

from __future__ import annotations

from typing import Any

from app.games.errors import EngineError
from app.games.rng import Rng
from app.games.scenario_file import (
    Outcome,
    check_seat,
    fail,
    pending_only,
    play_inputs,
    scenario_inputs,
)

from .game import OwlDice, new_game


class ScenarioOwls:
    """An Owl Dice game as :func:`play_inputs` drives it."""

    def __init__(self, game: OwlDice) -> None:
        self.game = game

    def apply(self, text: str) -> list[str]:
        return list(self.game.apply_each(text)[-1])

    def view(self, seat: int | None = None) -> dict[str, Any]:
        return self.game.view(seat)


def _game(data: Any) -> OwlDice:
    if not isinstance(data, dict):
        raise fail("a scenario is a JSON object")
    seed = data.get("seed", 0)
    if not isinstance(seed, int):
        raise fail("seed must be an integer")
    try:
        return OwlDice(new_game(data.get("owls", ["strix", "bubo"]), rng=Rng(seed)))
    except EngineError as exc:
        raise fail(str(exc)) from None


def run_scenario(data: Any, seat: int | None = None) -> Outcome:
    game = _game(data)
    check_seat(seat, [owl.seat for owl in game.state.owls.values()])
    return play_inputs(ScenarioOwls(game), scenario_inputs(data), seat)


def scenario_options(data: Any) -> Outcome:
    return pending_only(run_scenario(data))
