"""Which inputs of The Great Race met chance or hidden information (docs/great-race-engine.md):
the ruleset's ``unseen`` changes across each of them, so that a submission of several inputs
knows where the rest stopped being its sender's to foresee (``scout; place <tile> <space>``
met chance at the scout), and ``reveals_hidden`` says so from the states before and after, so
that no takeback lets its player choose again knowing what came out. Inputs whose result all
players could foresee change neither."""

from __future__ import annotations

from typing import Any

import pytest

from app.games.base import CHANCE, MoveRejected
from app.games.greatrace.engine import GreatRace
from app.games.greatrace.engine.scenario import load_scenario
from app.games.greatrace.ruleset import GreatRaceRuleset

RULES = GreatRaceRuleset()
IDLE = {"crew": "belgian", "assistants": {"P": 1}}
"""A second crew that still plays, so that the first crew's actions hand it the convoy."""


def race(*inputs: str, version: int | None = None, **spec: Any) -> GreatRace:
    data: dict[str, Any] = {"game": "great-race", "phase": "convoy",
                            "crews": [{"crew": "french", "assistants": {"P": 1}}, IDLE], **spec}
    game, _ = load_scenario(data)
    if version is not None:
        game.state.version = version
    for text in inputs:
        RULES.apply(game, text)
    return game


def met(game: GreatRace, text: str) -> tuple[bool, bool]:
    """Whether ``text`` met chance or hidden information, as ``unseen`` and as
    ``reveals_hidden`` tell (``game`` is left as it was)."""
    after = game.copy()
    RULES.apply(after, text)
    return RULES.unseen(after) != RULES.unseen(game), RULES.reveals_hidden(game, after)


def french(**fields: Any) -> dict[str, Any]:
    return {"crew": "french", **fields}


TILES = {"E2": "p1", "E3": "p1"}


def positions() -> dict[str, tuple[GreatRace, str]]:
    """Each input that met chance or hidden information, in a position it is played in."""
    leaders = {"leaders": True}
    return {
        "a pathfinder scouting": (race(), "scout"),
        "a pathfinder drawing a card": (race(), "draw"),
        "a Cartographer": (race(crews=[french(hand=["cartographer"], assistants={"P": 1}),
                                        IDLE]), "play cartographer"),
        "a Topographer": (race(crews=[french(hand=["topographer"], assistants={"P": 1}), IDLE],
                               **leaders), "play topographer"),
        "the French leader": (race(**leaders), "leader"),
        "a Tracker": (race(crews=[french(hand=["tracker"], assistants={"P": 1}), IDLE]),
                      "play tracker"),
        "a drive into a blank space": (race("drive", crews=[french(assistants={"M": 1}),
                                                            IDLE]), "go E2"),
        "a drive into a city that deals cards": (
            race("drive", tiles=TILES, crews=[french(space="E2", assistants={"M": 1}), IDLE]),
            "go F3"),
        "the last plan (the reveal)": (
            race("plan french F5", phase="planning",
                 crews=[french(), {"crew": "belgian"}]), "plan belgian F5"),
        "the last assistant of the turn (the next market dealt)": (
            race(crews=[french(assistants={"F": 1}), {"crew": "belgian"}]), "fund"),
        "a Saboteur passing over a target without a Militia, under version 2's rules": (
            race(version=2, crews=[french(hand=["saboteur"], assistants={"P": 1}),
                                   {"crew": "belgian", "hand": ["guide"],
                                    "assistants": {"P": 1}}]), "play saboteur belgian"),
        "a sequence handing on to a crew passed over by its cards, under version 2's rules": (
            race(version=2, crews=[french(assistants={"F": 1, "P": 1}),
                                   {"crew": "belgian", "hand": ["militia"],
                                    "assistants": {"S": 1}}]), "fund"),
    }


def foreseen() -> dict[str, tuple[GreatRace, str]]:
    """Inputs whose result every player could foresee, each in a position."""
    spy = french(hand=["saboteur", "financial"], assistants={"P": 1, "S": 1, "F": 1})
    return {
        "funding": (race(crews=[french(assistants={"F": 1}), IDLE]), "fund"),
        "buying petrol": (race(crews=[french(petrol=5, assistants={"P": 1}), IDLE]), "buy 1"),
        "a Financial": (race(crews=[spy, IDLE]), "play financial"),
        "a guard discarding a tile": (race(tiles=TILES, crews=[spy, IDLE]), "guard E2"),
        "a drive begun": (race(crews=[french(assistants={"M": 1}), IDLE]), "drive"),
        "a drive onto a tile": (race("drive", tiles=TILES,
                                     crews=[french(assistants={"M": 1}), IDLE]), "go E2"),
        "a drive stopped": (race("drive", "go E2", tiles=TILES,
                                 crews=[french(assistants={"M": 1}), IDLE]), "stop"),
        "a pathfinder scouting an empty bag": (race(bag=[]), "scout"),
        "a drive into a blank space with an empty bag": (
            race("drive", bag=[], crews=[french(assistants={"M": 1}), IDLE]), "go E2"),
        "a drawn tile placed": (race("scout", bag=["p1", "p2", "p3"]), "place p1 E2"),
        "a Saboteur on a crew with no card and no security": (
            race(crews=[spy, {"crew": "belgian", "assistants": {"P": 1}}]),
            "play saboteur belgian"),
        "a Saboteur on a crew holding cards (it is asked)": (
            race(crews=[spy, {"crew": "belgian", "hand": ["guide"], "assistants": {"P": 1}}]),
            "play saboteur belgian"),
        "a sequence handing on to a crew holding cards (it is asked)": (
            race(crews=[french(assistants={"F": 1, "P": 1}),
                        {"crew": "belgian", "hand": ["militia"], "assistants": {"S": 1}}]),
            "fund"),
        "a card taken from the market": (
            race(phase="bivouac", market=["guide", "militia", "driver"],
                 crews=[french(), {"crew": "belgian"}]), "take guide"),
    }


@pytest.mark.parametrize("name", list(positions()))
def test_inputs_that_met_chance_or_hidden_information(name: str) -> None:
    game, text = positions()[name]
    assert met(game, text)[0], f"unseen missed {text}"
    if "version 2" not in name:  # (a look at a hand, which the states do not keep)
        assert met(game, text)[1], f"reveals_hidden missed {text}"


@pytest.mark.parametrize("name", list(foreseen()))
def test_inputs_everyone_could_foresee(name: str) -> None:
    game, text = foreseen()[name]
    assert met(game, text) == (False, False)


def test_another_crews_answer_from_its_hidden_cards_reveals_them() -> None:
    """The target answers the Saboteur from the cards it holds: a takeback of the Saboteur
    after that answer would let its player choose again knowing it; the player's own answers
    from its own cards reveal nothing to it."""
    spy = french(hand=["saboteur", "financial"], assistants={"P": 1, "F": 1})
    before = race(crews=[spy, {"crew": "belgian", "hand": ["guide"], "assistants": {"P": 1}}])
    played = before.copy()
    RULES.apply(played, "play saboteur belgian")
    assert not RULES.reveals_hidden(before, played)
    answered = played.copy()
    RULES.apply(answered, "take")
    assert RULES.reveals_hidden(before, answered)
    assert not RULES.reveals_hidden(played, answered)  # (the target's own answer, to it)
    own = answered.copy()
    RULES.apply(own, "damage E2")
    RULES.apply(own, "play financial")
    assert not RULES.reveals_hidden(answered, own)
    # under version 2's rules a card gone from another crew's hand says so
    old = race(version=2, crews=[spy, {"crew": "belgian", "hand": ["militia"],
                                       "assistants": {"P": 1}}])
    avoided = old.copy()
    RULES.apply(avoided, "play saboteur belgian")
    RULES.apply(avoided, "play militia")
    assert RULES.reveals_hidden(old, avoided)


def chance_at(game: GreatRace, text: str) -> int | None:
    """The index of the first input of ``text`` that a submission by the crew owing the
    decision finds met chance (None: none did)."""
    try:
        produced, stop = RULES.apply_chain(game.copy(), text, RULES.to_act(game)[0])
    except MoveRejected:
        return None
    return len(produced) - 1 if stop is not None and stop.reason == CHANCE else None


def test_a_submission_knows_where_chance_came_in() -> None:
    game = race(bag=["p1", "p2", "p3"])
    assert chance_at(game, "scout; place p1 E2; place p2 E1") == 0
    drive = race(tiles={"E2": "p1"}, crews=[french(assistants={"M": 1}), IDLE])
    assert chance_at(drive, "drive; go E2; go E3; stop") == 2
    assert chance_at(drive, "drive; go E2; stop") is None
    crews = [french(hand=["saboteur"], assistants={"P": 1}),
             {"crew": "belgian", "hand": ["guide"], "assistants": {"P": 1}}]
    assert chance_at(race(version=2, crews=crews), "play saboteur belgian; damage E1 C1") == 0
    bare = [crews[0], {"crew": "belgian", "assistants": {"P": 1}}]
    assert chance_at(race(crews=bare), "play saboteur belgian; damage E1 C1; draw") is None
