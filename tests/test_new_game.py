"""Setting up a race with ``new_game``: validation, the deal, the first player and first roll."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.games.titanrace.engine import CARDS, COLOURS, TITANS, EngineError, new_game
from app.games.titanrace.engine.cards import TITAN_COLOUR

SIX = list(TITANS)
FOUR = ["grinder", "craken", "slaugg", "rassik"]


def refused(match: str, titans: list[str], **kwargs: Any) -> None:
    with pytest.raises(EngineError, match=match):
        new_game(titans, **kwargs)


# ---------------------------------------------------------------------- Titans and players


def test_unknown_titan_is_refused() -> None:
    refused("unknown Titan 'zeus'", ["grinder", "zeus", "craken"])


def test_duplicate_titan_is_refused() -> None:
    refused("once", ["grinder", "craken", "Grinder"])


def test_titan_names_are_case_insensitive() -> None:
    race = new_game([" Grinder", "CRAKEN", "slaugg"])
    assert list(race.state.titans) == ["grinder", "craken", "slaugg"]


@pytest.mark.parametrize("count", [0, 1, 2])
def test_fewer_than_three_players_in_a_standard_race_are_refused(count: int) -> None:
    refused("3 to 6", SIX[:count])


@pytest.mark.parametrize("count", [3, 4, 5, 6])
def test_three_to_six_players_are_accepted(count: int) -> None:
    race = new_game(SIX[:count], seed=count)
    assert [t.seat for t in race.state.titans.values()] == list(range(count))
    assert race.state.variant == "standard"


def test_unknown_variant_is_refused() -> None:
    refused("unknown variant", SIX[:3], variant="relay")


# ---------------------------------------------------------------------- two-player


def test_two_player_race_has_four_titans_on_seats_0_1_0_1() -> None:
    race = new_game(FOUR, variant="two-player", seed=3)
    seats = {name: t.seat for name, t in race.state.titans.items()}
    assert seats == {"grinder": 0, "craken": 1, "slaugg": 0, "rassik": 1}
    assert len(race.state.dice) == 4
    # each Titan has its own hand
    assert all(len(t.hand) == 1 for t in race.state.titans.values())


@pytest.mark.parametrize("count", [2, 3, 5, 6])
def test_two_player_race_needs_exactly_four_titans(count: int) -> None:
    refused("four Titans", SIX[:count], variant="two-player")


# ---------------------------------------------------------------------- teams


def test_two_teams_of_two_alternating_are_accepted() -> None:
    race = new_game(
        FOUR, variant="teams", teams=[["grinder", "slaugg"], ["craken", "rassik"]], seed=2
    )
    teams = {name: t.team for name, t in race.state.titans.items()}
    assert teams == {"grinder": 0, "craken": 1, "slaugg": 0, "rassik": 1}
    assert race.view()["titans"]["craken"]["team"] == 1


@pytest.mark.parametrize(
    "teams",
    [
        [["grinder", "craken"], ["slaugg", "rassik"]],
        [["grinder", "rassik"], ["craken", "slaugg"]],
    ],
)
def test_teammates_side_by_side_are_refused(teams: list[list[str]]) -> None:
    refused("next to each other", FOUR, variant="teams", teams=teams)


@pytest.mark.parametrize(
    "teams",
    [
        [["grinder", "ragnarok"], ["rassik", "slaugg"], ["craken", "chtoolhoo"]],
        [["grinder", "craken"], ["rassik", "slaugg"], ["ragnarok", "chtoolhoo"]],
        [["grinder", "craken", "slaugg"], ["rassik", "ragnarok", "chtoolhoo"]],
    ],
)
def test_six_players_in_teams_not_side_by_side_are_accepted(teams: list[list[str]]) -> None:
    race = new_game(SIX, variant="teams", teams=teams, seed=1)
    for index, team in enumerate(teams):
        assert {race.state.titans[name].team for name in team} == {index}


@pytest.mark.parametrize(
    "teams",
    [
        [["grinder", "rassik"], ["craken", "ragnarok"], ["slaugg", "chtoolhoo"]],
        # only the last and the first seats are teammates: the table is round
        [["grinder", "chtoolhoo"], ["rassik", "ragnarok"], ["craken", "slaugg"]],
        [["grinder", "ragnarok"], ["rassik", "craken"], ["slaugg", "chtoolhoo"]],
    ],
)
def test_six_players_with_teammates_side_by_side_are_refused(teams: list[list[str]]) -> None:
    refused("next to each other", SIX, variant="teams", teams=teams)


@pytest.mark.parametrize(
    ("titans", "teams"),
    [
        (FOUR, [["grinder", "slaugg"], ["craken"]]),  # a Titan in no team
        (FOUR, [["grinder", "slaugg"], ["craken", "rassik", "ragnarok"]]),  # not racing
        (SIX[:5], [["grinder", "craken", "slaugg"], ["rassik", "ragnarok"]]),  # 5 players
        (SIX, [["grinder", "craken"], ["rassik", "ragnarok", "slaugg", "chtoolhoo"]]),
        (FOUR, [["grinder"], ["craken"], ["slaugg"], ["rassik"]]),  # teams of one
    ],
)
def test_badly_shaped_teams_are_refused(titans: list[str], teams: list[list[str]]) -> None:
    with pytest.raises(EngineError):
        new_game(titans, variant="teams", teams=teams)


def test_teams_variant_needs_teams() -> None:
    refused("needs teams", FOUR, variant="teams")


# ---------------------------------------------------------------------- Grand Slam


@pytest.mark.parametrize("count", [1, 2])
def test_grand_slam_needs_three_circuits(count: int) -> None:
    circuits = ["kaldheira", "moltenchest", "ban-kog"][:count]
    refused("three circuits", SIX[:3], variant="grand-slam", circuits=circuits)


def test_grand_slam_with_three_circuits() -> None:
    circuits = ["kaldheira", "moltenchest", "ban-kog"]
    race = new_game(SIX[:4], variant="grand-slam", circuits=circuits, seed=5)
    assert [c.name for c in race.state.circuits] == circuits
    assert race.view()["cycle_rows"] == 36


@pytest.mark.parametrize("count", [2, 4])
def test_a_race_uses_one_or_three_circuits(count: int) -> None:
    circuits = ["kaldheira", "moltenchest", "ban-kog", "anglieh"][:count]
    with pytest.raises(EngineError):
        new_game(SIX[:3], circuits=circuits)


def test_unknown_circuit_is_refused() -> None:
    refused("unknown circuit", SIX[:3], circuits=["atlantis"])


def test_inline_and_user_circuits_are_accepted() -> None:
    race = new_game(SIX[:3], circuits=[{"name": "plain"}])
    assert race.state.circuits[0].features == {}


# ---------------------------------------------------------------------- the deal


@pytest.mark.parametrize(
    ("titans", "variant"),
    [(SIX[:3], "standard"), (SIX, "standard"), (FOUR, "two-player"), (SIX[3:], "standard")],
)
@pytest.mark.parametrize("seed", [0, 1, 99])
def test_every_titan_starts_with_one_card_and_full_life(
    titans: list[str], variant: str, seed: int
) -> None:
    race = new_game(titans, variant=variant, seed=seed)
    st = race.state
    for name, t in st.titans.items():
        assert len(t.hand) == 1, name
        assert t.life == (4 if name == "chtoolhoo" else 6), name
        assert t.pos is None and not t.ko and not t.ko_passed and not t.ability_used
    hands = [card for t in st.titans.values() for card in t.hand]
    assert sorted(hands + st.deck) == sorted(CARDS)
    assert len(CARDS) == 13
    assert st.discard == []
    assert st.traps == set()
    assert st.round == 1


def test_the_deal_depends_on_the_seed() -> None:
    deals = {
        tuple(t.hand[0] for t in new_game(SIX, seed=seed).state.titans.values())
        for seed in range(20)
    }
    assert len(deals) > 10


# ---------------------------------------------------------------------- first player


def is_rotation(order: list[str], seating: list[str]) -> bool:
    at = seating.index(order[0])
    return order == seating[at:] + seating[:at]


@pytest.mark.parametrize("titans", [SIX[:3], ["craken", "chtoolhoo", "slaugg", "grinder"], SIX])
def test_first_player_is_a_titan_in_the_game_and_order_rotates_the_seating(
    titans: list[str],
) -> None:
    firsts: Counter[str] = Counter()
    for seed in range(60):
        race = new_game(titans, seed=seed)
        order = race.state.order
        assert order[0] in titans
        assert sorted(order) == sorted(titans)
        assert is_rotation(order, titans), (seed, order)
        assert race.pending()["titan"] == order[0]
        assert race.state.turn_index == 0
        firsts[order[0]] += 1
    # the die decides: every Titan in the game plays first for some seed
    assert set(firsts) == set(titans)


def test_two_player_order_rotates_the_seating_cycle() -> None:
    firsts = set()
    for seed in range(40):
        race = new_game(FOUR, variant="two-player", seed=seed)
        assert is_rotation(race.state.order, FOUR)
        firsts.add(race.state.order[0])
    assert firsts == set(FOUR)


def test_first_player_colour_only_among_racing_titans() -> None:
    # Only Rassik (yellow), Ragnarok (brown) and Chtoolhoo (purple) race: a red, blue or green
    # roll must be rolled again, never making an absent Titan (or its neighbour) first.
    titans = ["rassik", "ragnarok", "chtoolhoo"]
    for seed in range(40):
        first = new_game(titans, seed=seed).state.order[0]
        assert TITAN_COLOUR[first] in ("yellow", "brown", "purple")


# ---------------------------------------------------------------------- determinism


@pytest.mark.parametrize("variant", ["standard", "two-player"])
def test_same_seed_same_game(variant: str) -> None:
    a = new_game(FOUR, variant=variant, circuits=["estenggaard"], seed=1234)
    b = new_game(FOUR, variant=variant, circuits=["estenggaard"], seed=1234)
    assert a.to_json() == b.to_json()
    option = a.options()[0]
    assert a.apply(option) == b.apply(option)
    assert a.to_json() == b.to_json()


def test_different_seeds_usually_differ() -> None:
    states = [new_game(SIX[:4], seed=seed).to_json() for seed in range(10)]
    distinct = {repr(s["state"]["titans"]) + repr(s["state"]["dice"]) for s in states}
    assert len(distinct) >= 9


# ---------------------------------------------------------------------- the first decision


@pytest.mark.parametrize(
    ("titans", "variant", "circuits"),
    [
        (SIX[:3], "standard", ["kaldheira"]),
        (SIX[:5], "standard", ["anglieh"]),
        (SIX, "standard", ["ban-kog"]),
        (FOUR, "two-player", ["moltenchest"]),
        (SIX[:4], "grand-slam", ["estenggaard", "dead-mans-lagoon", "kaldheira"]),
    ],
)
@pytest.mark.parametrize("seed", [0, 7, 31])
def test_the_first_decision_is_a_pick_from_one_die_per_titan(
    titans: list[str], variant: str, circuits: list[str], seed: int
) -> None:
    race = new_game(titans, variant=variant, circuits=circuits, seed=seed)
    pending = race.pending()
    assert pending is not None
    assert pending["kind"] == "pick"
    assert pending["titan"] == race.state.order[0]
    dice = race.view()["dice"]
    assert len(dice) == len(titans)
    assert all(colour in COLOURS for colour in dice)
    assert pending["options"] == [f"pick {c}" for c in COLOURS if c in dice]
    assert race.view()["first_round"] is True
