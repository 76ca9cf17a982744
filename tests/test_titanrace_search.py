"""The searching computer players of Titan Race (``app.games.titanrace.engine.search``): always
legal, blind to what their seat cannot see, repeatable for a seed, within their budget; and the
easy player they build on beats random play."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from app.games.base import EASY, NORMAL, STRONG
from app.games.rng import KeyedRng, Rng
from app.games.titanrace.engine import BUILT_IN, Race, new_game
from app.games.titanrace.engine.bot import choose
from app.games.titanrace.engine.cards import CARDS
from app.games.titanrace.engine.search import (
    BUDGETS,
    STRONG_BUDGET,
    Budget,
    Search,
    sample_world,
    search_move,
)
from app.games.titanrace.engine.state import RaceState
from app.games.titanrace.ruleset import TitanRaceRuleset

TINY = Budget(iterations=6, seconds=None, horizon=2)
LONG = Budget(iterations=4, seconds=None, horizon=STRONG_BUDGET.horizon)
"""As far ahead as the strong player looks: its rollouts draw Bonus cards and roll later dice."""
TITANS = ["grinder", "rassik", "craken", "ragnarok", "slaugg", "chtoolhoo"]


def seat_won(race: Race, seat: int) -> bool:
    return seat in {race.state.titans[name].seat for name in race.state.winners}


# ---------------------------------------------------------------------- always legal


@pytest.mark.parametrize(("variant", "titans", "circuit", "seed"), [
    ("standard", ["grinder", "craken", "slaugg"], "dead-mans-lagoon", 1),
    ("two-player", ["chtoolhoo", "ragnarok", "grinder", "rassik"], "anglieh", 2),
    ("teams", ["grinder", "craken", "slaugg", "rassik"], "ban-kog", 3),
])
def test_the_search_always_answers_a_legal_option(
    variant: str, titans: list[str], circuit: str, seed: int
) -> None:
    teams = [titans[0::2], titans[1::2]] if variant == "teams" else None
    race = new_game(titans, circuits=[circuit], variant=variant, teams=teams, seed=seed)
    searched = 0
    while not race.is_over:
        seat = race.seat_to_act()
        assert seat is not None
        if seat == 0:
            options = race.options()
            before = race.to_json()
            option = search_move(race.state, seat, TINY, seed=searched, clock=None)
            assert race.to_json() == before, "the search changed the race"
            assert option in options, (option, options)
            searched += 1
        else:
            option = choose(race)
        race.apply(option)
    assert searched > 10


def test_the_ruleset_answers_at_every_level() -> None:
    ruleset = TitanRaceRuleset()
    race = new_game(["grinder", "craken", "slaugg"], seed=4)
    for _ in range(12):
        race.apply(choose(race))
    assert ruleset.bot_move(race, level=EASY) == choose(race)
    for level in (NORMAL, STRONG):
        assert ruleset.bot_move(race, level=level) in race.options()


# ---------------------------------------------------------------------- hidden information


def scramble(st: RaceState, seat: int, rnd: random.Random) -> RaceState:
    """A copy of ``st`` in which everything ``seat`` cannot see is changed, also in a suspended
    input's base: which cards the other Titans hold (the counts stay), the deck's order, the
    random source (another scheme and key) and any scripted rolls."""
    other = st.copy()
    for part in (other, other.suspended.base if other.suspended is not None else None):
        if part is None:
            continue
        others = [t for t in part.titans.values() if t.seat != seat]
        pool = list(part.deck) + [card for t in others for card in t.hand]
        rnd.shuffle(pool)
        for t in others:
            t.hand, pool = pool[: len(t.hand)], pool[len(t.hand):]
        part.deck = pool
        part.rng = KeyedRng(rnd.randbytes(32))
        part.forced_rolls = [["red"] * len(part.order)]
    return other


def decisions(seed: int, circuit: str) -> Iterator[tuple[Race, int]]:
    """The decisions of an easy-only race with hidden cards about: each with its seat."""
    race = new_game(["grinder", "craken", "slaugg", "rassik"], circuits=[circuit], seed=seed)
    while not race.is_over:
        seat = race.seat_to_act()
        assert seat is not None
        if len(race.options()) > 1 and race.state.round > 1:
            yield race.copy(), seat
        race.apply(choose(race))


def hidden_parts(st: RaceState, seat: int) -> tuple[list[list[str]], list[str]]:
    return [t.hand for t in st.titans.values() if t.seat != seat], st.deck


@pytest.mark.parametrize(("seed", "circuit", "budget"), [
    (5, "dead-mans-lagoon", TINY), (8, "kaldheira", TINY), (8, "kaldheira", LONG)])
def test_hidden_information_never_changes_the_worlds_or_the_choice(
    seed: int, circuit: str, budget: Budget
) -> None:
    rnd = random.Random(seed)
    checked = differs = windows = 0
    for race, seat in decisions(seed, circuit):
        if rnd.random() > 0.25 and race.state.window is None:
            continue
        truth = race.state
        changed = scramble(truth, seat, rnd)
        assert hidden_parts(changed, seat) != hidden_parts(truth, seat) or not any(
            hidden_parts(truth, seat)[0]), "the scramble changed nothing"
        for k in range(3):
            world = sample_world(truth, seat, random.Random(k))
            again = sample_world(changed, seat, random.Random(k))
            assert world is not None and again is not None
            assert world.to_json() == again.to_json()
            assert world.rng.to_json() not in (truth.rng.to_json(), changed.rng.to_json())
            differs += hidden_parts(world, seat) != hidden_parts(truth, seat)
        assert search_move(truth, seat, budget, seed=checked, clock=None) == search_move(
            changed, seat, budget, seed=checked, clock=None)
        checked += 1
        windows += truth.window is not None
    assert checked >= 8 and windows >= 1
    assert differs >= checked, "the sampled worlds are the truth too often"


def test_a_window_inside_a_played_card_is_sampled_blind_too() -> None:
    """A pirate attack met by the Leap its own player plays: the decision waits inside the
    card's input, so the worlds re-run that input from a sampled deal before it."""
    race = new_game(["grinder", "craken", "slaugg", "rassik"], circuits=["dead-mans-lagoon"],
                    seed=21)
    while race.state.window is None or not race.state.suspended.input.startswith("play"):
        race.apply(choose(race))
    seat = race.seat_to_act()
    assert seat is not None
    truth = race.state
    changed = scramble(truth, seat, random.Random(3))
    for k in range(4):
        world = sample_world(truth, seat, random.Random(k))
        assert world is not None and world.window == truth.window
        again = sample_world(changed, seat, random.Random(k))
        assert again is not None and world.to_json() == again.to_json()
    assert search_move(truth, seat, TINY, seed=1, clock=None) == search_move(
        changed, seat, TINY, seed=1, clock=None)


def test_a_sampled_world_deals_every_unseen_card_and_keeps_what_the_seat_sees() -> None:
    race, seat = next(iter(decisions(7, "kaldheira")))
    truth = race.state
    world = sample_world(truth, seat, random.Random(1))
    assert world is not None
    dealt = sorted([c for t in world.titans.values() for c in t.hand] + world.deck + world.discard)
    assert dealt == sorted(CARDS)
    assert isinstance(world.rng, Rng) and world.forced_rolls == []
    assert race.view(seat=seat) == Race(world, initial={}).view(seat=seat)


# ---------------------------------------------------------------------- determinism, budget


def test_a_fixed_seed_gives_the_same_worlds_and_choice() -> None:
    for race, seat in list(decisions(8, "anglieh"))[::9]:
        runs = []
        for _ in range(2):
            search = Search(race.state, seat, TINY, random.Random(42), keep_worlds=True)
            runs.append((search.run(), [w.to_json() for w in search.worlds]))
        assert runs[0] == runs[1]


def test_the_iteration_budget_is_honoured() -> None:
    race, seat = list(decisions(9, "kaldheira"))[20]
    assert len(race.options()) > 1
    for iterations in (1, 7, 30):
        search = Search(race.state, seat, Budget(iterations=iterations, seconds=None),
                        random.Random(0), keep_worlds=True)
        search.run()
        assert search.iterations == iterations == len(search.worlds)


def test_the_time_budget_is_read_from_the_given_clock() -> None:
    race, seat = list(decisions(9, "kaldheira"))[20]
    ticks = iter(range(1000))
    search = Search(race.state, seat, Budget(iterations=500, seconds=4.5), random.Random(0),
                    clock=lambda: float(next(ticks)))
    search.run()
    assert search.iterations == 4


def test_a_single_option_is_answered_without_searching() -> None:
    race = new_game(["grinder", "craken", "slaugg"], seed=10)
    while len(race.options()) > 1:
        race.apply(choose(race))
    seat = race.seat_to_act()
    assert seat is not None
    search = Search(race.state, seat, BUDGETS[STRONG], random.Random(0))
    assert search.run() == race.options()[0] and search.iterations == 0


# ---------------------------------------------------------------------- the easy player


def test_the_easy_player_beats_random_play() -> None:
    """Three seats, the easy player in one (in turn each), two uniformly random players: a fair
    share would be 10 of 30 races (it wins about nine in ten)."""
    won = []
    for seed in range(30):
        rnd = random.Random(seed)
        race = new_game(rnd.sample(TITANS, 3), circuits=[BUILT_IN[seed % len(BUILT_IN)]],
                        seed=300 + seed)
        computer = seed % 3
        while not race.is_over:
            race.apply(choose(race) if race.seat_to_act() == computer
                       else rnd.choice(race.options()))
        won.append(seat_won(race, computer))
    assert sum(won) >= 20, f"the easy player won {sum(won)} of {len(won)} races against random play"
