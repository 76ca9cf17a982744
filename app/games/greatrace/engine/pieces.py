"""The pieces of The Great Race (docs/great-race-rules.md sections 2, 3, 5, 7): crews, gauges,
terrain tiles and resource cards, as pure data."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

Crew: TypeAlias = str
"""A crew's slug, one of :data:`CREWS`."""
Box: TypeAlias = str
"""A dashboard box letter, one of :data:`BOXES`."""
Card: TypeAlias = str
"""A resource card's slug, a key of :data:`ALL_CARDS`."""
TileCode: TypeAlias = str
"""A terrain tile written ``p<petrol>[d<damage>][x][s]``."""
Timing: TypeAlias = Literal["sequence", "driver", "repairman", "any"]

CREWS: Final = ("french", "belgian", "italian", "english")
CREW_COLOUR: Final[dict[Crew, str]] = {
    "french": "#1f5fbf",
    "belgian": "#e8c01a",
    "italian": "#c8282d",
    "english": "#2e8b3e",
}

BOXES: Final = ("P", "M", "S", "F")
BOX_NAMES: Final[dict[Box, str]] = {
    "P": "pathfinder",
    "M": "mechanics",
    "S": "security",
    "F": "funding",
}
ASSISTANTS: Final = 5
FUNDING: Final[dict[int, int]] = {1: 10, 2: 20, 3: 40, 4: 70, 5: 110}
"""Francs received for the whole FUNDING group, by its number of assistants."""

MAX_PETROL: Final = 10
MAX_ENGINE: Final = 5
MAX_CHASSIS: Final = 5
START_MONEY: Final = 80
LAST_START_MONEY: Final = 70

PETROL_PRICE: Final = {"city": 10, "wild": 20}
PART_PRICE: Final = {"city": 20, "wild": 40}
TRANSPORT_SAVING: Final = 50
DANGER_DAMAGE: Final = 2
SABOTEUR_DAMAGE: Final = 2
BONUS: Final = (20, 10)
"""The maintenance bonus of the first and second player (only the first in a 2-player game)."""
PLACE_PRESTIGE: Final = (5, 3, 1)
FIRST_VERSION_CALL_OFF_TURN: Final = 30
"""Only in games of the first rules version (state.FIRST_VERSION): the game turn at whose end a
race nobody has finished was called off. The rulebook has no turn limit: a race goes on until a
vehicle finishes (docs/great-race-rules.md section 9)."""

TILES: Final[dict[TileCode, int]] = {
    "p1": 10,
    "p2": 8,
    "p3": 4,
    "p1d1": 8,
    "p2d1": 6,
    "p1d2": 4,
    "p1x": 5,
    "p2x": 3,
    "p1s": 4,
    "p2s": 3,
    "p1d1x": 2,
    "p1d1s": 3,
}

_TILE = re.compile(r"p(\d)(?:d(\d))?(x?)(s?)")


@dataclass(frozen=True)
class Tile:
    """A terrain tile's requirements and symbols."""

    petrol: int
    damage: int = 0
    danger: bool = False
    stop: bool = False

    @property
    def code(self) -> TileCode:
        return (
            f"p{self.petrol}"
            + (f"d{self.damage}" if self.damage else "")
            + ("x" if self.danger else "")
            + ("s" if self.stop else "")
        )

    @staticmethod
    def parse(text: str) -> Tile:
        """The tile ``text`` writes (any case); ValueError when it writes none of the 60."""
        code = text.strip().lower()
        if code not in TILES:
            raise ValueError(f"'{text}' is not a terrain tile; the tiles are {', '.join(TILES)}")
        match = _TILE.fullmatch(code)
        assert match is not None
        petrol, damage, danger, stop = match.groups()
        return Tile(int(petrol), int(damage or 0), bool(danger), bool(stop))


TILE: Final[dict[TileCode, Tile]] = {code: Tile.parse(code) for code in TILES}

CARDS: Final[dict[Card, int]] = {
    "trail-hunter": 2,
    "financial": 3,
    "jerrycan": 8,
    "refueling-station": 2,
    "transport": 2,
    "spare-parts": 6,
    "toolbox": 2,
    "guide": 2,
    "militia": 3,
    "driver": 3,
    "cartographer": 3,
    "saboteur": 3,
    "tracker": 2,
    "con-artist": 2,
    "repairman": 3,
}
"""The 46 resource cards of the base game."""
LEADER_CARDS: Final[dict[Card, int]] = {"topographer": 2}
"""The cards the Leader module shuffles into the deck (48 in all)."""
ALL_CARDS: Final[dict[Card, int]] = {**CARDS, **LEADER_CARDS}

CARD_TIMING: Final[dict[Card, Timing]] = {
    "trail-hunter": "sequence",
    "financial": "sequence",
    "jerrycan": "any",
    "refueling-station": "sequence",
    "transport": "driver",
    "spare-parts": "repairman",
    "toolbox": "repairman",
    "guide": "driver",
    "militia": "any",
    "driver": "sequence",
    "cartographer": "sequence",
    "saboteur": "sequence",
    "tracker": "sequence",
    "con-artist": "sequence",
    "repairman": "sequence",
    "topographer": "sequence",
}
DANGER_CARDS: Final = frozenset({"trail-hunter", "saboteur", "con-artist"})

FINANCIAL_GAIN: Final = 30
REFUEL_GAIN: Final = 5
TOOLBOX_GAIN: Final = 3
TILES_DRAWN: Final[dict[str, tuple[int, int]]] = {
    "scout": (2, 2),
    "cartographer": (3, 3),
    "topographer": (4, 2),
    "leader": (3, 3),
}
"""Tiles drawn and tiles placed by each way of exploring."""
TRACKER_DRAW: Final = 3
TRACKER_KEEP: Final = 2
BELGIAN_MIN_CARDS: Final = 2
"""The Belgian leader draws at least this many cards entering any city (Leader module)."""


def deck_cards(leaders: bool) -> list[Card]:
    """Every resource card of a game, one entry per copy, in a fixed order."""
    cards = ALL_CARDS if leaders else CARDS
    return [card for card, count in cards.items() for _ in range(count)]


def bag_tiles() -> list[TileCode]:
    """All 60 terrain tiles, one entry per copy, in a fixed order."""
    return [code for code, count in TILES.items() for _ in range(count)]


def funding(assistants: int) -> int:
    return FUNDING.get(assistants, 0)
