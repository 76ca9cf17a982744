"""State views (ENGINE-INTERFACE "State view"), persistence, replay and refused inputs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.games.titanrace.engine import (
    BUILT_IN,
    CARDS,
    COLOURS,
    TITANS,
    GameOverError,
    IllegalInputError,
    InputError,
    InvalidInputError,
    Race,
    load_scenario,
    new_game,
)
from app.games.titanrace.engine.bot import choose
from app.games.titanrace.engine.geometry import ALL_SPACES

PLAIN = {"name": "plain"}
TITAN_KEYS = {
    "seat": int,
    "space": (str, type(None)),
    "lap": int,
    "life": int,
    "ko": bool,
    "ko_passed": bool,
    "ability_used": bool,
}
TOP_KEYS = {
    "round": int,
    "first_round": bool,
    "titans": dict,
    "traps": list,
    "trap_supply": int,
    "dice": list,
    "pending": (dict, type(None)),
    "winner": (str, type(None)),
    "winners": list,
}


def scenario_race(data: dict[str, Any]) -> Race:
    """The race a scenario describes, with its inputs applied one by one."""
    race, inputs = load_scenario(data)
    for text in inputs:
        race.apply(text)
    return race


def check_full_view(view: dict[str, Any], race: Race) -> None:
    """Every key of the interface's state view, with the right types and full hands."""
    for key, kind in TOP_KEYS.items():
        assert key in view, key
        assert isinstance(view[key], kind), (key, view[key])
    assert not isinstance(view["round"], bool) and view["round"] >= 1
    assert view["first_round"] == (view["round"] <= 1)
    assert set(view["titans"]) == set(race.state.titans)
    for name, entry in view["titans"].items():
        assert name in TITANS
        for key, kind in TITAN_KEYS.items():
            assert key in entry, (name, key)
            assert isinstance(entry[key], kind), (name, key, entry[key])
        assert isinstance(entry["hand"], list), "the full view shows every hand"
        assert all(card in CARDS for card in entry["hand"])
        assert 0 <= entry["life"] <= 6
        if entry["space"] is not None:
            assert entry["space"] in ALL_SPACES
    assert all(isinstance(trap, str) for trap in view["traps"])
    assert view["trap_supply"] + len(view["traps"]) == 15
    assert all(colour in COLOURS for colour in view["dice"])
    assert all(isinstance(name, str) for name in view["winners"])
    pending = view["pending"]
    if pending is None:
        assert view["winner"] in view["winners"]
        assert race.is_over
    else:
        assert pending["kind"] in ("pick", "start", "turn", "react", "pirates")
        assert pending["titan"] in view["titans"]
        assert isinstance(pending["options"], list) and pending["options"]
        assert all(isinstance(o, str) for o in pending["options"])
        assert pending["options"] == race.options()
        assert view["winner"] is None and view["winners"] == []


def bot_game(race: Race, limit: int = 5000) -> list[Race]:
    """Play ``race`` to the end with the bot; return a copy taken before every input."""
    seen = []
    while not race.is_over:
        assert len(seen) < limit, "the game does not end"
        seen.append(race.copy())
        race.apply(choose(race))
    return seen


# ---------------------------------------------------------------------- full view


@pytest.mark.parametrize(
    ("variant", "titans", "circuits", "teams"),
    [
        ("standard", ["grinder", "craken", "slaugg"], ["kaldheira"], None),
        ("standard", list(TITANS), ["dead-mans-lagoon"], None),
        ("two-player", ["grinder", "craken", "slaugg", "rassik"], ["anglieh"], None),
        (
            "teams",
            ["grinder", "craken", "slaugg", "rassik"],
            ["ban-kog"],
            [["grinder", "slaugg"], ["craken", "rassik"]],
        ),
        ("grand-slam", ["chtoolhoo", "ragnarok", "rassik"], list(BUILT_IN[3:]), None),
    ],
)
def test_full_view_has_every_key_with_the_right_types(
    variant: str, titans: list[str], circuits: list[str], teams: list[list[str]] | None
) -> None:
    race = new_game(titans, circuits=circuits, variant=variant, teams=teams, seed=11)
    view = race.view()
    check_full_view(view, race)
    assert view["round"] == 1 and view["first_round"] is True
    assert view["traps"] == [] and view["trap_supply"] == 15
    assert len(view["dice"]) == len(titans)
    for entry in view["titans"].values():
        assert entry["space"] is None and entry["lap"] == 1
        assert entry["ko"] is False and entry["ko_passed"] is False
        assert entry["ability_used"] is False
        assert len(entry["hand"]) == 1
    # the view is JSON and is the same after a trip through text
    assert json.loads(json.dumps(view)) == view
    # ... and keeps its shape through a whole game
    for before in bot_game(race)[::25]:
        check_full_view(before.view(), before)
    check_full_view(race.view(), race)
    assert race.view()["winner"] == race.winner


def test_full_view_from_a_scenario() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "grinder", "space": "C3", "hand": ["leap", "blink"]},
                {"titan": "craken", "space": "A9", "life": 2, "hand": ["quake"]},
                {"titan": "chtoolhoo", "space": "E11", "ko": True},
            ],
            "traps": ["F4"],
            "round": 5,
            "turn": {"titan": "grinder", "die": "red"},
            "inputs": ["move S", "trap B4"],
        }
    )
    view = race.view()
    check_full_view(view, race)
    assert view["round"] == 5 and view["first_round"] is False
    assert sorted(view["traps"]) == ["B4", "F4"]
    assert view["trap_supply"] == 13
    grinder = view["titans"]["grinder"]
    assert grinder == {
        **grinder,
        "seat": 0,
        "space": "C5",
        "lap": 1,
        "life": 6,
        "ko": False,
        "hand": ["leap", "blink"],
    }
    assert view["titans"]["craken"]["life"] == 2
    assert view["titans"]["chtoolhoo"]["ko"] is True
    assert view["titans"]["chtoolhoo"]["life"] == 0
    assert view["pending"]["kind"] == "turn"
    assert view["pending"]["titan"] == "grinder"
    assert "end" in view["pending"]["options"]


def test_full_view_after_the_end() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "craken", "space": "C11", "lap": 3},
                {"titan": "grinder", "space": "A1"},
                {"titan": "slaugg", "space": "E1"},
            ],
            "turn": {"titan": "craken", "die": "blue"},
            "inputs": ["move SS"],
        }
    )
    view = race.view()
    check_full_view(view, race)
    assert view["pending"] is None
    assert view["winner"] == "craken"
    assert view["winners"] == ["craken"]
    assert view["titans"]["craken"]["lap"] == 4


# ---------------------------------------------------------------------- a seat's view


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_seat_view_hides_other_hands_and_options(seed: int) -> None:
    race = new_game(["grinder", "craken", "slaugg", "chtoolhoo"], seed=seed)
    full = race.view()
    pending_seat = race.seat_to_act()
    for seat in range(4):
        view = race.view(seat=seat)
        for name, entry in view["titans"].items():
            hand = full["titans"][name]["hand"]
            if entry["seat"] == seat:
                assert entry["hand"] == hand
            else:
                assert type(entry["hand"]) is int and entry["hand"] == len(hand)
        assert view["pending"]["titan"] == full["pending"]["titan"]
        assert view["pending"]["kind"] == full["pending"]["kind"]
        if seat == pending_seat:
            assert view["pending"]["options"] == race.options()
        else:
            assert "options" not in view["pending"]
        # everything else is the same as in the full view
        rest = {k: v for k, v in view.items() if k not in ("titans", "pending")}
        assert rest == {k: v for k, v in full.items() if k not in ("titans", "pending")}


def test_two_player_seat_sees_both_its_titans_hands() -> None:
    race = new_game(
        ["grinder", "craken", "slaugg", "rassik"], circuits=["kaldheira"], variant="two-player"
    )
    for seat, mine in ((0, {"grinder", "slaugg"}), (1, {"craken", "rassik"})):
        view = race.view(seat=seat)
        for name, entry in view["titans"].items():
            assert entry["seat"] == (0 if name in ("grinder", "slaugg") else 1)
            assert isinstance(entry["hand"], list) == (name in mine), name
        owner = race.state.titans[race.pending()["titan"]].seat
        assert ("options" in view["pending"]) == (owner == seat)


def react_window() -> Race:
    """Grinder's blue move pushes Craken, who holds Repulse: Craken's owner must react."""
    return scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "grinder", "space": "D6", "hand": ["leap"]},
                {"titan": "craken", "space": "D8", "hand": ["repulse", "healing-potion"]},
                {"titan": "rassik", "space": "A3", "hand": ["fireball"]},
            ],
            "deck": ["blink"],
            "turn": {"titan": "grinder", "die": "blue"},
            "inputs": ["move SS"],
        }
    )


def test_seat_view_of_a_reaction_window_belongs_to_the_reacting_seat() -> None:
    race = react_window()
    pending = race.pending()
    assert pending is not None and pending["kind"] == "react" and pending["titan"] == "craken"
    check_full_view(race.view(), race)
    craken_view = race.view(seat=1)
    assert craken_view["pending"]["options"] == race.options()
    assert "play repulse" in craken_view["pending"]["options"]
    assert craken_view["titans"]["craken"]["hand"] == ["repulse", "healing-potion"]
    assert craken_view["titans"]["grinder"]["hand"] == 1
    for seat in (0, 2):
        view = race.view(seat=seat)
        assert view["pending"]["titan"] == "craken"
        assert "options" not in view["pending"], f"seat {seat} sees craken's options"
        assert view["titans"]["craken"]["hand"] == 2


# ---------------------------------------------------------------------- a spectator's view


@pytest.mark.parametrize("make", ["new", "react"])
def test_spectator_view_shows_no_hand_and_no_options(make: str) -> None:
    race = react_window() if make == "react" else new_game(["grinder", "craken", "slaugg"])
    full = race.view()
    view = race.view(spectator=True)
    for name, entry in view["titans"].items():
        assert type(entry["hand"]) is int
        assert entry["hand"] == len(full["titans"][name]["hand"])
    assert view["pending"] is not None
    assert "options" not in view["pending"]
    assert view["pending"]["titan"] == full["pending"]["titan"]
    # a seat argument does not let a spectator see more
    assert race.view(seat=race.seat_to_act(), spectator=True) == view


def test_views_do_not_change_the_race() -> None:
    race = react_window()
    before = race.to_json()
    race.view()
    race.view(seat=0)
    race.view(seat=1)
    race.view(spectator=True)
    assert race.to_json() == before


# ---------------------------------------------------------------------- Grand Slam


def test_grand_slam_traps_and_boards() -> None:
    race = scenario_race(
        {
            "circuit": [PLAIN, {"name": "plain-2"}, {"name": "plain-3"}],
            "titans": [
                {"titan": "grinder", "space": "D6", "lap": 2},
                {"titan": "craken", "space": "A5"},
                {"titan": "rassik", "space": "B10", "lap": 3},
                {"titan": "slaugg", "space": "C1", "lap": 0},
            ],
            "traps": ["0:F2", "2:C3", "1:a1", "E1"],
            "turn": {"titan": "grinder", "die": "red"},
            "inputs": ["trap D4"],
        }
    )
    view = race.view()
    check_full_view(view, race)
    assert view["variant"] == "grand-slam"
    assert sorted(view["traps"]) == ["0:E1", "0:F2", "1:A1", "1:D4", "2:C3"]
    assert all(trap[0] in "012" and trap[1] == ":" for trap in view["traps"])
    titans = view["titans"]
    assert (titans["grinder"]["lap"], titans["grinder"]["board"]) == (2, 1)
    assert (titans["craken"]["lap"], titans["craken"]["board"]) == (1, 0)
    assert (titans["rassik"]["lap"], titans["rassik"]["board"]) == (3, 2)
    assert (titans["slaugg"]["lap"], titans["slaugg"]["board"]) == (0, 2)


def test_grand_slam_trap_on_a_later_board_after_a_move() -> None:
    race = scenario_race(
        {
            "circuit": ["kaldheira", "moltenchest", "ban-kog"],
            "titans": [
                {"titan": "grinder", "space": "C11"},
                {"titan": "craken", "space": "A5"},
                {"titan": "rassik", "space": "B10"},
            ],
            "turn": {"titan": "grinder", "die": "red"},
            "inputs": ["move S", "trap C11"],
        }
    )
    view = race.view()
    assert view["titans"]["grinder"]["space"] == "C1"
    assert view["titans"]["grinder"]["lap"] == 2
    assert view["titans"]["grinder"]["board"] == 1
    assert view["traps"] == ["0:C11"]


def test_normal_game_has_no_board_numbers() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [{"titan": "grinder", "space": "D6", "lap": 2}, {"titan": "craken"}],
            "traps": ["B2"],
        }
    )
    view = race.view()
    assert view["traps"] == ["B2"]
    assert "board" not in view["titans"]["grinder"]


# ---------------------------------------------------------------------- persistence


def through_text(race: Race) -> Race:
    return Race.from_json(json.loads(json.dumps(race.to_json())))


def check_restores(race: Race) -> None:
    restored = through_text(race)
    assert restored.to_json() == race.to_json()
    assert restored.view() == race.view()
    assert restored.options() == race.options()
    assert restored.pending() == race.pending()
    for option in race.options():
        a, b = race.copy(), through_text(race)
        assert a.apply(option) == b.apply(option)
        assert a.to_json() == b.to_json(), option


@pytest.mark.parametrize(
    ("variant", "circuits"),
    [
        ("standard", ["kaldheira"]),
        ("standard", ["dead-mans-lagoon"]),
        ("two-player", ["anglieh"]),
        ("grand-slam", ["moltenchest", "estenggaard", "ban-kog"]),
    ],
)
def test_to_json_from_json_is_identical_and_accepts_the_same_options(
    variant: str, circuits: list[str]
) -> None:
    titans = ["grinder", "craken", "slaugg", "chtoolhoo"]
    race = new_game(titans, circuits=circuits, variant=variant, seed=21)
    check_restores(race)
    for before in bot_game(race)[::40]:
        check_restores(before)


@pytest.mark.parametrize("window", ["react", "pirates"])
def test_a_suspended_decision_survives_json(window: str) -> None:
    if window == "react":
        race = react_window()
    else:
        race = scenario_race(
            {
                "circuit": "dead-mans-lagoon",
                "titans": [
                    {"titan": "grinder", "space": "C5"},
                    {"titan": "craken", "space": "C7", "hand": ["leap"]},
                    {"titan": "rassik", "space": "E11"},
                ],
                "deck": ["fireball"],
                "turn": {"titan": "grinder", "die": "red"},
                "inputs": ["move S", "pass"],  # (Craken holds a card: the push asks first)
            }
        )
    assert race.pending()["kind"] == window
    check_restores(race)
    assert through_text(race).replay().to_json() == race.to_json()


def test_replay_equals_the_race() -> None:
    race = new_game(["rassik", "ragnarok", "slaugg", "chtoolhoo"], circuits=["anglieh"], seed=4)
    copies = bot_game(race)
    assert race.replay().to_json() == race.to_json()
    assert through_text(race).replay().to_json() == race.to_json()
    for upto in (0, 1, len(race.inputs) // 2):
        assert race.replay(upto).to_json() == copies[upto].to_json()


def test_replay_of_a_scenario_race() -> None:
    race = react_window()
    race.apply("pass")
    assert race.replay().to_json() == race.to_json()
    assert race.replay().view() == race.view()


def test_apply_records_the_normalised_inputs() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [{"titan": "grinder", "space": "C3"}, {"titan": "craken", "space": "A9"}],
            "turn": {"titan": "grinder", "die": "red"},
        }
    )
    race.apply("MOVE s ;  trap b4")
    assert race.inputs == ["move S", "trap B4"]
    assert race.replay().to_json() == race.to_json()


# ---------------------------------------------------------------------- refused inputs


def red_turn() -> Race:
    return scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "grinder", "space": "C3", "hand": ["leap"]},
                {"titan": "craken", "space": "A9"},
                {"titan": "slaugg", "space": "E11"},
            ],
            "turn": {"titan": "grinder", "die": "red"},
        }
    )


def refuse(race: Race, text: str, error: type[InputError], index: int) -> InputError:
    """Apply ``text``, expecting ``error`` at ``index`` with nothing changed."""
    before = race.to_json()
    options = race.options()
    view = race.view()
    with pytest.raises(error) as info:
        race.apply(text)
    exc = info.value
    assert type(exc) is error
    assert isinstance(exc, ValueError)
    assert exc.index == index
    assert isinstance(exc.legal, list)
    assert str(exc)
    assert race.to_json() == before, "a refused input changed the race"
    assert race.options() == options
    assert race.view() == view
    return exc


@pytest.mark.parametrize("text", ["fly C5", "", "   ", "jump", ";"])
def test_garbage_is_invalid(text: str) -> None:
    race = red_turn()
    exc = refuse(race, text, InvalidInputError, 0)
    assert exc.legal == race.options()


def test_legal_looking_input_is_illegal() -> None:
    race = red_turn()
    for text in ("move SS", "move LLL", "pick red", "trap C7", "end", "reroll", "lose"):
        exc = refuse(race, text, IllegalInputError, 0)
        assert exc.legal == race.options()
        assert "move S" in exc.legal


def test_refused_later_part_names_its_index_and_applies_nothing() -> None:
    race = red_turn()
    after_move = race.copy()
    after_move.apply("move S")
    exc = refuse(race, "move S; trap C7", IllegalInputError, 1)
    assert exc.legal == after_move.options()
    exc = refuse(race, "move S;trap B4;flap", InvalidInputError, 2)
    assert "end" in exc.legal
    assert race.inputs == []


def test_refused_inputs_in_a_window() -> None:
    race = react_window()
    legal = race.options()
    assert refuse(race, "move SS", IllegalInputError, 0).legal == legal
    assert refuse(race, "play leap", IllegalInputError, 0).legal == legal
    assert refuse(race, "hop", InvalidInputError, 0).legal == legal
    assert refuse(race, "pass;hop", InvalidInputError, 1).legal


def test_nothing_is_accepted_after_the_end() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "craken", "space": "C11", "lap": 3},
                {"titan": "grinder", "space": "A1"},
                {"titan": "slaugg", "space": "E1"},
            ],
            "turn": {"titan": "craken", "die": "blue"},
        }
    )
    # the winning move followed by another input: refused as a whole, at index 1
    exc = refuse(race, "move SS;end", GameOverError, 1)
    assert exc.legal == []
    assert isinstance(exc, IllegalInputError)
    race.apply("move SS")
    assert race.is_over and race.winner == "craken"
    for text in ("end", "pick red", "move SS", "nonsense"):
        exc = refuse(race, text, GameOverError, 0)
        assert exc.legal == []
    assert race.options() == []
    assert race.pending() is None


def test_every_listed_option_is_accepted() -> None:
    race = red_turn()
    for option in race.options():
        race.copy().apply(option)
