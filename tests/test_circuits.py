"""Circuits: the six built-in layouts (RULINGS.md section 5) and user circuit files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.games.titanrace.engine import (
    BUILT_IN,
    Circuit,
    CircuitError,
    ScenarioError,
    built_in_circuit,
    load_circuit_file,
    local_circuit,
    resolve_circuit,
    run_scenario,
)
from app.games.titanrace.engine.circuits import circuit_from_data

# Written from RULINGS.md section 5, not from the TOML files: feature kind -> spaces.
EXPECTED: dict[str, dict[str, list[str]]] = {
    "kaldheira": {
        "lava": ["E5", "F6", "B8", "C9", "A11", "D12"],
        "bonus": ["C5", "A7", "F10"],
    },
    "dead-mans-lagoon": {
        "pirates": ["B8", "C9", "E3", "F4", "A11"],
        "bonus": ["D6", "F8", "B12"],
    },
    "moltenchest": {
        "super_ramp": ["A3", "F8"],
        "multi_ramp": ["C7", "E11"],
        "bonus": ["B4", "E9"],
    },
    "ban-kog": {
        "fire_statue": ["D6", "A11"],
        "bonus": ["C3", "F10", "B12"],
    },
    "anglieh": {
        "pentacle": ["E9", "D8", "F8", "D10", "F10", "E7", "E11"],
        "bonus": ["B2", "A9", "C11"],
    },
    "estenggaard": {
        "ice": ["D4", "D6", "A7", "B8", "F10", "F12"],
        "bonus": ["E3", "B10"],
    },
}
EXPECTED_SUPER_RAMPS = {"moltenchest": {"A3": "R", "F8": "L"}}


def test_the_six_built_in_circuits_are_offered() -> None:
    assert sorted(BUILT_IN) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_built_in_circuit_has_exactly_the_ruled_features(name: str) -> None:
    circuit = built_in_circuit(name)
    assert circuit.name == name
    expected = {space: kind for kind, spaces in EXPECTED[name].items() for space in spaces}
    assert circuit.features == expected
    for kind, spaces in EXPECTED[name].items():
        assert sorted(circuit.spaces_with(kind)) == sorted(spaces), kind
    assert circuit.super_ramps == EXPECTED_SUPER_RAMPS.get(name, {})


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_built_in_circuit_round_trips_through_to_data(name: str) -> None:
    circuit = built_in_circuit(name)
    data = circuit.to_data()
    assert circuit_from_data(data) == circuit
    assert circuit_from_data(json.loads(json.dumps(data))) == circuit


def test_built_in_names_resolve_case_insensitively() -> None:
    assert resolve_circuit(" Kaldheira ") == built_in_circuit("kaldheira")
    with pytest.raises(CircuitError, match="unknown circuit 'atlantis'"):
        resolve_circuit("atlantis")


# ---------------------------------------------------------------------- user files

VALID_TOML = """\
# a user circuit with every key
name = "my-track"
bonus = ["C5", "F10"]
lava = ["E5"]
pirates = ["b8"]
ice = ["D4"]
fire_statues = ["A11"]
pentacle = ["E9"]
multi_ramps = ["C7"]

[super_ramps]
A3 = "R"
F8 = "l"
"""


def write(tmp_path: Path, text: str, name: str = "track.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_valid_user_file(tmp_path: Path) -> None:
    circuit = load_circuit_file(write(tmp_path, VALID_TOML))
    assert isinstance(circuit, Circuit)
    assert circuit.name == "my-track"
    assert circuit.features == {
        "C5": "bonus",
        "F10": "bonus",
        "E5": "lava",
        "B8": "pirates",
        "D4": "ice",
        "A11": "fire_statue",
        "E9": "pentacle",
        "C7": "multi_ramp",
        "A3": "super_ramp",
        "F8": "super_ramp",
    }
    assert circuit.super_ramps == {"A3": "R", "F8": "L"}


def test_load_valid_user_file_by_path_string_locally_never_by_resolve(tmp_path: Path) -> None:
    path = write(tmp_path, VALID_TOML)
    assert load_circuit_file(str(path)) == local_circuit(str(path))
    with pytest.raises(CircuitError, match="file paths are not accepted"):
        resolve_circuit(str(path))


def test_minimal_user_file_is_a_featureless_board(tmp_path: Path) -> None:
    circuit = load_circuit_file(write(tmp_path, 'name = "plain"\n'))
    assert circuit.features == {}
    assert circuit.super_ramps == {}


def test_fixture_circuit_file_loads(circuit_fixtures: Path) -> None:
    circuit = load_circuit_file(circuit_fixtures / "mixed-bag.toml")
    assert circuit.name == "mixed-bag"
    assert circuit.spaces_with("ice") == ["D4", "D6"]
    assert circuit.super_ramps == {"A3": "R", "F8": "L"}


def test_user_circuit_round_trips_through_to_data(tmp_path: Path) -> None:
    circuit = load_circuit_file(write(tmp_path, VALID_TOML))
    data = circuit.to_data()
    assert set(data) <= {
        "name",
        "bonus",
        "lava",
        "pirates",
        "ice",
        "fire_statues",
        "pentacle",
        "multi_ramps",
        "super_ramps",
    }
    assert circuit_from_data(data) == circuit
    assert circuit_from_data(json.loads(json.dumps(data))) == circuit


# Each bad file and words its refusal must contain (the problem, named).
BAD_FILES = {
    "unknown-key": ('name = "x"\nvolcano = ["C5"]\n', ["volcano"]),
    "misspelt-key": ('name = "x"\nfire_statue = ["C5"]\n', ["fire_statue", "unknown key"]),
    "space-A2": ('name = "x"\nlava = ["A2"]\n', ["A2", "lava"]),
    "space-G1": ('name = "x"\nbonus = ["G1"]\n', ["G1", "bonus"]),
    "space-B13": ('name = "x"\nice = ["B13"]\n', ["B13", "ice"]),
    "space-B0": ('name = "x"\npirates = ["B0"]\n', ["B0"]),
    "two-features": ('name = "x"\nlava = ["C5"]\nbonus = ["C5"]\n', ["C5", "two features"]),
    "two-features-case": ('name = "x"\nlava = ["c5"]\npentacle = ["C5"]\n', ["C5"]),
    "ramp-on-feature": ('name = "x"\nbonus = ["A3"]\n[super_ramps]\nA3 = "R"\n', ["A3"]),
    "ramp-straight": ('name = "x"\n[super_ramps]\nA3 = "S"\n', ["A3", "'S'"]),
    "ramp-number": ('name = "x"\n[super_ramps]\nA3 = 1\n', ["A3"]),
    "ramps-not-table": ('name = "x"\nsuper_ramps = ["A3"]\n', ["super_ramps"]),
    "not-a-list": ('name = "x"\nlava = "C5"\n', ["lava", "list"]),
    "list-of-numbers": ('name = "x"\nbonus = [5]\n', ["bonus"]),
    "invalid-toml": ('name = "x"\nlava = ["C5"\n', ["TOML"]),
    "missing-name": ('lava = ["C5"]\n', ["name"]),
    "empty-name": ('name = "  "\n', ["name"]),
    "endless-ice-column": (
        'name = "x"\nice = ["D2", "D4", "D6", "D8", "D10", "D12"]\n',
        ["ice", "never stop"],
    ),
    "endless-ice-diagonal": (
        'name = "x"\nice = ["A1", "B2", "C3", "D4", "E5", "F6", '
        '"A7", "B8", "C9", "D10", "E11", "F12"]\n',
        ["ice", "never stop"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_bad_user_file_is_refused_naming_the_problem(tmp_path: Path, case: str) -> None:
    text, words = BAD_FILES[case]
    path = write(tmp_path, text, f"{case}.toml")
    with pytest.raises(CircuitError) as info:
        load_circuit_file(path)
    message = str(info.value)
    assert f"{case}.toml" in message, "the message names the file"
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def test_fixture_endless_ice_file_is_refused(circuit_fixtures: Path) -> None:
    with pytest.raises(CircuitError, match="never stop"):
        load_circuit_file(circuit_fixtures / "endless-ice.toml")


def test_ice_that_ends_somewhere_is_accepted(tmp_path: Path) -> None:
    # Five of column D's six spaces: a slide along the column stops on D2.
    text = 'name = "x"\nice = ["D4", "D6", "D8", "D10", "D12"]\n'
    assert len(load_circuit_file(write(tmp_path, text)).spaces_with("ice")) == 5


def test_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    # ENGINE BUG: load_circuit_file (titanrace/engine/circuits.py) catches OSError and
    # TOMLDecodeError but not UnicodeDecodeError, so a Latin-1 file escapes as a bare
    # UnicodeDecodeError instead of a CircuitError naming the file.
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "café"\nlava = ["C5"]\n'.encode("latin-1"))
    with pytest.raises(CircuitError, match=r"latin1\.toml"):
        load_circuit_file(path)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CircuitError, match="cannot read"):
        load_circuit_file(tmp_path / "nowhere.toml")


# ---------------------------------------------------------------------- inline circuits


def red_step_onto_c5(circuit: Any) -> dict[str, Any]:
    """Grinder on C3 with the red die steps onto C5: a scenario over ``circuit``."""
    return {
        "circuit": circuit,
        "titans": [
            {"titan": "grinder", "space": "C3", "hand": []},
            {"titan": "craken", "space": "A9"},
            {"titan": "slaugg", "space": "E11"},
        ],
        "deck": ["leap", "blink"],
        "turn": {"titan": "grinder", "die": "red"},
        "inputs": ["move S"],
    }


def test_inline_circuit_object_in_scenario() -> None:
    code, view = run_scenario(red_step_onto_c5({"name": "one-pool", "lava": ["C5"]}))
    assert code == 0
    assert view["circuits"] == ["one-pool"]
    assert view["titans"]["grinder"]["space"] == "C5"
    assert view["titans"]["grinder"]["life"] == 5


def test_inline_plain_circuit_has_no_features() -> None:
    code, view = run_scenario(red_step_onto_c5({"name": "plain"}))
    assert code == 0
    assert view["titans"]["grinder"]["life"] == 6
    assert view["titans"]["grinder"]["hand"] == []


def test_inline_circuit_behaves_like_the_same_toml_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "drawing"\nbonus = ["C5"]\n')
    inline = run_scenario(red_step_onto_c5({"name": "drawing", "bonus": ["C5"]}))
    from_file = run_scenario(red_step_onto_c5(str(path)))
    assert inline == from_file
    assert inline[1]["titans"]["grinder"]["hand"] == ["leap"]


@pytest.mark.parametrize(
    ("circuit", "words"),
    [
        ({"name": "x", "volcano": ["C5"]}, ["volcano"]),
        ({"name": "x", "lava": ["A2"]}, ["A2"]),
        ({"name": "x", "lava": ["C5"], "ice": ["C5"]}, ["C5", "two features"]),
        ({"name": "x", "super_ramps": {"A3": "B"}}, ["A3"]),
        ({"name": "x", "lava": "C5"}, ["lava"]),
        ({"lava": ["C5"]}, ["name"]),
        ({"name": "x", "ice": [f"D{r}" for r in range(2, 13, 2)]}, ["never stop"]),
    ],
)
def test_bad_inline_circuit_in_scenario_is_refused(circuit: Any, words: list[str]) -> None:
    with pytest.raises(ScenarioError) as info:
        run_scenario(red_step_onto_c5(circuit))
    for word in words:
        assert word in str(info.value)


def test_inline_circuit_round_trips_through_to_data() -> None:
    data = {
        "name": "inline",
        "ice": ["F12", "D4"],
        "bonus": ["e3"],
        "super_ramps": {"a3": "r"},
    }
    circuit = resolve_circuit(data)
    again = circuit_from_data(circuit.to_data())
    assert again == circuit
    assert again.to_data() == circuit.to_data()
    assert circuit.to_data() == {
        "name": "inline",
        "bonus": ["E3"],
        "ice": ["D4", "F12"],
        "super_ramps": {"A3": "R"},
    }
