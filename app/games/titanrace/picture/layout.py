"""The Titan Race board picture's geometry (SVG user units), colours, feature icons and words,
the small SVG helpers every part of it uses, and where a space sits on the canvas."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from app.core.i18n import N_, translate
from app.games.titanrace.describe import DIE_COLOURS, TITAN_NAMES, colour_name, titan_name
from app.games.titanrace.engine.cards import TITAN_COLOUR
from app.games.titanrace.engine.circuits import (
    BONUS,
    FIRE_STATUE,
    ICE,
    LAVA,
    MULTI_RAMP,
    PENTACLE,
    PIRATES,
    SUPER_RAMP,
    Circuit,
)
from app.games.titanrace.engine.geometry import ROWS, parse_space
from app.games.titanrace.textboard import (
    TITAN_ABBREVIATIONS,
)

# --- geometry of the picture (SVG user units; one board is ~324 x 420) -------------------------

SIZE: Final = 32.0  # circumradius of a space's hexagon
HALF_H: Final = SIZE * math.sqrt(3) / 2  # one row step: half a hexagon's height
COL_STEP: Final = SIZE * 1.5
DRAWN: Final = SIZE - 1.6  # the drawn hexagon leaves a thin gap (the board shows through)
PLATE_PAD: Final = 10.0
TITLE_H: Final = 26.0  # the board's title above its plate
BAND_H: Final = 8.0  # the finish line at the top of the plate
LETTERS_H: Final = 16.0  # column letters under the plate
GRID_W: Final = 5 * COL_STEP + 2 * SIZE
GRID_H: Final = (ROWS - 1) * HALF_H + 2 * HALF_H
BOARD_WIDTH: Final = GRID_W + 2 * PLATE_PAD
PLATE_H: Final = BAND_H + GRID_H + 2 * PLATE_PAD
BOARD_HEIGHT: Final = TITLE_H + PLATE_H + LETTERS_H
MARGIN: Final = 12.0
GUTTER: Final = 14.0
PANEL_W: Final = 256.0
TOKEN_R: Final = 15.0

# --- colours -------------------------------------------------------------------------------------

BACKGROUND: Final = "#f5f0e6"
PLATE: Final = "#353a47"
PLATE_EDGE: Final = "#23262f"
TILE: Final = "#ede6d6"
TILE_EDGE: Final = "#c9bea7"
TILE_TEXT: Final = "#857a66"
HIGHLIGHT: Final = "#e64980"
PENDING_RING: Final = "#f59f00"
TRAP_RED: Final = "#e03131"
GOLD: Final = "#fab005"

COLOUR_FILL: Final[dict[str, str]] = {
    "red": "#d62828",
    "yellow": "#f5c400",
    "blue": "#1f6fd6",
    "brown": "#8d5524",
    "green": "#2f9e44",
    "purple": "#7b2cbf",
}
DARK_TEXT_ON: Final = frozenset({"yellow"})
KO_FILL: Final = "#b5b8bd"


@dataclass(frozen=True)
class _Feature:
    fill: str
    edge: str
    text: str  # colour of the space name on this fill
    icon: str  # SVG drawn around (0, 0), within about 12 units
    en: str
    """The feature's name in the legend (a message id of the catalogue)."""


def _arrow(dx: float, dy: float, length: float, width: float, heads: int = 1) -> str:
    """A white arrow through (0, 0) along (dx, dy), ``heads`` arrowheads at its tip."""
    norm = math.hypot(dx, dy)
    ux, uy = dx / norm, dy / norm
    px, py = -uy, ux
    x0, y0 = -ux * length / 2, -uy * length / 2
    x1, y1 = ux * length / 2, uy * length / 2
    parts = [
        f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1 - ux * 3:.1f}" y2="{y1 - uy * 3:.1f}" '
        f'stroke="#fff" stroke-width="{width}" stroke-linecap="round"/>'
    ]
    for k in range(heads):
        tx, ty = x1 - ux * 5.5 * k, y1 - uy * 5.5 * k
        bx, by = tx - ux * 6.5, ty - uy * 6.5
        parts.append(
            f'<path d="M{tx:.1f} {ty:.1f} L{bx + px * 5:.1f} {by + py * 5:.1f} '
            f'L{bx - px * 5:.1f} {by - py * 5:.1f}Z" fill="#fff"/>'
        )
    return "".join(parts)


def _multi_ramp_icon() -> str:
    """Three short arrows fanning out forward: S, L and R."""
    parts = []
    for dx, dy in ((0.0, -1.0), (-COL_STEP, -HALF_H), (COL_STEP, -HALF_H)):
        norm = math.hypot(dx, dy)
        ux, uy = dx / norm, dy / norm
        sx, sy = 0.0, 7.0
        ex, ey = sx + ux * 16, sy + uy * 16
        bx, by = ex - ux * 5, ey - uy * 5
        parts.append(
            f'<line x1="{sx}" y1="{sy}" x2="{bx:.1f}" y2="{by:.1f}" stroke="#fff" '
            'stroke-width="2.2" stroke-linecap="round"/>'
            f'<path d="M{ex:.1f} {ey:.1f} L{bx - uy * 4:.1f} {by + ux * 4:.1f} '
            f'L{bx + uy * 4:.1f} {by - ux * 4:.1f}Z" fill="#fff"/>'
        )
    return "".join(parts)


def _pentagram() -> str:
    points = []
    for k in range(5):
        angle = math.radians(-90 + 144 * k)
        points.append(f"{10.5 * math.cos(angle):.1f},{2 + 10.5 * math.sin(angle):.1f}")
    return (
        '<circle cx="0" cy="2" r="11" fill="none" stroke="#e5dbff" stroke-width="1.3"/>'
        f'<polygon points="{" ".join(points)}" fill="none" stroke="#e5dbff" '
        'stroke-width="1.4" stroke-linejoin="round"/>'
    )


def _snowflake() -> str:
    parts = []
    for k in range(3):
        angle = math.radians(90 + 60 * k)
        cx, cy = 10 * math.cos(angle), 10 * math.sin(angle)
        parts.append(f'<line x1="{-cx:.1f}" y1="{2 - cy:.1f}" x2="{cx:.1f}" y2="{2 + cy:.1f}"/>')
    for k in range(6):
        angle = math.radians(90 + 60 * k)
        ax, ay = 6.5 * math.cos(angle), 2 + 6.5 * math.sin(angle)
        for side in (-1, 1):
            b = angle + side * math.radians(40)
            parts.append(
                f'<line x1="{ax:.1f}" y1="{ay:.1f}" x2="{ax + 4 * math.cos(b):.1f}" '
                f'y2="{ay + 4 * math.sin(b):.1f}"/>'
            )
    return (
        '<g stroke="#1864ab" stroke-width="1.8" stroke-linecap="round">' + "".join(parts) + "</g>"
    )


_LAVA_ICON: Final = "".join(
    f'<path d="M-11 {y} q2.75 -3.2 5.5 0 t5.5 0 t5.5 0 t5.5 0" fill="none" stroke="#ffe066" '
    'stroke-width="2" stroke-linecap="round"/>'
    for y in (-3, 3, 9)
)
_PIRATES_ICON: Final = (
    '<g stroke="#f1f3f5" stroke-width="2.6" stroke-linecap="round">'
    '<line x1="-10" y1="-7" x2="10" y2="12"/><line x1="10" y1="-7" x2="-10" y2="12"/></g>'
    '<circle cx="0" cy="0" r="7.2" fill="#f1f3f5"/>'
    '<rect x="-4" y="4" width="8" height="5.5" rx="1.5" fill="#f1f3f5"/>'
    '<circle cx="-2.7" cy="0" r="2" fill="#1c3d6e"/><circle cx="2.7" cy="0" r="2" fill="#1c3d6e"/>'
)
_FIRE_ICON: Final = (
    '<rect x="-7.5" y="7" width="15" height="4.5" rx="1" fill="#ced4da"/>'
    '<path d="M0 -12 C5 -6 8.5 -2 6.5 3 C5.5 6 2.5 7 0 7 C-2.5 7 -5.5 6 -6.5 3 '
    'C-8 -2 -2 -4 0 -12Z" fill="#fd7e14"/>'
    '<path d="M0 -3 C2.5 0 4 2 3 4.5 C2.4 6 -2.4 6 -3 4.5 C-4 2 -1 0.5 0 -3Z" fill="#ffe066"/>'
)
_BONUS_ICON: Final = (
    '<g transform="rotate(-12 0 2)">'
    '<rect x="-7.5" y="-8" width="15" height="20" rx="2.2" fill="#fff" stroke="#b35c00" '
    'stroke-width="1.5"/>'
    '<path d="M0 -3 L1.6 0.6 L5.4 1 L2.6 3.6 L3.4 7.4 L0 5.5 L-3.4 7.4 L-2.6 3.6 L-5.4 1 '
    'L-1.6 0.6Z" fill="#f08c00"/></g>'
)

FEATURES: Final[dict[str, _Feature]] = {
    LAVA: _Feature("#f0602a", "#b8330c", "#fff4e6", _LAVA_ICON, N_("lava")),
    PIRATES: _Feature("#1c3d6e", "#0f2547", "#dbe4ff", _PIRATES_ICON, N_("pirates")),
    ICE: _Feature("#cfe8fc", "#74b3e8", "#1864ab", _snowflake(), N_("ice")),
    FIRE_STATUE: _Feature(
        "#5c5f66", "#3a3c41", "#f1f3f5", _FIRE_ICON, N_("fire statue")
    ),
    PENTACLE: _Feature("#6741d9", "#4524a8", "#e5dbff", _pentagram(), N_("pentacle")),
    BONUS: _Feature("#ffd43b", "#e0a800", "#7a4a00", _BONUS_ICON, N_("bonus card")),
    MULTI_RAMP: _Feature(
        "#2b8a3e", "#1b5e28", "#ebfbee", _multi_ramp_icon(), N_("multi-ramp")
    ),
}
SUPER_RAMP_LOOK: Final = _Feature(
    "#1f7a4d", "#125233", "#ebfbee", "", N_("super-ramp (L/R)")
)
RAMP_ICONS: Final[dict[str, str]] = {
    "L": _arrow(-COL_STEP, -HALF_H, 22, 3.2, heads=2),
    "R": _arrow(COL_STEP, -HALF_H, 22, 3.2, heads=2),
}


def _trap_icon(scale: float) -> str:
    points = []
    for k in range(20):
        radius = 9.5 if k % 2 == 0 else 6.2
        angle = math.pi * k / 10
        points.append(f"{radius * math.cos(angle):.1f},{radius * math.sin(angle):.1f}")
    return (
        f'<g transform="scale({scale})">'
        f'<polygon points="{" ".join(points)}" fill="{TRAP_RED}" stroke="#1a1a1a" '
        'stroke-width="1.2" stroke-linejoin="round"/>'
        '<circle r="4.6" fill="#1a1a1a"/><circle r="1.8" fill="#ffc9c9"/></g>'
    )


TRAP_BIG: Final = _trap_icon(1.0)
TRAP_SMALL: Final = _trap_icon(0.62)
TRAP_CORNER: Final = (17.0, 13.5)

HEART: Final = (
    "M0 4.6 C-1 3.6 -5.6 0.6 -5.6 -1.9 C-5.6 -4.6 -1.6 -5.4 0 -2.7 "
    "C1.6 -5.4 5.6 -4.6 5.6 -1.9 C5.6 0.6 1 3.6 0 4.6Z"
)

# --- words ---------------------------------------------------------------------------------------

WORDS: Final[dict[str, str]] = {
    "round": N_("round"),
    "first": N_("first round"),
    "dice": N_("dice"),
    "life": N_("life"),
    "lap": N_("lap"),
    "cards": N_("cards"),
    "winner": N_("winner"),
    "board": N_("board"),
    "waiting": N_("not started"),
    "ko": N_("KO"),
    "to_act": N_("to act"),
    "trap": N_("trap"),
    "traps_left": N_("traps left"),
    "none": N_("none"),
    "title": N_("Titan Race"),
    "laps": N_("laps"),
    # Translators: the heading of the board's legend (what the features' colours mean).
    "legend": N_("legend"),
}
"""The picture's words by key, as message ids (translated by :func:`words_in`)."""


def words_in(lang: str) -> dict[str, str]:
    """The picture's words in ``lang`` (through :mod:`app.core.i18n`), with each Titan's name under
    ``titan:<id>`` as the text says it (Polish: Masakrator), the two letters on its token under
    ``mark:<id>`` (Polish: Ma) and each die's ``colour:<id>``."""
    return {key: translate(lang, text) for key, text in WORDS.items()} | {
        f"mark:{titan}": translate(lang, mark, context="titan mark")
        for titan, mark in TITAN_ABBREVIATIONS.items()} | {
        f"titan:{titan}": titan_name(titan, lang) for titan in TITAN_NAMES} | {
        f"colour:{die}": colour_name(die, lang) for die in DIE_COLOURS}


# --- small SVG helpers ---------------------------------------------------------------------------




def display_name(titan: str, words: Mapping[str, str]) -> str:
    """A Titan's name in the picture's language (see :func:`words_in`)."""
    return words.get(f"titan:{titan}") or titan[:1].upper() + titan[1:]


def colour_of(titan: str) -> str:
    return TITAN_COLOUR.get(titan, "")


def fill_of(titan: str) -> str:
    return COLOUR_FILL.get(colour_of(titan), "#868e96")


def feature_look(circuit: Circuit, col: int, row: int) -> tuple[str | None, _Feature | None]:
    kind = circuit.feature_at(col, row)
    if kind is None:
        return None, None
    if kind == SUPER_RAMP:
        return kind, SUPER_RAMP_LOOK
    return kind, FEATURES.get(kind)


# --- placement -----------------------------------------------------------------------------------


def board_origin(board: int, boards: int) -> tuple[float, float]:
    """Top-left corner of a board block (title included) on the canvas, before any header."""
    return MARGIN + board * (BOARD_WIDTH + GUTTER), 0.0


def local_centre(col: int, row: int) -> tuple[float, float]:
    x = PLATE_PAD + SIZE + col * COL_STEP
    y = TITLE_H + BAND_H + PLATE_PAD + HALF_H + (ROWS - row) * HALF_H
    return x, y


def cell_centre(
    space: str, board: int = 0, boards: int = 1, *, top: float = MARGIN
) -> tuple[float, float]:
    """The canvas point at the centre of ``space`` on ``board`` (of ``boards``), as drawn.

    ``top`` is the height above the boards, which :func:`board_svg` reports in the SVG as
    ``data-board-top`` on the root element (it grows with a title and a winner banner).
    """
    col, row = parse_space(space)
    ox, oy = board_origin(board, boards)
    lx, ly = local_centre(col, row)
    return round(ox + lx, 1), round(oy + top + ly, 1)
