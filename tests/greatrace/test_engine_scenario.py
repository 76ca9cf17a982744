"""Great Race scenario files and the engine commands: what a scenario may say, and the exits."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.games.greatrace.engine.scenario import run_scenario, scenario_options

BASE: dict[str, Any] = {"game": "great-race", "crews": [{"crew": "french"}, {"crew": "belgian"}]}

MALFORMED = [
    ({"crews": [{"crew": "french"}]}, "'game': 'great-race'"),
    ({**BASE, "crews": [{"crew": "french"}]}, "2 to 4"),
    ({**BASE, "crews": [{"crew": "french"}, {"crew": "french"}]}, "only once"),
    ({**BASE, "crews": [{"crew": "dutch"}, {"crew": "french"}]}, "unknown crew"),
    ({**BASE, "crews": [{"crew": "french", "space": "A1"}, {"crew": "belgian"}]}, "not a space"),
    ({**BASE, "crews": [{"crew": "french", "petrol": 11}, {"crew": "belgian"}]}, "petrol"),
    ({**BASE, "crews": [{"crew": "french", "hand": ["topographer"]}, {"crew": "belgian"}]},
     "resource cards"),
    ({**BASE, "crews": [{"crew": "french", "colour": "blue"}, {"crew": "belgian"}]},
     "unknown key"),
    ({**BASE, "tiles": {"F3": "p1"}}, "is a city"),
    ({**BASE, "tiles": {"E2": "p9"}}, "not a tile"),
    ({**BASE, "removed": ["p3"] * 5}, "4 p3 tiles"),
    ({**BASE, "deck": ["guide"] * 3}, "2 guide cards"),
    ({**BASE, "phase": "maintenance"}, "phase"),
    ({**BASE, "phase": "planning", "plans": {"french": {"P": 4}}}, "exactly 5"),
    ({**BASE, "phase": "convoy", "active": "italian"}, "active"),
    ({**BASE, "start": "dakar"}, "start"),
    ({**BASE, "turn": 0}, "turn must be a whole number from 1 to 10000"),
    ({**BASE, "turn": 10_001}, "turn must be a whole number from 1 to 10000"),
    ({**BASE, "surprise": 1}, "unknown key"),
    ({**BASE, "inputs": "take guide"}, None),
]


@pytest.mark.parametrize(("data", "reason"), MALFORMED)
def test_malformed_scenarios_are_refused_with_a_reason(data: dict[str, Any], reason: str | None
                                                      ) -> None:
    from app.games.errors import ScenarioError

    if reason is None:
        run_scenario({**data, "market": ["guide", "militia", "driver"]})
        return
    with pytest.raises(ScenarioError, match=reason):
        run_scenario(data)


def test_defaults_money_gauges_and_the_first_market() -> None:
    code, view = run_scenario({**BASE, "seed": 4})
    assert code == 0
    assert [view["crews"][c]["money"] for c in ("french", "belgian")] == [80, 70]
    assert view["crews"]["french"]["petrol"] == 10 and view["crews"]["french"]["space"] == "F1"
    assert len(view["market"]) == 3 and view["deck"] == 43 and view["bag"] == 60
    assert view["pending"]["kind"] == "take" and view["pending"]["crew"] == "belgian"


def test_a_taken_list_and_plans_open_the_phase_where_it_was() -> None:
    code, pending = scenario_options({**BASE, "market": ["guide", "militia"],
                                      "taken": ["belgian"]})
    assert code == 0 and pending["crew"] == "french"
    assert pending["options"] == ["take guide", "take militia"]
    code, pending = scenario_options({**BASE, "phase": "planning",
                                      "plans": {"belgian": {"F": 5}}})
    assert pending["crews"] == ["french"] and len(pending["options"]) == 56


@pytest.mark.parametrize("turn", [30, 31, 500, 10_000])
def test_a_scenario_opens_at_any_turn_a_race_can_reach(turn: int) -> None:
    code, view = run_scenario({**BASE, "turn": turn, "market": ["guide", "militia"]})
    assert code == 0 and view["turn"] == turn and view["pending"]["kind"] == "take"


def test_an_illegal_input_exits_2_with_the_legal_ones() -> None:
    code, error = run_scenario({**BASE, "phase": "convoy",
                                "crews": [{"crew": "french", "assistants": {"F": 2}},
                                          {"crew": "belgian"}],
                                "inputs": ["fund", "fund"]})
    assert code == 2 and error["input"] == 1 and error["legal"]
    assert "does not answer" in error["error"]


def test_the_track_sets_the_stack_order() -> None:
    crews = [{"crew": "french", "space": "E2"}, {"crew": "belgian", "space": "F2"}]
    tiles = {"E2": "p1", "F2": "p1"}
    _, view = run_scenario({**BASE, "crews": crews, "tiles": tiles, "market": []})
    assert view["track"] == ["french", "belgian"]
    _, view = run_scenario({**BASE, "crews": crews, "tiles": tiles, "market": [],
                            "track": ["belgian", "french"]})
    assert view["track"] == ["belgian", "french"]


@pytest.mark.parametrize("command", ["run", "options"])
def test_the_engine_commands_dispatch_on_the_game(titanpost: str, tmp_path: Path,
                                                  command: str) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({**BASE, "market": ["guide", "militia", "driver"],
                                "inputs": ["take guide"]}), encoding="utf-8")
    done = subprocess.run([titanpost, "engine", command, str(path)], capture_output=True,
                          text=True, check=False)
    printed = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    pending = printed if command == "options" else printed["pending"]
    assert pending["crew"] == "french"
    assert pending["options"] == ["take militia", "take driver"]
    path.write_text(json.dumps({**BASE, "game": "chess"}), encoding="utf-8")
    done = subprocess.run([titanpost, "engine", command, str(path)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 1 and "unknown game" in json.loads(done.stdout)["error"]
