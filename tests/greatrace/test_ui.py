"""The Great Race's GameUI: every option of many positions is worded in English and Polish."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.games.greatrace.engine.bot import choose
from app.games.greatrace.engine.game import GreatRace
from app.games.greatrace.ui import mail_kind_of
from app.games.ui import game_ui

UI = game_ui("great-race")


def positions(seed: int, crews: list[str], *, leaders: bool, bot: bool,
              limit: int = 900) -> list[tuple[dict[str, Any], list[str]]]:
    """(full view, options of the deciding crew) along a game played by the computer or at
    random."""
    game = GreatRace.new(crews, start="le-cap" if seed % 2 else "alger", leaders=leaders,
                         seed=seed)
    pick = random.Random(seed)
    found = []
    for _ in range(limit):
        pending = game.pending()
        if pending is None:
            break
        options = game.options(pending["crew"])
        found.append((game.view(), options))
        game.apply(choose(game, None) if bot else pick.choice(options))
    return found


GAMES = [(seed, crews, leaders, bot)
         for seed, crews in enumerate([["french", "belgian"], ["italian", "english", "french"],
                                       ["belgian", "english", "italian", "french"]])
         for leaders in (False, True) for bot in (False, True)]


@pytest.mark.parametrize(("seed", "crews", "leaders", "bot"), GAMES)
def test_every_option_is_worded_in_both_languages(seed: int, crews: list[str], leaders: bool,
                                                  bot: bool) -> None:
    kinds: dict[str, set[str]] = {}
    for view, options in positions(seed, crews, leaders=leaders, bot=bot):
        pending = view["pending"]
        assert UI.decision_heading(pending, "pl") != UI.decision_heading(pending, "en")
        assert UI.describe_decision(pending, "pl") != UI.describe_decision(pending, "en")
        for option in options:
            english = UI.describe_option(option, view, "en")
            polish = UI.describe_option(option, view, "pl")
            assert english != option, option
            assert polish != option, option
            assert polish != english, (option, english)
            assert "{" not in english + polish
            kinds.setdefault(pending["kind"], set()).add(option.split()[0])
    assert {"take", "plan", "turn", "drive"} <= set(kinds)


def test_the_briefs_examples() -> None:
    view = {"pending": {"kind": "turn", "crew": "french"},
            "crews": {"french": {"space": "E3", "city": None, "engine": 4,
                                 "assistants": {"P": 1, "M": 2, "S": 0, "F": 2}}},
            "tiles": {"E2": "p2d1"}}
    assert UI.describe_option("take guide", None, "en") == "Take the Guide"
    assert UI.describe_option("plan french P1 M2 F2", None, "en") == (
        "Plan: 1 pathfinder, 2 mechanics, 2 funding")
    assert UI.describe_option("plan french P1 M2 F2", None, "pl") == (
        "Plan: zwiadowcy: 1, mechanicy: 2, finanse: 2")
    assert UI.describe_option("go E2", view, "en") == "Drive to E2 (tile: 2 petrol, 1 damage)"
    assert UI.describe_option("buy 2", view, "en") == "Buy 2 petrol for 40F"
    assert UI.describe_option("fund", view, "en") == "Funding: receive 20F"
    assert UI.describe_option("damage E1 C1", view, "en") == "Damage: engine -1, chassis -1"
    assert UI.describe_option("play saboteur belgian", view, "pl") == (
        "Zagraj kartę Sabotażysta, cel: Ekipa belgijska")
    assert UI.piece_name("french", "pl") == "Ekipa francuska"
    assert UI.card_info("jerrycan", "en") == {"slug": "jerrycan", "name": "Jerrycan",
                                              "effect": "+1 petrol.", "timing": "any time"}


def test_a_risk_zone_adds_a_petrol_and_a_line_is_a_line() -> None:
    view = {"pending": {"kind": "drive", "crew": "english"},
            "crews": {"english": {"space": "F1", "city": "alger"}},
            "tiles": {"G3": "p1x"}}
    assert UI.describe_option("go G3", view, "en") == "Drive to G3 (tile: 2 petrol, DANGER)"
    assert UI.describe_option("go A4", view, "en") == (
        "Take the sea line to Dakar (A4) (100F, 1 petrol)")
    assert UI.describe_option("go E1", view, "en") == (
        "Drive to E1 (unknown ground: a tile is drawn)")
    assert UI.highlight("go dakar", view, None, ["alger"]) == ["A4"]


def test_outcomes_changes_and_waiting() -> None:
    assert UI.outcome_words("tile p2d1", "en") == ("tile drawn: 2 petrol, 1 damage", [])
    assert UI.outcome_words("card", "pl") == ("dobrano kartę", [])
    assert UI.outcome_words("deal guide", "en") == ("dealt to the market: Guide", [])
    assert UI.outcome_words("shuffle", "en")[0] == "the deck was shuffled"
    before = {"crews": {"french": {"space": "F1", "money": 80, "petrol": 10}}, "tiles": {}}
    after = {"crews": {"french": {"space": "E2", "money": 80, "petrol": 8}},
             "tiles": {"E2": "p2"}}
    words, marks = UI.changes(before, after, ["alger"], "en")
    assert words == ["French crew to E2", "French crew: petrol 10 → 8", "tile on E2: 2 petrol"]
    assert marks == ["E2"]
    assert UI.waiting_for({"kind": "plan"}, ["Ann", "Bob"], "en") == (
        "Waiting for Ann, Bob to plan their assistants.")
    assert UI.waiting_for(None, [], "en") is None


def test_mail_kinds() -> None:
    assert mail_kind_of({"kind": "take", "crew": "french"}) == "take"
    assert mail_kind_of({"kind": "plan", "crew": "french"}) == "plan"
    assert mail_kind_of({"kind": "drive", "crew": "french", "active": "french"}) == "turn"
    assert mail_kind_of({"kind": "avoid", "crew": "belgian", "active": "french"}) == "react"
    assert mail_kind_of({"kind": "avoid", "crew": "french", "active": "french"}) == "turn"
    assert mail_kind_of({"kind": "discard", "crew": "french"}) == "react"
    assert mail_kind_of(None) is None
    assert UI.mail_kind({"kind": "keep", "crew": "french", "active": "french"}) == "turn"


def test_boards_and_pictures() -> None:
    boards = UI.boards({"start": "le-cap"})
    assert boards == ["le-cap"]
    with pytest.raises(ValueError):
        UI.boards({"start": "kaldheira"})
    game = GreatRace.new(["french", "belgian"], start="alger", seed=1)
    svg = UI.board_svg(game.view(seat=0), boards, lang="pl", highlight=["E2"])
    assert svg.startswith("<svg") and "Wielki" in svg
    assert UI.board_png(svg, 300).startswith(b"\x89PNG")
    assert UI.board_text(game.view(), boards) is not None
    assert UI.board_choices == ("alger", "le-cap")
    assert UI.variants == ("standard", "leaders")
