"""A game's log replays to the same state, and a tampered log is caught."""

from __future__ import annotations

import random

from app.games.titanrace.engine import Race, new_game


def finished_game(seed: int = 11) -> Race:
    race = new_game(["grinder", "rassik", "craken", "chtoolhoo"], circuits=["anglieh"], seed=seed)
    rnd = random.Random(seed)
    while not race.is_over:
        race.apply(rnd.choice(race.options()))
    return race


def test_untouched_log_verifies() -> None:
    race = finished_game()
    assert race.verify() == []
    assert any(race.outcomes), "a whole game rolls dice after the first pick"


def test_altered_outcome_is_named() -> None:
    race = finished_game()
    index = next(i for i, o in enumerate(race.outcomes) if o)
    race.outcomes[index] = ["roll " + " ".join(["purple"] * 4)]
    problems = race.verify()
    assert len(problems) == 1 and f"input {index}" in problems[0]


def test_altered_state_is_caught() -> None:
    race = finished_game()
    race.state.titans["craken"].life = 1 if race.state.titans["craken"].life != 1 else 2
    assert race.verify() == ["the replayed state differs from the stored state"]


def test_log_that_no_longer_replays_is_reported() -> None:
    race = finished_game()
    race.inputs[3] = "move LLL" if race.inputs[3] != "move LLL" else "move SS"
    problems = race.verify()
    assert problems and problems[0].startswith("the log does not replay")


def test_same_seed_same_game_different_seed_other_dice() -> None:
    a, b = finished_game(5), finished_game(5)
    assert a.to_json() == b.to_json()
    assert finished_game(6).outcomes != a.outcomes
