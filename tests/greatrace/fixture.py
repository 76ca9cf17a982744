"""The Great Race's test fixture (tests/gamefixtures.py): its samples and test data."""

from __future__ import annotations

import re
from pathlib import Path

from app.games.greatrace.engine.board import CITIES
from app.games.greatrace.engine.notation import DECISION_VERBS
from app.games.greatrace.engine.pieces import ALL_CARDS
from tests.gamefixtures import GameFixture

FIXTURE = GameFixture(
    scenarios=Path(__file__).resolve().parent / "scenarios",
    scenario_keys={"game": str, "crews": list, "inputs": list},
    command_scenarios=("example-drive-known-territory.json", "illegal-plan-not-five.json"),
    scenario_kinds=("example-", "faq-", "turn-", "setup-", "card-", "leader-", "illegal-"),
    demo=("--crews", "french,italian"),
    demo_modules=("commandline", "textboard", "picture", "describe"),
    notation=frozenset(word for text in [*ALL_CARDS, *(verb for verbs in DECISION_VERBS.values()
                                                       for verb in verbs)]
                       for word in re.findall(r"[^\W\d_]+", str(text))),
    proper_names=frozenset(city.name for city in CITIES),
    seats=2,
    board_words={
        "pl": ("benzyna", "postęp:", "tura 1", "kolejność:", "targ:", "kafelki w worku"),
        "en": ("petrol", "progression", "market", "tiles in bag", "order:"),
    },
    demo_words={
        "pl": ("Ekipa francuska:", "Weź kartę", "benzyna", "zwycięzca:", "postęp:"),
        "en": ("Take the", "petrol", "winner", "French", "progression", "market"),
    },
    demo_patterns={"pl": (r"\bZ\d M\d O\d F\d\b",),  # (the dashboard's boxes)
                   "en": (r"\bP\d M\d S\d F\d\b",)},
    new_game_form={"circuit0": "alger", "seat0_titan": "french", "seat1_titan": "belgian",
                   "seat2_titan": "italian"},
    mail_race={"circuits": ["alger"], "seed": 4},
    decisions=tuple({"kind": kind, "crew": "A", "active": active}
                    for kind in ("take", "plan", "turn", "place", "drive", "repair", "damage",
                                 "keep", "avoid", "discard")
                    for active in ("A", "B")),
    piece_selector='g.vehicle[data-crew="{piece}"]',
)
