"""The Great Race's searching players (``app.games.greatrace.engine.search``): always legal, fair
(the sampled worlds and the answer never depend on what the crew cannot see), deterministic for
a fixed search seed, and within their iteration budget. Budgets here count iterations, never
time."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from app.games.greatrace.engine import CREWS, GreatRace
from app.games.greatrace.engine.bot import choose
from app.games.greatrace.engine.outlook import win_chances
from app.games.greatrace.engine.search import (
    UNSEARCHED,
    Arm,
    Budget,
    fingerprint,
    sample_world,
    search,
    survivors,
)
from app.games.greatrace.ruleset import GreatRaceRuleset
from app.games.rng import Rng

from .test_bot import kind, scramble_hidden

TINY = Budget(seconds=None, iterations=6, depth=6)
STEP_CAP = 3000


def race(crews: int, seed: int, leaders: bool) -> GreatRace:
    return GreatRace.new(list(CREWS[:crews]), seed=seed, leaders=leaders)


def positions(game: GreatRace, every: int = 1) -> Iterator[GreatRace]:
    """Play ``game`` with the easy player, yielding it before every ``every``-th input."""
    for count in range(STEP_CAP):
        if game.is_over:
            return
        if count % every == 0:
            yield game
        game.apply(choose(game))
    raise AssertionError(f"no end after {STEP_CAP} inputs")


def owed(game: GreatRace) -> list[int]:
    return [s for s in game.to_act() if len(game.options(game.crew_of(s))) > 1]


def scramble(game: GreatRace, seat: int, rnd: random.Random) -> GreatRace:
    """Everything the seat cannot see changed: the other hands, the bag's and the deck's order,
    the other sealed plans (the easy player's tests' scramble) and the game's random source."""
    other = scramble_hidden(game, game.crew_of(seat), rnd)
    other.state.rng = Rng(rnd.getrandbits(64))
    return other


@pytest.mark.parametrize("level", ["normal", "strong"])
def test_searching_players_finish_legal_races(level: str) -> None:
    rules = GreatRaceRuleset()
    for seed in range(2):
        game = race(3, 300 + seed, leaders=seed == 1)
        hero = seed % 3
        timed = 2
        for _ in range(STEP_CAP):
            if game.is_over:
                break
            seats = game.to_act()
            answers = []
            for seat in seats:
                crew = game.crew_of(seat)
                if seat == hero:
                    answer = search(game, seat, TINY, seed=seed).answer
                    if len(seats) == 1 and timed:
                        timed -= 1
                        assert rules.bot_move(game, seat, level) in game.options(crew)
                else:
                    answer = choose(game, crew)
                assert answer in game.options(crew), (answer, game.options(crew))
                answers.append(answer)
            game.apply(";".join(answers))
        assert game.is_over and game.verify() == []


@pytest.mark.parametrize(("crews", "seed"), [(2, 7), (3, 8), (4, 9)])
def test_hidden_information_changes_neither_the_worlds_nor_the_answer(
    crews: int, seed: int
) -> None:
    rnd = random.Random(seed)
    checked = differs = 0
    budget = Budget(seconds=None, iterations=4, depth=4)
    for game in positions(race(crews, seed, leaders=seed % 2 == 1), every=3):
        for seat in owed(game):
            mine = search(game, seat, budget, seed=seed, record=True)
            other = scramble(game, seat, rnd)
            assert other.view(seat) == game.view(seat)
            theirs = search(other, seat, budget, seed=seed, record=True)
            assert theirs.worlds == mine.worlds
            assert theirs.answer == mine.answer
            # the values of the rollouts too (the outlook model reads only the sampled world)
            assert [arm.values for arm in theirs.arms] == [arm.values for arm in mine.arms]
            world = sample_world(game, seat, random.Random(seed))
            if world is not None and fingerprint(world.state) != fingerprint(game.state):
                differs += 1
            checked += 1
    assert checked > 20
    assert differs > checked // 2, "the sampled worlds should differ from the truth"


def test_a_fixed_seed_gives_the_same_answer_and_changes_nothing() -> None:
    budget = Budget(seconds=None, iterations=8, depth=8)
    for game in positions(race(3, 21, leaders=True), every=7):
        seat = game.to_act()[0]
        before = game.to_json()
        first = search(game, seat, budget, seed=5, record=True)
        assert game.to_json() == before
        again = search(GreatRace.from_json(before), seat, budget, seed=5, record=True)
        assert (again.answer, again.worlds) == (first.answer, first.worlds)


def test_the_iteration_budget_is_honoured_and_the_clock_stops_the_search() -> None:
    game = race(3, 4, leaders=False)
    while len(owed(game)) == 0 or kind(game) == "plan":
        game.apply(choose(game))
    seat = owed(game)[0]
    for cap in (4, 9, 13):
        report = search(game, seat, Budget(seconds=None, iterations=cap, depth=3), seed=1)
        rounds = report.iterations // len(report.arms)
        assert cap - len(report.arms) < report.iterations <= cap
        assert all(arm.visits == rounds for arm in report.arms)
    ticks = iter(range(1000))
    report = search(game, seat, Budget(seconds=10.5, iterations=100, depth=3), seed=1,
                    clock=lambda: float(next(ticks)))
    assert 0 < report.iterations < 100


def test_minor_decisions_are_left_to_the_easy_player() -> None:
    """Damage, discards and kept cards are answered as the easy player would, unsearched; the
    other decisions are searched."""
    seen = set()
    searched = 0
    for game in positions(race(3, 11, leaders=True)):
        for seat in owed(game):
            decision = kind(game)
            report = search(game, seat, TINY, seed=3)
            if decision in UNSEARCHED:
                assert report.iterations == 0
                assert report.answer == choose(game, game.crew_of(seat))
            else:
                searched += report.iterations > 0
            seen.add(decision)
    assert seen & UNSEARCHED and seen - UNSEARCHED
    assert searched > 10


def test_a_candidate_surely_worse_than_the_easy_answer_is_dropped() -> None:
    easy = Arm("easy", [0.5, 0.6, 0.4, 0.5, 0.7, 0.5])
    worse = Arm("worse", [0.1, 0.2, 0.1, 0.0, 0.3, 0.1])
    close = Arm("close", [0.6, 0.5, 0.4, 0.4, 0.7, 0.6])
    assert survivors([easy, worse, close], "easy") == [easy, close]
    early = [Arm(arm.answer, arm.values[:3]) for arm in (easy, worse, close)]
    assert survivors(early, "easy") == early


def test_the_outlook_shares_the_win_among_the_crews_still_racing() -> None:
    """Each crew's chance is between 0 and 1 and they add up to 1; a crew nearer the finish,
    with a running engine, first in the turn order, has the better chance."""
    game = race(3, 12, leaders=False)
    while game.state.turn < 2:
        game.apply(choose(game))
    st = game.state.copy()
    chances = win_chances(st)
    assert set(chances) == {c.crew for c in st.racing()}
    assert abs(sum(chances.values()) - 1.0) < 1e-9
    assert all(0.0 < p < 1.0 for p in chances.values())
    front, *_, back = st.order
    for crew in st.crews.values():
        crew.space, crew.progress = st.crews[back].space, st.crews[back].progress
        crew.petrol, crew.money, crew.engine, crew.chassis = 6, 20, 4, 4
        crew.hand = []
    even = win_chances(st)
    assert even[front] > even[back]
    ahead = st.copy()
    ahead.crews[back].space, ahead.crews[back].progress = "D11", 10
    assert win_chances(ahead)[back] > even[back]
    broken = st.copy()
    broken.crews[front].engine = 0
    assert win_chances(broken)[front] < even[front]
