"""Owl Dice's pure rules: no Flask, database, mail, clock or global randomness (every die and
shuffle comes from the state's random source, :mod:`app.games.rng`)."""

from .game import OWL_DICE_VERSION, OwlDice, new_game
from .notation import VERBS, normalise
from .state import HOOT, OVER, OWLS, ROLL, OwlState

__all__ = ["HOOT", "OVER", "OWLS", "OWL_DICE_VERSION", "ROLL", "VERBS", "OwlDice", "OwlState",
           "new_game", "normalise"]
