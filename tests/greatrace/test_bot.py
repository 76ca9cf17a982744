"""The Great Race computer player (``app.games.greatrace.engine.bot``): always legal, finishes
races, plays fair (hidden information never changes its answer), deterministic, and sensible in
a few situations set up by hand."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from app.games.greatrace.engine import CREWS, GreatRace, load_scenario
from app.games.greatrace.engine.bot import (
    Sight,
    choose,
    shortest,
    shortest_from,
    shortest_into,
    think,
)
from app.games.greatrace.engine.game import sight_view
from app.games.greatrace.engine.notation import all_plans

STEP_CAP = 3000
"""The test's own guard: a computer race not over after this many inputs fails the test (the
rules have no turn limit, so only a vehicle's finish ends a race)."""
FINISH_SEEDS = 30
BRISK_TURNS = 30
"""A computer race should be over before this game turn (the figure of the first rules' call-off,
kept as the measure of a brisk race)."""


def owing(game: GreatRace) -> str:
    pending = game.pending()
    assert pending is not None
    crew: str = pending["crews"][0]
    return crew


def kind(game: GreatRace) -> str:
    pending = game.pending()
    assert pending is not None
    found: str = pending["kind"]
    return found


def race(crews: int, seed: int, leaders: bool, start: str = "alger") -> GreatRace:
    return GreatRace.new(list(CREWS[:crews]), start=start, leaders=leaders, seed=seed)


def bot_game(game: GreatRace) -> Iterator[GreatRace]:
    """Play ``game`` with the computer at every seat, yielding it before each input; every
    answer is checked to be the strategy's own and legal."""
    for _ in range(STEP_CAP):
        if game.is_over:
            return
        yield game
        crew = owing(game)
        options = game.options(crew)
        answer = think(game, crew)
        assert answer in options, (answer, options)
        assert choose(game, crew) == answer
        game.apply(answer)
    raise AssertionError(f"no end after {STEP_CAP} inputs")


def play_out(game: GreatRace) -> GreatRace:
    for _ in bot_game(game):
        pass
    return game


@pytest.mark.parametrize("crews", [2, 3, 4])
@pytest.mark.parametrize("leaders", [False, True])
@pytest.mark.parametrize("start", ["alger", "le-cap"])
def test_computer_races_are_legal_and_reach_the_end(crews: int, leaders: bool, start: str) -> None:
    for seed in range(4):
        game = play_out(race(crews, seed, leaders, start))
        assert game.is_over
        assert game.winner in CREWS[:crews]
        assert game.verify() == []


def test_computer_races_finish_briskly() -> None:
    turns = []
    for seed in range(FINISH_SEEDS):
        game = play_out(race(2 + seed % 3, 100 + seed, leaders=seed % 2 == 1))
        assert game.state.finishers, "a race ends only when a vehicle finishes"
        turns.append(game.state.turn)
    early = sum(1 for turn in turns if turn < BRISK_TURNS)
    rate = early / len(turns)
    message = f"{early}/{len(turns)} races ({rate:.0%}) ended before turn {BRISK_TURNS}; {turns}"
    assert rate >= 0.8, message


def test_the_computer_beats_random_play() -> None:
    won = []
    for seed in range(10):
        game = race(2, 200 + seed, leaders=seed % 2 == 1)
        computer = CREWS[seed % 2]
        rnd = random.Random(seed)
        while not game.is_over:
            crew = owing(game)
            game.apply(choose(game, crew) if crew == computer else rnd.choice(game.options(crew)))
        won.append(game.winner == computer)
    assert sum(won) >= 9, f"the computer won {sum(won)} of {len(won)} races against random play"


def scramble_hidden(game: GreatRace, crew: str, rnd: random.Random) -> GreatRace:
    """A copy of ``game`` in which everything ``crew`` cannot see is changed: the bag's order, the
    deck's order and which cards the other crews hold (the counts stay), the other plans."""
    other = game.copy()
    st = other.state
    rnd.shuffle(st.bag)
    others = [c for name, c in st.crews.items() if name != crew]
    pool = list(st.deck) + [card for c in others for card in c.hand]
    rnd.shuffle(pool)
    st.deck = pool[: len(st.deck)]
    rest = pool[len(st.deck):]
    for c in others:
        c.hand, rest = rest[: len(c.hand)], rest[len(c.hand):]
        if c.plan is not None:
            c.plan = dict(zip("PMSF", _plan_counts(rnd.choice(all_plans(c.crew))), strict=True))
    return other


def _plan_counts(text: str) -> list[int]:
    counts = dict.fromkeys("PMSF", 0)
    for word in text.split()[2:]:
        counts[word[0]] = int(word[1:])
    return [counts[box] for box in "PMSF"]


@pytest.mark.parametrize(("crews", "seed"), [(2, 7), (3, 8), (4, 9), (4, 10)])
def test_hidden_information_never_changes_the_choice(crews: int, seed: int) -> None:
    rnd = random.Random(seed)
    checked = 0
    for game in bot_game(race(crews, seed, leaders=seed % 2 == 0)):
        pending = game.pending()
        assert pending is not None
        for crew in pending["crews"]:
            if len(game.options(crew)) < 2:
                continue
            mine = choose(game, crew)
            for _ in range(2):
                other = scramble_hidden(game, crew, rnd)
                assert other.view(game.seat_of(crew)) == game.view(game.seat_of(crew))
                assert choose(other, crew) == mine, (pending["kind"], crew)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize(("crews", "seed"), [(3, 11), (4, 12)])
def test_the_sight_view_is_part_of_the_seat_view(crews: int, seed: int) -> None:
    """What the easy player reads is what the crew's own view shows, entry by entry."""
    checked = 0
    for game in bot_game(race(crews, seed, leaders=seed % 2 == 0)):
        pending = game.pending()
        assert pending is not None
        for crew in pending["crews"]:
            seen = game.view(game.seat_of(crew))
            sight = sight_view(game.state, crew, game.options(crew))
            assert sight["pending"] == seen["pending"]
            for key, value in sight.items():
                if key == "crews":
                    for name, entries in value.items():
                        assert entries == {k: seen["crews"][name][k] for k in entries}
                else:
                    assert value == seen[key], key
            checked += 1
    assert checked > 100


def test_the_written_out_shortest_paths_are_the_plain_ones() -> None:
    """The numbered Dijkstra of the cost to go gives the plain one's costs to the last bit, in
    the same order."""
    checked = 0
    for game in bot_game(race(3, 13, leaders=True)):
        crew = owing(game)
        sight = Sight(crew, sight_view(game.state, crew, game.options(crew)),
                      game.options(crew), game.inputs)
        into = shortest_into(sight.finish, sight.entering, sight.fares)
        assert list(into.items()) == list(shortest(sight.finish, sight.moves_into).items())
        here = sight.me["space"]
        out = shortest_from(here, sight.entering, sight.fares)
        assert list(out.items()) == list(shortest(here, sight.moves).items())
        checked += 1
    assert checked > 100


def test_the_choice_is_deterministic_and_changes_nothing() -> None:
    for game in bot_game(race(3, 21, leaders=True)):
        crew = owing(game)
        before = game.to_json()
        first = choose(game, crew)
        assert game.to_json() == before
        assert choose(GreatRace.from_json(before), crew) == first
        assert choose(game) == first


def test_a_crew_is_named_for_each_plan() -> None:
    game = GreatRace.new(["french", "belgian", "italian"], seed=3)
    while kind(game) != "plan":
        game.apply(choose(game))
    for crew in ("french", "belgian", "italian"):
        plan = choose(game, crew)
        assert plan.startswith(f"plan {crew} ") and plan in game.options(crew)


# ---------------------------------------------------------------------- situations


def scenario(**data: Any) -> GreatRace:
    game, inputs = load_scenario({"game": "great-race", **data})
    for text in inputs:
        game.apply(text)
    return game


def test_damage_keeps_the_engine_running() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "E2", "engine": 1, "chassis": 4, "assistants": {"M": 2}},
               {"crew": "belgian"}],
        tiles={"E3": "p1d2"}, phase="convoy", inputs=["drive", "go E3"])
    assert kind(game) == "damage"
    assert choose(game) == "damage C2"


def test_a_saboteur_wrecks_the_engine_it_can_reach() -> None:
    game = scenario(
        crews=[{"crew": "french", "hand": ["saboteur"], "assistants": {"M": 1}},
               {"crew": "belgian", "space": "E4", "engine": 2, "chassis": 5,
                "assistants": {"M": 1}}],
        phase="convoy", inputs=["play saboteur belgian"])
    assert kind(game) == "damage"
    assert choose(game) == "damage E2"


def test_the_saboteur_aims_at_the_leader() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "E3", "hand": ["saboteur"], "assistants": {"M": 1}},
               {"crew": "belgian", "space": "E5"},
               {"crew": "italian", "space": "F9"}],
        phase="convoy")
    assert choose(game) == "play saboteur italian"


def test_a_drive_heads_for_the_finish_and_takes_the_known_cheap_tiles() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "F1", "assistants": {"M": 1}}, {"crew": "belgian"}],
        tiles={"E2": "p1", "F2": "p1d1x"},
        phase="convoy", inputs=["drive"])
    assert choose(game) == "go E2"


def test_petrol_is_bought_in_a_city_before_driving() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "C7", "petrol": 3, "money": 100,
                "assistants": {"M": 1}}, {"crew": "belgian"}],
        phase="convoy")
    assert choose(game) == "buy 7"


def test_a_worn_engine_is_repaired_with_the_cards_in_hand() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "E4", "engine": 1, "chassis": 5, "money": 0,
                "hand": ["toolbox"], "assistants": {"M": 2}}, {"crew": "belgian"}],
        phase="convoy")
    assert choose(game) == "repair"
    game.apply("repair")
    assert choose(game) == "play toolbox E3"


def test_a_danger_is_avoided_with_a_security_assistant() -> None:
    game = scenario(
        crews=[{"crew": "french", "space": "E2", "assistants": {"M": 1, "S": 1},
                "hand": ["militia"]}, {"crew": "belgian"}],
        tiles={"E3": "p1x"}, phase="convoy", inputs=["drive", "go E3"])
    assert kind(game) == "avoid"
    assert choose(game) == "guard"


def test_the_best_market_card_is_taken_and_the_worst_discarded() -> None:
    game = scenario(
        crews=[{"crew": "french"}, {"crew": "belgian", "chassis": 1, "hand": ["con-artist"]}],
        market=["trail-hunter", "driver", "con-artist"])
    assert choose(game) == "take driver"
    game.apply("take driver")
    assert kind(game) == "discard"
    assert choose(game).startswith("discard ")
    assert choose(game) in ("discard con-artist", "discard trail-hunter")


def test_a_state_copy_is_equal_and_shares_nothing_it_may_change() -> None:
    """``GreatRaceState.copy`` passes its fields by position (it is on the rollouts' hot
    path): the copy holds what the state holds at every point of a race, in lists and tables
    of its own (changing the copy's leaves the state as it was)."""
    from dataclasses import fields

    checked = 0
    for game in bot_game(race(3, 21, leaders=True)):
        st = game.state
        copy = st.copy()
        assert copy.to_json() == st.to_json()
        assert copy.rng is not st.rng and copy.rng.to_json() == st.rng.to_json()
        assert copy.crews == st.crews and copy.window == st.window
        for f in fields(st):
            value = getattr(st, f.name)
            if isinstance(value, (list, dict)):
                assert getattr(copy, f.name) is not value, f.name
        checked += 1
    assert checked > 100
