"""Seeded random play of The Great Race: every listed option is accepted, and the invariants hold
after every input (gauges, money, assistants, conservation of tiles and cards, serialisation,
replay, hidden information)."""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from app.games.errors import InputError
from app.games.greatrace.engine import CREWS, GreatRace, GreatRaceState
from app.games.greatrace.engine.board import progress
from app.games.greatrace.engine.pieces import (
    ASSISTANTS,
    MAX_CHASSIS,
    MAX_ENGINE,
    MAX_PETROL,
    bag_tiles,
    deck_cards,
)

GAMES = 40
STEP_CAP = 4000
TURN_CAP = 30
"""The test's own guard: a uniformly random race seldom reaches the finish and the rules have no
turn limit, so the test stops playing such a race once its game turn ``TURN_CAP`` is over (a
forward-driving race is played to its end, within ``STEP_CAP`` inputs)."""


def forward_driving(seed: int) -> bool:
    """Whether the race of ``seed`` is played mostly driving forward (else uniformly)."""
    return seed % 3 != 0


def choose(rng: random.Random, game: GreatRace, options: list[str], greedy: bool) -> str:
    """Uniform play, or play that mostly drives forward (so that games reach the finish)."""
    if not greedy:
        return rng.choice(options)
    gos = [o for o in options if o.startswith("go ")]
    if gos and rng.random() < 0.9:
        start = game.state.start
        return max(gos, key=lambda o: (progress(o.split()[1], start), rng.random()))
    for wanted, chance in (("drive", 0.7), ("scout", 0.5)):
        if wanted in options and rng.random() < chance:
            return wanted
    return rng.choice(options)


def check_invariants(game: GreatRace, planned: dict[str, bool]) -> None:
    st = game.state
    for crew in st.crews.values():
        assert 0 <= crew.petrol <= MAX_PETROL, crew
        assert 0 <= crew.engine <= MAX_ENGINE, crew
        assert 0 <= crew.chassis <= MAX_CHASSIS, crew
        assert crew.money >= 0, crew
        assert all(n >= 0 for n in crew.assistants.values())
        assert crew.left <= ASSISTANTS
        if st.window is None:
            assert len(crew.hand) <= crew.chassis, "a hand over the limit is discarded at once"
    tiles = Counter([*st.bag, *st.tiles.values(), *st.removed, *st.drawn])
    assert tiles == Counter(bag_tiles())
    held = [card for crew in st.crews.values() for card in crew.hand]
    cards = Counter([*st.deck, *st.discard, *held, *st.market, *st.tracker])
    assert cards == Counter(deck_cards(st.leaders))
    assert sorted(st.track) == sorted(st.crews)
    values = [st.crews[name].progress for name in st.track]
    assert values == sorted(values, reverse=True)
    if st.phase == "convoy":
        for name, crew in st.crews.items():
            if crew.racing and not planned.get(name):
                assert crew.left == ASSISTANTS, "a crew starts the convoy with 5 assistants"
                planned[name] = True
    else:
        planned.clear()
    data = st.to_json()
    assert json.loads(json.dumps(data)) == data
    assert GreatRaceState.from_json(data).to_json() == data


def check_views(game: GreatRace) -> None:
    st = game.state
    for crew in st.crews.values():
        view = game.view(seat=crew.seat)
        text = json.dumps(view)
        assert "bag_order" not in text
        assert view["bag"] == len(st.bag) and view["deck"] == len(st.deck)
        for other, entry in view["crews"].items():
            if other == crew.crew:
                assert entry["hand"] == st.crews[other].hand
                continue
            assert entry["hand"] == len(st.crews[other].hand)
            if st.phase == "planning":
                assert entry["assistants"] is None
        pending = view["pending"]
        if pending is not None and crew.crew not in pending["crews"]:
            assert "options" not in pending
            assert "tracker" not in pending
    spectator = game.view(spectator=True)
    assert all(isinstance(e["hand"], int) for e in spectator["crews"].values())
    assert spectator["pending"] is None or "options" not in spectator["pending"]


STRANGERS = [
    "go E2", "go A4", "go F15", "buy 3", "buy 10", "buy E", "play militia", "play guide",
    "play transport", "play jerrycan", "play saboteur french", "play trail-hunter E2 E3",
    "play con-artist E2 E3", "play toolbox E3", "play spare-parts C", "play tracker",
    "take", "take militia", "discard guide", "keep driver guide", "damage E2", "damage E1 C1",
    "place p1 E2", "place p2s D4", "guard", "guard E2", "plan french F5", "plan P5",
    "leader", "scout", "draw", "repair", "drive", "fund", "pass", "stop", "done",
]
"""Inputs in the notation, legal only now and then: a refused one must change nothing."""


def refused_changes_nothing(game: GreatRace, rng: random.Random) -> None:
    before = game.state.to_json()
    legal = game.options()
    for text in rng.sample(STRANGERS, 4):
        if text in legal:
            continue
        with pytest.raises(InputError) as caught:
            game.apply(text)
        assert caught.value.legal == legal and caught.value.message
        assert game.state.to_json() == before


def play(seed: int) -> GreatRace:
    rng = random.Random(seed)
    crews = list(CREWS)
    rng.shuffle(crews)
    game = GreatRace.new(crews[: rng.randint(2, 4)], start=rng.choice(["alger", "le-cap"]),
                         leaders=seed % 2 == 1, seed=seed)
    greedy = forward_driving(seed)
    planned: dict[str, bool] = {}
    steps = 0
    while not game.is_over and steps < STEP_CAP and (greedy or game.state.turn <= TURN_CAP):
        options = game.options()
        assert options, game.pending()
        assert len(set(options)) == len(options)
        game.apply(choose(rng, game, options, greedy))
        steps += 1
        check_invariants(game, planned)
        if steps % 7 == 0:
            check_views(game)
        if steps % 5 == 0 and not game.is_over:
            refused_changes_nothing(game, rng)
    return game


@pytest.mark.parametrize("block", range(4))
def test_random_games(block: int) -> None:
    for seed in range(block * GAMES // 4, (block + 1) * GAMES // 4):
        game = play(seed)
        assert game.is_over or not forward_driving(seed), "forward-driving games finish"
        assert game.verify() == []
        assert GreatRace.from_json(json.loads(json.dumps(game.to_json()))).to_json() == (
            game.to_json()
        )
        if game.is_over:
            check_end(game)
        else:  # stopped by the test, not by the rules: the race goes on past turn 30
            assert game.state.turn == TURN_CAP + 1 and not game.state.finishers
            assert game.pending() is not None


def check_end(game: GreatRace) -> None:
    st = game.state
    scores: dict[str, Any] = st.scores or {}
    assert list(scores) == st.finishers
    best = max(scores[name]["total"] for name in st.finishers)
    assert game.winners and scores[game.winners[0]]["total"] == best
    winner_at = st.finishers.index(game.winners[0])
    assert all(scores[name]["total"] < best for name in st.finishers[:winner_at])
    for name in st.finishers:
        assert st.crews[name].hand == []


def test_replay_mid_game_matches() -> None:
    rng = random.Random(99)
    game = GreatRace.new(["english", "italian", "belgian"], leaders=True, seed=99)
    for _ in range(300):
        game.apply(choose(rng, game, game.options(), greedy=True))
    assert game.verify() == []
    again = game.replay(150)
    for text in game.inputs[150:]:
        again.apply(text)
    assert again.state.to_json() == game.state.to_json()
    assert again.outcomes == game.outcomes
