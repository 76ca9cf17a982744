"""The searching players' estimate of a race they stop looking at
(``app.games.titanrace.engine.evaluation``): a share of the win among the sides, in the order
its weights say."""

from __future__ import annotations

import pytest

from app.games.titanrace.engine import new_game
from app.games.titanrace.engine.bot import choose
from app.games.titanrace.engine.evaluation import evaluate
from app.games.titanrace.engine.state import RaceState


def midrace(seed: int = 1, inputs: int = 40, titans: int = 3) -> RaceState:
    names = ["grinder", "rassik", "craken", "ragnarok", "slaugg", "chtoolhoo"][:titans]
    race = new_game(names, seed=seed)
    for _ in range(inputs):
        race.apply(choose(race))
    return race.state.copy()


@pytest.mark.parametrize("titans", [3, 4, 6])
def test_the_chances_of_the_seats_add_up_to_one(titans: int) -> None:
    st = midrace(titans=titans)
    chances = [evaluate(st, seat) for seat in range(titans)]
    assert all(0.0 < c < 1.0 for c in chances)
    assert sum(chances) == pytest.approx(1.0)


def test_a_teams_race_gives_teammates_the_same_chance() -> None:
    race = new_game(["grinder", "rassik", "craken", "ragnarok"], variant="teams",
                    teams=[["grinder", "craken"], ["rassik", "ragnarok"]], seed=2)
    for _ in range(30):
        race.apply(choose(race))
    st = race.state
    assert evaluate(st, 0) == pytest.approx(evaluate(st, 2))
    assert evaluate(st, 0) + evaluate(st, 1) == pytest.approx(1.0)


def test_a_finished_race_is_won_or_lost() -> None:
    race = new_game(["grinder", "rassik", "craken"], seed=3)
    while not race.is_over:
        race.apply(choose(race))
    winner = race.state.titans[race.state.winners[0]].seat
    assert [evaluate(race.state, seat) for seat in range(3)] == [
        1.0 if seat == winner else 0.0 for seat in range(3)]


def test_progress_life_and_a_recovery_raise_a_titans_chance() -> None:
    st = midrace()
    name = st.order[1]
    titan = st.titans[name]
    assert titan.pos is not None
    base = evaluate(st, titan.seat)
    ahead = st.copy()
    moved = ahead.titans[name]
    moved.pos = (titan.pos[0], titan.pos[1] + 2)
    assert evaluate(ahead, titan.seat) > base
    hurt = st.copy()
    hurt.titans[name].life = max(titan.life - 2, 1)
    assert evaluate(hurt, titan.seat) < base
    knocked = st.copy()
    knocked.titans[name].life, knocked.titans[name].ko = 0, True
    recovering = knocked.copy()
    recovering.titans[name].ko_passed = True
    assert evaluate(knocked, titan.seat) < evaluate(recovering, titan.seat)


def test_a_lead_counts_for_more_near_the_finish() -> None:
    """The same two-row lead is a bigger share of the win on the last lap than on the first."""
    early, late = midrace(), midrace()
    for st, base in ((early, 4), (late, 30)):
        for k, name in enumerate(st.order):
            t = st.titans[name]
            t.pos = (k * 2, base + (2 if k == 0 else 0))
            t.life, t.ko, t.hand = 5, False, []
    leader = early.titans[early.order[0]].seat
    assert evaluate(late, leader) > evaluate(early, leader)
