"""Twin races (Titan Race's engine): two races that differ only in what one viewer cannot see
must look the same to that viewer until the rules reveal the difference.

From positions of seeded random races, a twin is dealt again for a viewer (the other hands by
their sizes, the deck, the random source: :func:`app.games.titanrace.engine.worlds._redeal`).
Both play the same inputs (those of the original race); after each one the viewer's state view
(the pending decision included: whether a window opened, for whom, for which event) must be
equal in both, until something the rules show tells them apart: a random outcome (a die, a
shuffle, a stolen card), a card played or discarded face up, a card the viewer draws.

Rules version 1 opened a window only for the holder of a fitting card: the same walk must find
that leak there (so the test can fail), and find none in version 2.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest

from app.games.errors import InputError
from app.games.titanrace.engine import Race, new_game
from app.games.titanrace.engine.race import state_view
from app.games.titanrace.engine.state import RaceState
from app.games.titanrace.engine.worlds import _redeal

TITANS = ("grinder", "rassik", "craken", "ragnarok", "slaugg", "chtoolhoo")
CIRCUITS = ("kaldheira", "dead-mans-lagoon", "ban-kog", "estenggaard", "moltenchest", "anglieh")
RACES = 36
INPUTS = 260
"""Inputs played per race (enough to reach rounds of cards, pushes and windows)."""
TWIN_EVERY = 7
"""A twin is dealt for every viewer at every so many inputs."""
WALK = 40
"""Inputs a twin walks beside the original at most."""


@dataclass
class Leak:
    seed: int
    at: int
    viewer: int
    step: str
    mine: dict[str, Any]
    twin: dict[str, Any]


def random_race(seed: int, version: int) -> tuple[Race, list[RaceState], list[str]]:
    """A race played with random legal inputs: its states before each input, and the inputs."""
    rnd = random.Random(seed)
    count = rnd.choice((3, 4, 5))
    titans = rnd.sample(TITANS, count)
    race = new_game(titans, circuits=(rnd.choice(CIRCUITS),), seed=seed,
                    anytime_windows=titans[:1], version=version)
    states: list[RaceState] = []
    inputs: list[str] = []
    while not race.is_over and len(inputs) < INPUTS:
        options = race.options()
        # (end a turn less often than anything else, so that cards and pushes come up)
        weights = [0.25 if o == "end" else 1.0 for o in options]
        choice = rnd.choices(options, weights)[0]
        states.append(race.state.copy())
        inputs.append(choice)
        race.apply(choice)
    return race, states, inputs


def seat_view(st: RaceState, seat: int) -> dict[str, Any]:
    view = state_view(st, seat=seat)
    view.pop("deck")  # (its size only: compared below with everything else)
    return view


def revealed(a: RaceState, b: RaceState, out_a: list[str], out_b: list[str],
             viewer: int) -> bool:
    """Whether the rules showed something that tells the twins apart to ``viewer``."""
    if out_a != out_b or a.discard != b.discard:
        return True
    mine_a = [t.hand for t in a.titans.values() if t.seat == viewer]
    mine_b = [t.hand for t in b.titans.values() if t.seat == viewer]
    return mine_a != mine_b


def walk(seed: int, at: int, states: list[RaceState], inputs: list[str],
         viewer: int, rnd: random.Random) -> Leak | None:
    """Deal a twin of ``states[at]`` for ``viewer`` and walk both along the race's inputs."""
    mine = states[at].copy()
    if mine.suspended is not None:
        return None  # (a twin of a half-resolved input would have to reach the same point)
    twin = mine.copy()
    _redeal(twin, viewer, rnd)
    if seat_view(mine, viewer) != seat_view(twin, viewer):
        return Leak(seed, at, viewer, "(the deal itself)", seat_view(mine, viewer),
                    seat_view(twin, viewer))
    a, b = Race(mine), Race(twin)
    for step in inputs[at:at + WALK]:
        try:
            out_a = a.apply(step)
            out_b = b.apply(step)
        except InputError:
            return None  # (a card the twin's seat does not hold: its play shows the difference)
        if revealed(a.state, b.state, out_a, out_b, viewer):
            return None
        if seat_view(a.state, viewer) != seat_view(b.state, viewer):
            return Leak(seed, at, viewer, step, seat_view(a.state, viewer),
                        seat_view(b.state, viewer))
    return None


def leaks(version: int, races: int = RACES) -> list[Leak]:
    found: list[Leak] = []
    for seed in range(races):
        race, states, inputs = random_race(seed, version)
        seats = sorted({t.seat for t in race.state.titans.values()})
        rnd = random.Random(seed * 7919)
        for at in range(0, len(states), TWIN_EVERY):
            for viewer in seats:
                leak = walk(seed, at, states, inputs, viewer, rnd)
                if leak is not None:
                    found.append(leak)
    return found


def test_twins_look_the_same_to_every_seat_until_the_rules_tell() -> None:
    found = leaks(version=2)
    assert not found, (f"{len(found)} twin walks told hidden cards apart, the first: seed "
                       f"{found[0].seed} input {found[0].at} viewer {found[0].viewer} after "
                       f"'{found[0].step}':\n{found[0].mine}\n{found[0].twin}")


def test_the_walk_finds_the_first_rules_leak() -> None:
    """Under rules version 1 whether a window opened told what a hand held: the same walk
    finds it (the test above can fail)."""
    found = leaks(version=1, races=12)
    assert found, "the twin walk found no leak in version 1's windows"
    assert any((leak.mine.get("pending") or {}).get("kind") == "react"
               or (leak.twin.get("pending") or {}).get("kind") == "react" for leak in found)


@pytest.mark.parametrize("seed", range(4))
def test_a_twin_shows_the_viewer_the_same_view_at_the_start(seed: int) -> None:
    """The re-deal itself keeps every seat's view (the walk relies on it)."""
    race, states, _ = random_race(seed, 2)
    for viewer in sorted({t.seat for t in race.state.titans.values()}):
        twin = states[0].copy()
        _redeal(twin, viewer, random.Random(seed))
        assert seat_view(twin, viewer) == seat_view(states[0], viewer)
        others = [t.hand for t in twin.titans.values() if t.seat != viewer]
        assert sum(map(len, others)) == sum(
            len(t.hand) for t in states[0].titans.values() if t.seat != viewer)
