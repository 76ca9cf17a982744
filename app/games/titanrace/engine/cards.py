"""Titans, colours and the 13-card house Bonus deck (RULINGS.md section 6)."""

from __future__ import annotations

from typing import Final, Literal

Titan = str
Colour = str
Card = str

TITANS: Final[tuple[Titan, ...]] = (
    "grinder",
    "rassik",
    "craken",
    "ragnarok",
    "slaugg",
    "chtoolhoo",
)
COLOURS: Final[tuple[Colour, ...]] = ("blue", "red", "brown", "green", "yellow", "purple")
TITAN_COLOUR: Final[dict[Titan, Colour]] = {
    "grinder": "red",
    "rassik": "yellow",
    "craken": "blue",
    "ragnarok": "brown",
    "slaugg": "green",
    "chtoolhoo": "purple",
}
COLOUR_TITAN: Final = {colour: titan for titan, colour in TITAN_COLOUR.items()}
MAX_LIFE: Final = 6


def start_life(titan: Titan) -> int:
    """Life at the start and after recovering from a KO (Chtoolhoo has 4)."""
    return 4 if titan == "chtoolhoo" else MAX_LIFE


Timing = Literal["turn", "any", "reaction"]

CARD_TIMING: Final[dict[Card, Timing]] = {
    "tribal-trap": "turn",
    "speed-potion": "turn",
    "leap": "turn",
    "blink": "turn",
    "borrowed-power": "turn",
    "fireball": "turn",
    "quake": "turn",
    "pickpocket": "turn",
    "thunderbolt": "any",
    "healing-potion": "any",
    "last-shield": "reaction",
    "repulse": "reaction",
    "dispel": "reaction",
}
CARDS: Final[tuple[Card, ...]] = tuple(CARD_TIMING)
ANY_TIME_CARDS: Final = tuple(c for c, t in CARD_TIMING.items() if t == "any")

FACE_PATHS: Final[dict[Colour, tuple[str, ...]]] = {
    "blue": ("SS",),
    "red": ("S",),
    "brown": ("SL", "SR", "LS", "RS"),
    "green": ("LL", "RR"),
    "yellow": ("LLL", "RRR"),
}
PATH_FACE: Final[dict[str, Colour]] = {p: c for c, paths in FACE_PATHS.items() for p in paths}
ALL_PATHS: Final[tuple[str, ...]] = tuple(PATH_FACE)
