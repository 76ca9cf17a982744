"""Scenario oracle: every registered game's scenario files are run like `titanpost engine run
FILE` (each game's folder of them is its test fixture's, tests/gamefixtures.py).

Each scenario file is in its game's scenario format (ENGINE-INTERFACE for Titan Race,
docs/great-race-engine.md for The Great Race) plus two keys the engine ignores: `description`
(the rule checked) and `expect`, which this module checks:

    "expect": {
        "exit": 0,                      # or 2 for an illegal input (default 0)
        "state": {...},                 # recursive subset of the printed state view
        "error": {"input": N, "legal_includes": [...], "legal_excludes": [...]},
        "options_include": [...], "options_exclude": [...],
        "options_include_prefix": [...], "options_exclude_prefix": [...]
    }

In `state`, dicts are matched as subsets, lists and scalars must be equal. A key `X_set` or
`X_sorted` compares the list `X` ignoring order (e.g. `traps_set`, `dice_sorted`, `winners_set`,
`hand_set`). The option checks look at `state.pending.options` (none when nothing is pending).
A prefix check passes when some option starts with the prefix (include) or none does (exclude);
it is used where the interface leaves open whether an option lists its arguments.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.games import GAMES
from tests.gamefixtures import each_game, game_fixture, scenario_files, scenario_runner

SCENARIOS = scenario_files()
UNORDERED_SUFFIXES = ("_set", "_sorted")
EXPECT_KEYS = {
    "exit",
    "state",
    "error",
    "options_include",
    "options_exclude",
    "options_include_prefix",
    "options_exclude_prefix",
}
COMMAND_SCENARIOS = each_game(lambda name, fixture: [
    (name, fixture.scenarios / file) for file in fixture.command_scenarios])
"""Run through the installed ``titanpost engine run`` as well, to prove the game dispatch."""


def subset_mismatches(expected: dict[str, Any], actual: Any, where: str) -> list[str]:
    """List every way `actual` fails to contain the partial view `expected`."""
    if not isinstance(actual, dict):
        return [f"{where}: expected an object, got {actual!r}"]
    problems: list[str] = []
    for key, want in expected.items():
        suffix = next((s for s in UNORDERED_SUFFIXES if key.endswith(s)), None)
        name = key[: -len(suffix)] if suffix else key
        path = f"{where}.{name}"
        if name not in actual:
            problems.append(f"{path}: missing")
            continue
        got = actual[name]
        if suffix:
            if not isinstance(got, list) or sorted(got) != sorted(want):
                problems.append(f"{path}: expected {sorted(want)!r} in any order, got {got!r}")
        elif isinstance(want, dict):
            problems.extend(subset_mismatches(want, got, path))
        elif got != want:
            problems.append(f"{path}: expected {want!r}, got {got!r}")
    return problems


def option_mismatches(expect: dict[str, Any], options: list[str]) -> list[str]:
    include, exclude = expect.get("options_include", []), expect.get("options_exclude", [])
    problems = [f"option {o!r} missing" for o in include if o not in options]
    problems += [f"option {o!r} present" for o in exclude if o in options]
    for prefix in expect.get("options_include_prefix", []):
        if not any(o.startswith(prefix) for o in options):
            problems.append(f"no option starts with {prefix!r}")
    for prefix in expect.get("options_exclude_prefix", []):
        hits = [o for o in options if o.startswith(prefix)]
        if hits:
            problems.append(f"options starting with {prefix!r} present: {hits}")
    return problems


def error_mismatches(want: dict[str, Any], got: dict[str, Any]) -> list[str]:
    problems = []
    if "input" in want and got.get("input") != want["input"]:
        problems.append(f"error.input: expected {want['input']}, got {got.get('input')!r}")
    legal = got.get("legal")
    if not isinstance(legal, list):
        return [*problems, f"error.legal: expected a list, got {legal!r}"]
    problems += [f"legal {o!r} missing" for o in want.get("legal_includes", []) if o not in legal]
    problems += [f"legal {o!r} present" for o in want.get("legal_excludes", []) if o in legal]
    return problems


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def expectation_problems(expect: dict[str, Any], code: int, printed: dict[str, Any]) -> list[str]:
    """Every way the run's exit code and printed JSON miss the scenario's expectation."""
    want_exit = expect.get("exit", 0)
    if code != want_exit:
        return [f"exit {code}, expected {want_exit}"]
    if want_exit == 2:
        return error_mismatches(expect.get("error", {}), printed)
    problems = subset_mismatches(expect.get("state", {}), printed, "state")
    pending = printed.get("pending") or {}
    return problems + option_mismatches(expect, list(pending.get("options") or []))


def _id(case: tuple[str, Path | None]) -> str:
    return f"{case[0]}/{case[1].name if case[1] else '(no fixture)'}"


@pytest.mark.parametrize(("game", "path"), SCENARIOS, ids=map(_id, SCENARIOS))
def test_scenario(game: str, path: Path) -> None:
    game_fixture(game)  # (fails for a game that brings no test fixture)
    code, printed = scenario_runner(game)(str(path))
    problems = expectation_problems(load(path)["expect"], code, printed)
    shown = json.dumps(printed, indent=1, sort_keys=True)
    assert not problems, "\n".join(problems) + f"\nprinted:\n{shown}"


@pytest.mark.parametrize(("game", "path"), COMMAND_SCENARIOS, ids=map(_id, COMMAND_SCENARIOS))
def test_scenario_through_the_command(titanpost: str, game: str, path: Path) -> None:
    game_fixture(game)  # (fails for a game that brings no test fixture)
    result = subprocess.run(
        [titanpost, "engine", "run", str(path)], capture_output=True, text=True, check=False
    )
    printed = json.loads(result.stdout)
    problems = expectation_problems(load(path)["expect"], result.returncode, printed)
    assert not problems, "\n".join(problems) + f"\nstdout:\n{result.stdout}\n{result.stderr}"
    assert (result.returncode, printed) == scenario_runner(game)(str(path))


@pytest.mark.parametrize("game", GAMES)
def test_scenario_files_are_well_formed(game: str) -> None:
    """Every scenario is its game's, carries a description and an expectation the matcher
    understands (a refusal naming the legal options), is a whole scenario of its game (the keys
    its fixture names, of their types) and, where the game names its files by kind, says its
    kind of rule."""
    fixture = game_fixture(game)
    paths = sorted(fixture.scenarios.glob("*.json"))
    assert paths, f"no scenario files found in {fixture.scenarios}"
    for path in paths:
        data = load(path)
        assert data.get("game", game) == game, f"{path.name}: not a {game} scenario"
        assert data.get("description"), f"{path.name}: no description"
        assert set(data["expect"]) <= EXPECT_KEYS, f"{path.name}: unknown expect keys"
        if data["expect"].get("exit") == 2:
            assert "error" in data["expect"], f"{path.name}: a refusal names no legal options"
        for key, kind in fixture.scenario_keys.items():
            assert key in data and isinstance(data[key], kind), (
                f"{path.name}: no {key} ({kind.__name__})")
        if fixture.scenario_kinds:
            assert path.name.startswith(fixture.scenario_kinds), (
                f"{path.name}: name says no kind of rule")
