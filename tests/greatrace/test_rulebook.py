"""Rulebook oracle for The Great Race: every file in tests/greatrace/scenarios/ is a scenario.

Each file is in the scenario format of docs/great-race-engine.md (``"game": "great-race"``) plus
the two keys of Titan Race's oracle (tests/test_scenarios.py): ``description``, naming the rule
and the section of docs/great-race-rules.md it checks, and ``expect``, checked with the same
helpers (``exit``, ``state`` as a recursive subset with ``_set``/``_sorted`` suffixes, ``error``
with ``input``/``legal_includes``/``legal_excludes``, and the ``options_*`` checks).

The file names say where each rule comes from: ``example-*`` the rulebook's worked examples,
``faq-*`` its FAQ answers, ``turn-*`` whole game turns, ``setup-*`` the set-up, ``card-*`` single
resource cards, ``leader-*`` the Leader module, ``illegal-*`` refused inputs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.games.greatrace.engine.scenario import run_scenario_file
from tests.test_scenarios import error_mismatches, option_mismatches, subset_mismatches

SCENARIO_DIR = Path(__file__).parent / "scenarios"
SCENARIOS = sorted(SCENARIO_DIR.glob("*.json"))
EXPECT_KEYS = {
    "exit",
    "state",
    "error",
    "options_include",
    "options_exclude",
    "options_include_prefix",
    "options_exclude_prefix",
}
KINDS = ("example-", "faq-", "turn-", "setup-", "card-", "leader-", "illegal-")
CLI_SCENARIOS = ("example-drive-known-territory.json", "illegal-plan-not-five.json")
"""Run through the installed ``titanpost engine run`` as well, to prove the game dispatch."""


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


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_rulebook_scenario(path: Path) -> None:
    code, printed = run_scenario_file(str(path))
    problems = expectation_problems(load(path)["expect"], code, printed)
    shown = json.dumps(printed, indent=1, sort_keys=True)
    assert not problems, "\n".join(problems) + f"\nprinted:\n{shown}"


@pytest.mark.parametrize("name", CLI_SCENARIOS)
def test_rulebook_scenario_through_the_command(titanpost: str, name: str) -> None:
    path = SCENARIO_DIR / name
    result = subprocess.run(
        [titanpost, "engine", "run", str(path)], capture_output=True, text=True, check=False
    )
    printed = json.loads(result.stdout)
    problems = expectation_problems(load(path)["expect"], result.returncode, printed)
    assert not problems, "\n".join(problems) + f"\nstdout:\n{result.stdout}\n{result.stderr}"
    assert (result.returncode, printed) == run_scenario_file(str(path))


def test_rulebook_scenario_files_are_well_formed() -> None:
    """Every file names the game, its rule and a known expectation, and is a whole scenario."""
    assert SCENARIOS, "no scenario files found"
    for path in SCENARIOS:
        data = load(path)
        assert data.get("game") == "great-race", f"{path.name}: not a Great Race scenario"
        assert data.get("description"), f"{path.name}: no description"
        assert path.name.startswith(KINDS), f"{path.name}: name says no kind of rule"
        assert set(data["expect"]) <= EXPECT_KEYS, f"{path.name}: unknown expect keys"
        assert isinstance(data.get("crews"), list), f"{path.name}: no crews"
        assert isinstance(data.get("inputs"), list), f"{path.name}: no inputs"
        if data["expect"].get("exit") == 2:
            assert "error" in data["expect"], f"{path.name}: a refusal names no legal options"


def test_rulebook_coverage() -> None:
    """The brief's floor: the rulebook's examples, its FAQ, whole turns and ten refusals."""
    names = [path.name for path in SCENARIOS]
    counts = {kind: sum(name.startswith(kind) for name in names) for kind in KINDS}
    assert counts["example-"] >= 15, counts
    assert counts["faq-"] >= 20, counts
    assert counts["turn-"] >= 2, counts
    assert counts["illegal-"] >= 10, counts
