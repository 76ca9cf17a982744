"""The Great Race rules engine: pure, deterministic, no I/O (docs/great-race-rules.md).

>>> from app.games.greatrace.engine import GreatRace
>>> game = GreatRace.new(["french", "belgian"], seed=7)
>>> game.pending()["kind"]
'take'
"""

from .board import CITIES, CITY, CITY_AT, LINES, NEIGHBOURS, RISK, SPACES, parse_space
from .game import GREAT_RACE_VERSION, GreatRace, pending_decision, state_view, step_state
from .notation import normalise
from .pieces import (
    ALL_CARDS,
    BOXES,
    CARD_TIMING,
    CARDS,
    CREW_COLOUR,
    CREWS,
    DANGER_CARDS,
    FUNDING,
    LEADER_CARDS,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    TILES,
    Tile,
)
from .scenario import load_scenario, run_scenario, run_scenario_file, scenario_options_file
from .state import CrewState, GreatRaceState

__all__ = [
    "ALL_CARDS",
    "BOXES",
    "CARDS",
    "CARD_TIMING",
    "CITIES",
    "CITY",
    "CITY_AT",
    "CREWS",
    "CREW_COLOUR",
    "DANGER_CARDS",
    "FUNDING",
    "GREAT_RACE_VERSION",
    "LEADER_CARDS",
    "LINES",
    "MAX_CHASSIS",
    "MAX_ENGINE",
    "MAX_PETROL",
    "NEIGHBOURS",
    "RISK",
    "SPACES",
    "TILES",
    "CrewState",
    "GreatRace",
    "GreatRaceState",
    "Tile",
    "load_scenario",
    "normalise",
    "parse_space",
    "pending_decision",
    "run_scenario",
    "run_scenario_file",
    "scenario_options_file",
    "state_view",
    "step_state",
]
