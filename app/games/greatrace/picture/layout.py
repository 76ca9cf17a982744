"""The Great Race board picture's geometry (SVG user units), colours, crews' colours and tiles,
and the small SVG helpers every part of it uses."""

from __future__ import annotations

import math
from typing import Final

from app.games.greatrace.engine.board import COLUMNS, ROWS, col_row
from app.games.greatrace.engine.pieces import CREW_COLOUR, MAX_CHASSIS, MAX_ENGINE, MAX_PETROL, Tile

UNKNOWN_CREW: Final = "#868e96"


def crew_colour(crew: str) -> str:
    """The crew's colour (``#rrggbb``), grey for a crew the game does not know."""
    return CREW_COLOUR.get(crew, UNKNOWN_CREW)


def ink_on(fill: str) -> str:
    """Dark or white writing, whichever reads better on ``fill``."""
    try:
        red, green, blue = (int(fill[k : k + 2], 16) for k in (1, 3, 5))
    except ValueError:
        return "#ffffff"
    return "#2b2a33" if 0.299 * red + 0.587 * green + 0.114 * blue > 160 else "#ffffff"


def parse_tile(code: object) -> Tile | None:
    """The tile a code such as ``p1d1s`` names, or None when it names none of the 60."""
    if not isinstance(code, str):
        return None
    try:
        return Tile.parse(code)
    except ValueError:
        return None


# --- geometry (SVG user units) -------------------------------------------------------------------

R: Final = 31.0  # circumradius of a space
HEX_W: Final = R * math.sqrt(3)
ROW_STEP: Final = R * 1.5
MARGIN: Final = 14.0
LABEL_W: Final = 20.0  # row numbers left of the map
LETTER_H: Final = 20.0  # column letters above the map
SEA_RIM: Final = 6.0  # the sea drawn around the map's hexagons
MAP_X: Final = MARGIN + LABEL_W
MAP_Y: Final = MARGIN + LETTER_H
MAP_W: Final = HEX_W * (len(COLUMNS) + 0.5)
MAP_H: Final = ROW_STEP * (ROWS - 1) + 2 * R
PANEL_X: Final = MAP_X + MAP_W + SEA_RIM + 16
PANEL_W: Final = 312.0
WIDTH: Final = PANEL_X + PANEL_W + MARGIN
MAP_BOTTOM: Final = MAP_Y + MAP_H + SEA_RIM + MARGIN

CRISP: Final = 'shape-rendering="crispEdges"'
"""Edges drawn without anti-aliasing. The PNG's render time follows the picture's detail, and
soft edges are most of it: the grid, the lines, the highlights and the panel's boxes look as good
crisp; small round or slanted things (cars, icons, cards) keep soft edges."""


BACKGROUND: Final = "#f6f1e7"
SEA: Final = "#8ec3df"
SEA_EDGE: Final = "#5f9fc4"
TERRAIN: Final = "#d9bf86"
TERRAIN_EDGE: Final = "#b99a5b"
RISK_FILL: Final = "#3b3734"
RISK_EDGE: Final = "#1f1d1b"
TILE_FILL: Final = "#fff8e8"
TILE_EDGE: Final = "#8a6a3a"
TILE_INK: Final = "#3a2a12"
CITY_FILL: Final = "#c4553a"
CITY_EDGE: Final = "#8a3420"
PURPLE_FILL: Final = "#7b3fa6"
PURPLE_EDGE: Final = "#4f2470"
LABEL_FILL: Final = "#fffaf0"
DAMAGE_RED: Final = "#d62828"
DANGER_YELLOW: Final = "#ffd43b"
STOP_RED: Final = "#c92a2a"
PETROL_GREEN: Final = "#2b8a3e"
HIGHLIGHT: Final = "#e64980"
PENDING_RING: Final = "#f76707"
LINE_INK: Final = "#1d3557"
GAUGE_EMPTY: Final = "#e3dccd"
GAUGE_FILL: Final[dict[str, str]] = {"petrol": "#2b8a3e", "engine": "#1c7ed6", "chassis": "#845ef7"}
GAUGE_MAX: Final[dict[str, int]] = {
    "petrol": MAX_PETROL,
    "engine": MAX_ENGINE,
    "chassis": MAX_CHASSIS,
}
BOXES: Final = ("P", "M", "S", "F")
GOLD: Final = "#fab005"

Point = tuple[float, float]

LINE_ROUTE: Final[dict[tuple[str, str], tuple[Point, Point]]] = {
    ("alger", "dakar"): ((2.6, 0.3), (-1.0, 1.4)),
    ("dakar", "lagos"): ((-0.7, 5.6), (0.2, 7.6)),
    ("lagos", "luanda"): ((0.4, 8.4), (1.2, 11.2)),
    ("zanzibar", "le-cap"): ((11.4, 13.0), (8.0, 16.3)),
    ("alger", "tombouctou"): ((3.8, 2.0), (2.8, 3.6)),
    ("le-caire", "khartoum"): ((11.3, 2.4), (11.3, 4.4)),
    ("nairobi", "bulawayo"): ((9.6, 9.6), (8.6, 12.0)),
}
"""Two control points per line (a cubic curve), in grid units (column, row, no even-row
shift): the sea lines go round the coast over the sea, the air lines bend a little."""


def centre(space: str) -> tuple[float, float]:
    """The SVG point at the centre of a well-formed space name."""
    col, row = col_row(space)
    return grid_point(col, row)


def grid_point(col: float, row: float) -> tuple[float, float]:
    shift = HEX_W / 2 if round(row) % 2 == 0 else 0.0
    return MAP_X + HEX_W / 2 + col * HEX_W + shift, MAP_Y + R + (row - 1) * ROW_STEP




# --- small helpers -------------------------------------------------------------------------------


