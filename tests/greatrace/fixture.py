"""The Great Race's test fixture (tests/gamefixtures.py): its samples and test data."""

from __future__ import annotations

from pathlib import Path

from tests.gamefixtures import GameFixture

FIXTURE = GameFixture(
    scenarios=Path(__file__).resolve().parent / "scenarios",
    scenario_keys={"game": str, "crews": list, "inputs": list},
    command_scenarios=("example-drive-known-territory.json", "illegal-plan-not-five.json"),
    scenario_kinds=("example-", "faq-", "turn-", "setup-", "card-", "leader-", "illegal-"),
)
