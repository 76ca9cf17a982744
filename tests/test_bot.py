"""The computer player (``app.games.titanrace.engine.bot.choose``): always legal, finishes games,
not foolish."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.titanrace.engine import BUILT_IN, Race, load_scenario, new_game
from app.games.titanrace.engine.bot import choose, model

PLAIN = {"name": "plain"}
FOUR = ["grinder", "craken", "slaugg", "rassik"]
LIMIT = 5000


def scenario_race(data: dict[str, Any]) -> Race:
    race, inputs = load_scenario(data)
    for text in inputs:
        race.apply(text)
    return race


def play_out(race: Race) -> int:
    """Let the bot play every seat to the end; check each choice; return the inputs made."""
    count = 0
    while not race.is_over:
        assert count < LIMIT, f"no winner after {LIMIT} inputs"
        options = race.options()
        before = race.to_json()
        option = choose(race)
        assert race.to_json() == before, "choose() changed the race"
        assert option in options, (option, options)
        race.apply(option)
        count += 1
    return count


GAMES = [
    *[("standard", [c], ["grinder", "craken", "slaugg"]) for c in BUILT_IN],
    *[("standard", [c], ["rassik", "ragnarok", "chtoolhoo", "craken", "slaugg"]) for c in BUILT_IN],
    *[("two-player", [c], ["chtoolhoo", "ragnarok", "grinder", "rassik"]) for c in BUILT_IN],
    *[("teams", [c], FOUR) for c in BUILT_IN],
    ("grand-slam", list(BUILT_IN[:3]), ["grinder", "rassik", "craken", "ragnarok"]),
    ("grand-slam", list(BUILT_IN[3:]), ["slaugg", "chtoolhoo", "grinder"]),
    ("grand-slam", ["estenggaard", "dead-mans-lagoon", "moltenchest"], FOUR),
]


@pytest.mark.parametrize(("variant", "circuits", "titans"), GAMES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bot_only_games_are_legal_and_finish(
    variant: str, circuits: list[str], titans: list[str], seed: int
) -> None:
    teams = [titans[0::2], titans[1::2]] if variant == "teams" else None
    race = new_game(titans, circuits=circuits, variant=variant, teams=teams, seed=seed)
    inputs = play_out(race)
    assert race.winner in titans
    assert race.winner in race.state.winners
    assert race.replay().to_json() == race.to_json()
    assert inputs == len(race.inputs)


def test_bot_only_six_titan_game_with_any_time_windows() -> None:
    race = new_game(
        ["grinder", "rassik", "craken", "ragnarok", "slaugg", "chtoolhoo"],
        circuits=["dead-mans-lagoon"],
        seed=8,
        anytime_windows=["craken", "slaugg"],
    )
    play_out(race)
    assert race.is_over


# ---------------------------------------------------------------------- sensible choices


def move_turn(die: str, circuit: dict[str, Any], life: int = 6) -> Race:
    """Slaugg on C3, inside his turn with ``die``; the other Titans are far away."""
    return scenario_race(
        {
            "circuit": circuit,
            "titans": [
                {"titan": "slaugg", "space": "C3", "life": life},
                {"titan": "craken", "space": "A11"},
                {"titan": "grinder", "space": "F12"},
            ],
            "turn": {"titan": "slaugg", "die": die},
        }
    )


@pytest.mark.parametrize(
    ("lava", "wanted"),
    [
        ("A5", "move RR"),  # LL: C3 B4 A5, onto the lava
        ("E5", "move LL"),  # RR: C3 D4 E5, onto the lava
    ],
)
def test_bot_avoids_landing_on_lava(lava: str, wanted: str) -> None:
    race = move_turn("green", {"name": "one-pool", "lava": [lava]})
    assert {"move LL", "move RR"} <= set(race.options())
    assert choose(race) == wanted
    race.apply(wanted)
    assert race.state.titans["slaugg"].life == 6


@pytest.mark.parametrize("life", [6, 2])
def test_bot_avoids_lava_among_brown_paths(life: int) -> None:
    # SL and LS end on B6, SR and RS on D6; all four are three rows long.
    race = move_turn("brown", {"name": "one-pool", "lava": ["B6"]}, life=life)
    assert choose(race) in ("move SR", "move RS")


def test_bot_prefers_the_bonus_to_the_lava() -> None:
    race = move_turn("green", {"name": "pools", "lava": ["A5"], "bonus": ["E5"]})
    assert choose(race) == "move RR"


def pick_round(dice: list[str]) -> Race:
    """Round 2 begins: Ragnarok (seat 0) has rolled ``dice``; no hazard anywhere."""
    return scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "ragnarok", "space": "C3"},
                {"titan": "craken", "space": "A11"},
                {"titan": "chtoolhoo", "space": "F12"},
            ],
            "rolls": [dice],
        }
    )


@pytest.mark.parametrize(
    ("dice", "wanted"),
    [
        (["red", "yellow", "red"], "pick yellow"),
        (["green", "yellow", "green"], "pick yellow"),
        (["blue", "red", "red"], "pick blue"),
        (["green", "blue", "green"], "pick blue"),
        (["red", "red", "brown"], "pick brown"),
    ],
)
def test_bot_picks_the_die_that_moves_farther(dice: list[str], wanted: str) -> None:
    race = pick_round(dice)
    pending = race.pending()
    assert pending is not None and pending["kind"] == "pick" and pending["titan"] == "ragnarok"
    assert choose(race) == wanted


def pirates_decision(life: int, hand: list[str], how: str) -> Race:
    """A pirate attack on Grinder (``life`` Life Points, ``hand``) as he enters C5.

    ``how``: ``own`` - his own red step; ``moved`` - Ragnarok's Ability moves him there in
    Ragnarok's turn (no Life Point lost for it); ``pushed`` - Craken's blue move pushes him
    there (the push costs him 1 Life Point as well). Grinder holds a card, so when another
    player's Ability or push reaches him his window comes first: he passes it.
    """
    grinder = {"titan": "grinder", "space": "C3", "life": life, "hand": hand}
    far = {"titan": "rassik", "space": "F12"}
    if how == "own":
        titans = [grinder, {"titan": "craken", "space": "A11"}, far]
        turn, inputs = {"titan": "grinder", "die": "red"}, ["move S"]
    elif how == "moved":
        titans = [{"titan": "ragnarok", "space": "D2"}, grinder, far]
        turn, inputs = {"titan": "ragnarok", "die": "red"}, ["ability C3 S"]
    else:
        titans = [{"titan": "craken", "space": "C1"}, grinder, far]
        turn, inputs = {"titan": "craken", "die": "blue"}, ["move SS"]
    race = scenario_race(
        {
            "circuit": {"name": "cove", "pirates": ["C5"]},
            "titans": titans,
            "deck": [],
            "turn": turn,
            "inputs": inputs,
        }
    )
    pending = race.pending()
    while pending is not None and pending["kind"] == "react":
        race.apply("pass")
        pending = race.pending()
    assert pending is not None
    assert pending["kind"] == "pirates" and pending["titan"] == "grinder"
    return race


@pytest.mark.parametrize(("how", "life"), [("own", 1), ("moved", 1), ("pushed", 2)])
@pytest.mark.parametrize("hand", [["leap"], ["leap", "fireball"]])
def test_bot_discards_to_pirates_rather_than_lose_its_last_life_point(
    how: str, life: int, hand: list[str]
) -> None:
    race = pirates_decision(life, hand, how)
    assert "lose" in race.options()
    option = choose(race)
    assert option.startswith("discard ")
    assert option.split()[1] in hand
    race.apply(option)
    grinder = race.state.titans["grinder"]
    assert grinder.life == 1 and not grinder.ko
    assert len(grinder.hand) == len(hand) - 1


def test_bot_keeps_its_card_when_the_ko_cannot_be_avoided() -> None:
    # With 1 Life Point, the push alone knocks Grinder out: discarding would save nothing.
    race = pirates_decision(1, ["leap"], "pushed")
    assert choose(race) == "lose"


def test_bot_answers_a_reaction_window_legally() -> None:
    race = scenario_race(
        {
            "circuit": PLAIN,
            "titans": [
                {"titan": "grinder", "space": "D6"},
                {"titan": "craken", "space": "D8", "hand": ["repulse"]},
                {"titan": "rassik", "space": "A3"},
            ],
            "turn": {"titan": "grinder", "die": "blue"},
            "inputs": ["move SS"],
        }
    )
    assert race.pending()["kind"] == "react"
    assert choose(race) in race.options()


def test_bot_with_a_single_option_takes_it() -> None:
    race = move_turn("blue", PLAIN)
    assert race.options() == ["move SS"]
    assert choose(race) == "move SS"


# ---------------------------------------------------------------------- what it cannot see


def ragnarok_beside_craken(hand: list[str], deck: list[str], version: int) -> Race:
    """Ragnarok has moved next to Craken (C9, lava behind him at C11) and may push him with his
    Ability; Craken holds ``hand``, the deck is ``deck``."""
    return scenario_race(
        {
            "version": version,
            "circuit": {"name": "plain", "lava": ["C11"]},
            "titans": [
                {"titan": "ragnarok", "space": "C3"},
                {"titan": "craken", "space": "C9", "hand": hand},
                {"titan": "rassik", "space": "A3"},
            ],
            "deck": deck,
            "turn": {"titan": "ragnarok", "die": "blue"},
            "inputs": ["move SS"],
        }
    )


@pytest.mark.parametrize("version", [1, 2])
def test_bot_answers_alike_whatever_card_the_opponent_hides(version: int) -> None:
    """Issue 36's twins: Craken holds a Dispel or a Leap (the other in the deck), which Ragnarok's
    player cannot tell apart. Under the first rules only the Dispel opened a window, so the
    one-step model reading the true state answered the twins differently; the easy player looks
    ahead in a world dealt from its seat's view, and answers both alike."""
    dispel = ragnarok_beside_craken(["dispel"], ["leap", "quake"], version)
    leap = ragnarok_beside_craken(["leap"], ["dispel", "quake"], version)
    assert dispel.view(seat=0) == leap.view(seat=0)
    if version == 1:
        assert model(dispel.state, dispel.options()) != model(leap.state, leap.options())
    assert choose(dispel) == choose(leap)
    assert choose(dispel).startswith("ability C9")
