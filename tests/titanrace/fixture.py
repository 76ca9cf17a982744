"""Titan Race's test fixture (tests/gamefixtures.py): its samples and test data."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.games.titanrace.engine.cards import CARDS
from app.games.titanrace.engine.notation import DECISION_VERBS
from tests.gamefixtures import GameFixture

TESTS = Path(__file__).resolve().parent.parent


def start_seat_0(service: Any, uid: str) -> None:
    """Play seat 0's decisions (a start or a move when there is one) until its first Titan is
    on the board, so that the close view has a piece to go to."""
    for _ in range(12):
        state = service.state(uid, 0)
        titans = state["view"]["titans"]
        if any(titans[name]["space"] for name in service.link_seat(uid, 0).pieces):
            return
        assert state["game"]["to_act"] == [0], state["game"]["to_act"]
        options = service.options(uid, 0)["options"]
        option = next((o for o in options if o.startswith(("start ", "move "))), options[0])
        service.submit(uid, 0, state["seq"], option)
    pytest.fail("seat 0's Titan never started")


FIXTURE = GameFixture(
    scenarios=TESTS / "scenarios",
    scenario_keys={"circuit": object, "titans": list, "inputs": list},
    command_scenarios=("ability-grinder.json", "illegal-move-ss-red.json"),
    demo=(),
    demo_modules=("commandline", "textboard", "describe"),
    notation=frozenset(word for text in [*CARDS, *(verb for verbs in DECISION_VERBS.values()
                                                   for verb in verbs)]
                       for word in re.findall(r"[^\W\d_]+", str(text))),
    proper_names=frozenset(),
    seats=3,
    board_words={
        "pl": ("Tytan", "Pole", "Życie", "Zdolność", "Ręka", "pułapka", "tytan (zob. niżej)",
               "Runda 1", "Kości:", "Pułapki w zapasie:"),
        "en": ("Life", "Ability", "Hand", "Round", "Dice", "a Titan (see below)"),
    },
    demo_words={
        "pl": ("Weź kość:", "Koniec gry. Zwycięzca:", "Runda", "Pułapki w zapasie:",
               "Masakrator", "Kraken"),
        "en": ("Take the", "Round", "Winner", "Grinder", "Craken", "Life"),
    },
    demo_patterns={"pl": (), "en": ()},
    new_game_form={"variant": "standard", "circuit0": "kaldheira", "seat0_titan": "grinder",
                   "seat1_titan": "craken", "seat2_titan": "rassik"},
    mail_race={"circuits": ["dead-mans-lagoon"], "seed": 25},
    decisions=tuple({"kind": kind} for kind in ("pick", "start", "turn", "react", "pirates")),
    piece_selector='g.titan[data-titan="{piece}"]',
    to_the_board=start_seat_0,
)
