"""Titan Race's test fixture (tests/gamefixtures.py): its samples and test data."""

from __future__ import annotations

from pathlib import Path

from tests.gamefixtures import GameFixture

TESTS = Path(__file__).resolve().parent.parent

FIXTURE = GameFixture(
    scenarios=TESTS / "scenarios",
    scenario_keys={"circuit": object, "titans": list, "inputs": list},
    command_scenarios=("ability-grinder.json", "illegal-move-ss-red.json"),
)
