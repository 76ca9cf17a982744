"""The Titan Race rules engine: pure, deterministic, no I/O.

>>> from app.games.titanrace.engine import new_game
>>> race = new_game(["grinder", "craken", "slaugg"], circuits=["kaldheira"], seed=7)
>>> race.pending()["kind"]
'pick'
>>> race.apply(race.options()[0])  # returns the random outcomes it produced
[]
"""

from app.games.errors import (
    CircuitError,
    EngineError,
    GameOverError,
    IllegalInputError,
    InputError,
    InvalidInputError,
    ScenarioError,
)

from .cards import CARDS, COLOURS, TITANS
from .circuits import (
    BUILT_IN,
    Circuit,
    built_in_circuit,
    load_circuit_file,
    local_circuit,
    resolve_circuit,
)
from .race import ENGINE_VERSION, RULESET, VARIANTS, Race, new_game, state_view
from .scenario import load_scenario, run_scenario, run_scenario_file

__all__ = [
    "BUILT_IN",
    "CARDS",
    "COLOURS",
    "ENGINE_VERSION",
    "RULESET",
    "TITANS",
    "VARIANTS",
    "Circuit",
    "CircuitError",
    "EngineError",
    "GameOverError",
    "IllegalInputError",
    "InputError",
    "InvalidInputError",
    "Race",
    "ScenarioError",
    "built_in_circuit",
    "load_circuit_file",
    "load_scenario",
    "local_circuit",
    "new_game",
    "resolve_circuit",
    "run_scenario",
    "run_scenario_file",
    "state_view",
]
