"""The board picture: a state view drawn as a self-contained SVG, and that SVG rendered to PNG.

The input is the JSON state view of ``ENGINE-INTERFACE.md`` (a plain mapping), exactly as the
terminal renderer (:mod:`app.games.titanrace.textboard`) takes it, with the same glyph
meanings drawn as pictures instead of characters:

- each of the 36 real spaces is a flat-topped hexagon on the A-F x 1-12 grid, row 12 at the top.
  Odd rows hold A, C, E and even rows B, D, F, so a column's spaces are stacked two rows apart
  and the diagonal neighbours (L, R) touch along the slanted edges: the hexagon grid *is* the
  game's geometry. Every space carries its name, small, at its top edge;
- features are a fill colour and an icon: lava (orange, waves), pirates (navy, skull and bones),
  ice (pale blue, snowflake), fire statue (stone, flame), pentacle (violet, pentagram), bonus
  (gold, a card), multi-ramp (green, three arrows), super-ramp (green, a double arrow pointing L
  or R with the letter);
- a trap is a red spiked ring: large in an empty space, small in the lower right corner when a
  Titan stands on it;
- a Titan is a token in its colour with its 2-letter mark (Gr, Ra, Cr, Rg, Sl, Ch), a dark badge
  with its lap, a gold ring when it is the Titan to act, grey and crossed out while KO;
- ``highlight`` spaces get a thick pink outline (where an option leads);
- a panel (right of one board, under three Grand Slam boards) gives the round, whose decision is
  pending, each Titan's life (6 hearts), lap and hand size, the dice on the table as coloured
  squares and a legend of the features on the board(s); a gold banner names the winner.

Everything is inline attributes (no CSS, fonts or images from outside), so the SVG can be served
as it is and :func:`board_png` renders the same picture for mail. Nothing here changes the game,
and a malformed field is drawn as best it can be rather than raising.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from xml.sax.saxutils import escape

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
from app.games.titanrace.engine.geometry import ALL_SPACES, COLUMNS, ROWS, parse_space
from app.games.titanrace.textboard import (
    TITAN_ABBREVIATIONS,
    _board_index,
    _int,
    _square,
    _titans,
    _trap_squares,
    abbreviation,
)
from app.i18n import N_, language, translate
from app.pictures import board_png

__all__ = ["BOARD_HEIGHT", "BOARD_WIDTH", "board_png", "board_svg", "cell_centre"]

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

FONT: Final = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'DejaVu Sans', "
    "'Liberation Sans', 'Noto Sans', Arial, sans-serif"
)

# --- colours -------------------------------------------------------------------------------------

BACKGROUND: Final = "#f5f0e6"
INK: Final = "#2b2a33"
MUTED: Final = "#7a7163"
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

_HEART: Final = (
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
}
"""The picture's words by key, as message ids (translated by :func:`words_in`)."""


def words_in(lang: str) -> dict[str, str]:
    """The picture's words in ``lang`` (through :mod:`app.i18n`), with each Titan's name under
    ``titan:<id>`` as the text says it (Polish: Masakrator), the two letters on its token under
    ``mark:<id>`` (Polish: Ma) and each die's ``colour:<id>``."""
    return {key: translate(lang, text) for key, text in WORDS.items()} | {
        f"mark:{titan}": translate(lang, mark, context="titan mark")
        for titan, mark in TITAN_ABBREVIATIONS.items()} | {
        f"titan:{titan}": titan_name(titan, lang) for titan in TITAN_NAMES} | {
        f"colour:{die}": colour_name(die, lang) for die in DIE_COLOURS}


# --- small SVG helpers ---------------------------------------------------------------------------


def _attr(value: object) -> str:
    return escape(str(value), {'"': "&quot;"})


def _text(
    x: float,
    y: float,
    content: str,
    *,
    size: float,
    fill: str = INK,
    weight: str = "normal",
    anchor: str = "start",
    extra: str = "",
) -> str:
    bold = ' font-weight="bold"' if weight == "bold" else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}"{bold} '
        f'text-anchor="{anchor}"{extra}>{escape(content)}</text>'
    )


def _hexagon(cx: float, cy: float, radius: float) -> str:
    return " ".join(f"{cx + radius * dx:.1f},{cy + radius * dy:.1f}" for dx, dy in _UNIT_HEX)


_UNIT_HEX: Final = tuple(
    (math.cos(math.radians(60 * k)), math.sin(math.radians(60 * k))) for k in range(6)
)


def _display(titan: str, words: Mapping[str, str]) -> str:
    """A Titan's name in the picture's language (see :func:`words_in`)."""
    return words.get(f"titan:{titan}") or titan[:1].upper() + titan[1:]


def _colour_of(titan: str) -> str:
    return TITAN_COLOUR.get(titan, "")


def _fill_of(titan: str) -> str:
    return COLOUR_FILL.get(_colour_of(titan), "#868e96")


def _feature_look(circuit: Circuit, col: int, row: int) -> tuple[str | None, _Feature | None]:
    kind = circuit.feature_at(col, row)
    if kind is None:
        return None, None
    if kind == SUPER_RAMP:
        return kind, SUPER_RAMP_LOOK
    return kind, FEATURES.get(kind)


# --- placement -----------------------------------------------------------------------------------


def _board_origin(board: int, boards: int) -> tuple[float, float]:
    """Top-left corner of a board block (title included) on the canvas, before any header."""
    return MARGIN + board * (BOARD_WIDTH + GUTTER), 0.0


def _local_centre(col: int, row: int) -> tuple[float, float]:
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
    ox, oy = _board_origin(board, boards)
    lx, ly = _local_centre(col, row)
    return round(ox + lx, 1), round(oy + top + ly, 1)


# --- the board -----------------------------------------------------------------------------------


@dataclass
class _Token:
    titan: str
    info: Mapping[str, Any]
    mark: str = ""
    """The two letters on the token, in the picture's language (else the English ones)."""


def _board_svg(
    circuit: Circuit,
    index: int,
    boards: int,
    heading: str,
    subheading: str,
    tip: str,
    tokens: Mapping[tuple[int, int], list[_Token]],
    traps: set[tuple[int, int]],
    highlight: set[tuple[int, int]],
    pending: str | None,
    ox: float,
    oy: float,
) -> str:
    out: list[str] = [
        f'<g class="board" data-board="{index}" data-circuit="{_attr(circuit.name)}">'
    ]
    centre_x = ox + BOARD_WIDTH / 2
    out.append(
        _text(
            ox + 4 if subheading else centre_x,
            oy + 18,
            heading,
            size=15,
            weight="bold",
            anchor="start" if subheading else "middle",
        )
    )
    if subheading:  # the lap this board is raced on, as the lap badge of the tokens
        out.append(_lap_badge(ox + BOARD_WIDTH - 13, oy + 13, subheading, 9.0, tip=tip))
    plate_y = oy + TITLE_H
    out.append(
        f'<rect x="{ox:.1f}" y="{plate_y:.1f}" width="{BOARD_WIDTH:.1f}" height="{PLATE_H:.1f}" '
        f'rx="12" fill="{PLATE}" stroke="{PLATE_EDGE}" stroke-width="2"/>'
    )
    # The finish line: a chequered band across the top of the plate (two dashed lines).
    step = BAND_H / 2
    band_x0, band_x1 = ox + PLATE_PAD, ox + PLATE_PAD + (GRID_W // step) * step
    band_y = plate_y + 5
    out.append(
        f'<rect x="{band_x0:.1f}" y="{band_y:.1f}" width="{band_x1 - band_x0:.1f}" '
        f'height="{BAND_H:.1f}" fill="#f8f9fa"/>'
        f'<g class="finish" stroke="#212529" stroke-width="{step}" '
        f'stroke-dasharray="{step} {step}">'
        f'<line x1="{band_x0:.1f}" y1="{band_y + step / 2:.1f}" x2="{band_x1:.1f}" '
        f'y2="{band_y + step / 2:.1f}"/>'
        f'<line x1="{band_x0 + step:.1f}" y1="{band_y + step * 1.5:.1f}" x2="{band_x1:.1f}" '
        f'y2="{band_y + step * 1.5:.1f}"/></g>'
    )
    later: list[str] = []  # tokens are drawn over every cell, highlights over everything
    outlines: list[str] = []
    labels: list[str] = []
    for name in ALL_SPACES:
        col, row = parse_space(name)
        lx, ly = _local_centre(col, row)
        cx, cy = ox + lx, oy + ly
        kind, look = _feature_look(circuit, col, row)
        fill = look.fill if look else TILE
        edge = look.edge if look else TILE_EDGE
        label = look.text if look else TILE_TEXT
        feature_attr = f' data-feature="{kind}"' if kind else ""
        ramp = circuit.super_ramps.get(name, "").upper() if kind == SUPER_RAMP else ""
        if ramp:
            feature_attr += f' data-ramp="{ramp}"'
        out.append(
            f'<g class="cell" data-space="{name}"{feature_attr}>'
            f'<polygon points="{_hexagon(cx, cy, DRAWN)}" fill="{fill}" stroke="{edge}" '
            'stroke-width="1.5"/>'
        )
        here = tokens.get((col, row), [])
        trapped = (col, row) in traps
        if look is not None and not (trapped and not here):
            icon = RAMP_ICONS.get(ramp, "") if kind == SUPER_RAMP else look.icon
            out.append(f'<g transform="translate({cx:.1f} {cy + 3:.1f})">{icon}</g>')
            if ramp:
                out.append(
                    _text(
                        cx + 13, cy + 17, ramp, size=9, fill=label, weight="bold", anchor="middle"
                    )
                )
        if here:  # drawn over the token's ring, with a halo of the tile's colour
            labels.append(
                _text(
                    cx,
                    cy - 16.5,
                    name,
                    size=9,
                    fill=label,
                    anchor="middle",
                    extra=f' stroke="{fill}" stroke-width="2.5" paint-order="stroke"',
                )
            )
        else:
            out.append(_text(cx, cy - 16.5, name, size=9, fill=label, anchor="middle"))
        out.append("</g>")
        if trapped:
            tx, ty, icon = (
                (cx + TRAP_CORNER[0], cy + TRAP_CORNER[1], TRAP_SMALL)
                if here
                else (cx, cy + 3, TRAP_BIG)
            )
            later.append(
                f'<g class="trap" data-space="{name}" data-board="{index}" '
                f'transform="translate({tx:.1f} {ty:.1f})">{icon}</g>'
            )
        for number, token in enumerate(here):
            shift = number * 9.0  # two Titans on one space only in a malformed view
            later.append(_token(token, cx + shift, cy - shift, index, name, pending))
        if (col, row) in highlight:
            outlines.append(
                f'<polygon class="highlight" data-space="{name}" data-board="{index}" '
                f'points="{_hexagon(cx, cy, DRAWN - 1.5)}" fill="{HIGHLIGHT}" '
                f'fill-opacity="0.16" stroke="{HIGHLIGHT}" stroke-width="3.5" '
                'stroke-linejoin="round"/>'
            )
    # Column letters under the plate.
    letters_y = plate_y + PLATE_H + 12
    for col, letter in enumerate(COLUMNS):
        x = ox + PLATE_PAD + SIZE + col * COL_STEP
        out.append(_text(x, letters_y, letter, size=10, fill=MUTED, weight="bold", anchor="middle"))
    out.extend(outlines)
    out.extend(later)
    out.extend(labels)
    out.append("</g>")
    return "".join(out)


def _token(
    token: _Token,
    cx: float,
    cy: float,
    board: int,
    space: str,
    pending: str | None,
    radius: float = TOKEN_R,
    badge: bool = True,
    kind: str = "titan",
) -> str:
    titan, info = token.titan, token.info
    ko = bool(info.get("ko"))
    colour = _colour_of(titan)
    fill = KO_FILL if ko else _fill_of(titan)
    text_fill = "#5c5f66" if ko else ("#2b2a33" if colour in DARK_TEXT_ON else "#fff")
    scale = radius / TOKEN_R
    parts = [
        f'<g class="{kind}{" ko" if ko else ""}" data-titan="{_attr(titan)}" '
        f'data-space="{space}" data-board="{board}">'
    ]
    if titan == pending:
        parts.append(
            f'<circle class="pending" cx="{cx:.1f}" cy="{cy:.1f}" r="{radius + 4.5:.1f}" '
            f'fill="none" stroke="{PENDING_RING}" stroke-width="{3.2 * scale:.1f}"/>'
        )
    parts.append(
        f'<circle cx="{cx + 0.8:.1f}" cy="{cy + 1.4:.1f}" r="{radius + 1.8 * scale:.1f}" '
        'fill="#14161c" fill-opacity="0.55"/>'
        f'<circle class="token" cx="{cx:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{fill}" '
        f'stroke="#fff" stroke-width="{2 * scale:.1f}"/>'
    )
    parts.append(_text(cx, cy + 4.6 * scale, token.mark or abbreviation(titan),
                       size=round(13 * scale, 1), fill=text_fill, weight="bold", anchor="middle"))
    if ko:
        d = radius * 0.72
        parts.append(
            f'<g stroke="#343a40" stroke-width="{2.6 * scale:.1f}" stroke-linecap="round">'
            f'<line x1="{cx - d:.1f}" y1="{cy - d:.1f}" x2="{cx + d:.1f}" y2="{cy + d:.1f}"/>'
            f'<line x1="{cx + d:.1f}" y1="{cy - d:.1f}" x2="{cx - d:.1f}" y2="{cy + d:.1f}"/></g>'
        )
    if badge:
        lap = _int(info.get("lap"), 1)
        parts.append(_lap_badge(cx + radius * 0.93, cy - radius * 0.53, str(lap), 6.8))
    parts.append("</g>")
    return "".join(parts)


def _lap_badge(x: float, y: float, lap: str, radius: float, tip: str = "") -> str:
    """A lap number in a dark disc: on every token, and by a Grand Slam board's title."""
    size = round(radius * 1.33, 1)
    hint = f"<title>{escape(tip)}</title>" if tip else ""
    return (
        f'<g class="lap" data-lap="{_attr(lap)}">{hint}'
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="#212529" stroke="#fff" '
        f'stroke-width="{radius / 5.6:.1f}"/>'
        + _text(x, y + size * 0.36, lap, size=size, fill="#fff", weight="bold", anchor="middle")
        + "</g>"
    )


# --- the panel -----------------------------------------------------------------------------------

ROW_H: Final = 38.0


def _hearts(x: float, y: float, life: int, ko: bool, step: float = 12.5) -> str:
    life = max(0, min(life, 6))
    parts = [f'<g class="life" data-life="{0 if ko else life}">']
    for k in range(6):
        full = k < life and not ko
        parts.append(
            f'<path transform="translate({x + k * step:.1f} {y:.1f}) scale(0.9)" d="{_HEART}" '
            + ('fill="#e03131"' if full else 'fill="none" stroke="#b8ad96" stroke-width="1.1"')
            + "/>"
        )
    parts.append("</g>")
    return "".join(parts)


def _card_icon(x: float, y: float, count: int) -> str:
    """A Bonus card seen from the back, the number of cards in hand written on it."""
    return (
        f'<g class="hand" data-cards="{count}">'
        f'<rect x="{x - 7.5:.1f}" y="{y - 10:.1f}" width="15" height="20" rx="2.5" '
        f'fill="{"#fff" if count else "none"}" stroke="{MUTED if count else TILE_EDGE}" '
        'stroke-width="1.3"/>'
        + _text(
            x,
            y + 4.5,
            str(count),
            size=12,
            weight="bold",
            anchor="middle",
            fill=INK if count else MUTED,
        )
        + "</g>"
    )


def _hand_count(hand: Any) -> int | None:
    if isinstance(hand, bool):
        return None
    if isinstance(hand, int):
        return hand
    if isinstance(hand, list):
        return len(hand)
    return None


def _titan_rows(
    titans: Sequence[tuple[str, Mapping[str, Any]]],
    width: float,
    x: float,
    y: float,
    boards: int,
    pending: str | None,
    words: Mapping[str, str],
) -> tuple[str, float]:
    """A little table: token, name over hearts, space, lap, cards. Returns (svg, height)."""
    cards_x = x + width - 17
    lap_x = cards_x - 50
    space_x = lap_x - 46
    hearts_x = x + 43
    out = [
        _text(hearts_x - 6, y + 10, words["life"], size=10, fill=MUTED),
        _text(lap_x, y + 10, words["lap"], size=10, fill=MUTED, anchor="middle"),
        _text(cards_x, y + 10, words["cards"], size=10, fill=MUTED, anchor="middle"),
    ]
    y += 15
    for number, (titan, info) in enumerate(titans):
        top = y + number * ROW_H
        mid = top + ROW_H / 2
        if titan == pending:
            out.append(
                f'<rect x="{x:.1f}" y="{top + 1:.1f}" width="{width:.1f}" '
                f'height="{ROW_H - 2:.1f}" rx="8" fill="#fff3bf" stroke="{PENDING_RING}" '
                'stroke-width="1.5"/>'
            )
        elif number % 2 == 0:
            out.append(
                f'<rect x="{x:.1f}" y="{top + 1:.1f}" width="{width:.1f}" '
                f'height="{ROW_H - 2:.1f}" rx="8" fill="#ebe3d3"/>'
            )
        ko = bool(info.get("ko"))
        out.append(f'<g class="titan-row" data-titan="{_attr(titan)}">')
        out.append(
            _token(
                _Token(titan, info, words.get(f"mark:{titan}", "")), x + 18, mid, -1, "",
                pending, 12.5, badge=False, kind="chip"
            )
        )
        out.append(_text(x + 37, mid - 3, _display(titan, words), size=13, weight="bold",
                         fill=MUTED if ko else INK))
        if ko:
            out.append(
                f'<rect x="{x + 37:.1f}" y="{mid + 2:.1f}" width="20" height="12" rx="3" '
                f'fill="{TRAP_RED}"/>'
                + _text(
                    x + 47,
                    mid + 11.5,
                    words["ko"],
                    size=9.5,
                    fill="#fff",
                    weight="bold",
                    anchor="middle",
                )
            )
            out.append(_hearts(x + 68, mid + 8, 0, True, step=10.5))
        else:
            out.append(_hearts(hearts_x, mid + 8, _int(info.get("life"), 0), False))
        space = _square(info.get("space"))
        if space is None:
            where = "\u2013"  # not started yet
        else:
            where = f"{COLUMNS[space[0]]}{space[1]}"
            if boards > 1:
                where = f"{_board_index(_int(info.get('lap'), 1), boards)}:{where}"
        out.append(_text(space_x, mid + 4.5, where, size=12, fill=MUTED, anchor="middle"))
        lap = _int(info.get("lap"), 1)
        out.append(
            f'<g class="lap-count" data-lap="{lap}">'
            + _text(lap_x, mid + 5.5, str(lap), size=15, weight="bold", anchor="middle")
            + "</g>"
        )
        count = _hand_count(info.get("hand"))
        if count is not None:
            out.append(_card_icon(cards_x, mid, count))
        out.append("</g>")
    return "".join(out), 15 + len(titans) * ROW_H


def _dice(dice: Any, x: float, y: float, words: Mapping[str, str]) -> tuple[str, float]:
    out = [_text(x, y + 12, words["dice"], size=12, weight="bold")]
    items = [str(d) for d in dice] if isinstance(dice, list) else []
    if not items:
        out.append(_text(x + 54, y + 12, words["none"], size=11, fill=MUTED))
        return "".join(out), 22
    for k, die in enumerate(items):
        fill = COLOUR_FILL.get(die, "#adb5bd")
        dx = x + 54 + k * 27
        out.append(
            f'<g class="die" data-colour="{_attr(die)}">'
            f'<rect x="{dx + 1:.1f}" y="{y + 1.5:.1f}" width="21" height="21" rx="4" '
            'fill="#000" fill-opacity="0.25"/>'
            f'<rect x="{dx:.1f}" y="{y:.1f}" width="21" height="21" rx="4" fill="{fill}" '
            'stroke="#fff" stroke-width="1.5"/>'
            f"<title>{escape(words.get(f'colour:{die}', die))}</title></g>"
        )
    return "".join(out), 26


def _legend(
    circuits: Sequence[Circuit],
    view: Mapping[str, Any],
    x: float,
    y: float,
    width: float,
    lang: str,
) -> tuple[str, float]:
    """Mini hexagons of each feature present on the board(s), the trap and the lap badge."""
    seen: list[str] = []
    for circuit in circuits:
        for name in ALL_SPACES:
            kind = circuit.features.get(name)
            if kind is not None and kind not in seen:
                seen.append(kind)
    order = [LAVA, PIRATES, ICE, FIRE_STATUE, PENTACLE, SUPER_RAMP, MULTI_RAMP, BONUS]
    seen.sort(key=lambda k: order.index(k) if k in order else len(order))
    words = words_in(lang)
    entries: list[tuple[str, str]] = []
    for kind in seen:
        look = SUPER_RAMP_LOOK if kind == SUPER_RAMP else FEATURES.get(kind)
        if look is None:
            continue
        icon = RAMP_ICONS["R"] if kind == SUPER_RAMP else look.icon
        mini = (
            f'<polygon points="{_hexagon(0, 0, 10)}" fill="{look.fill}" stroke="{look.edge}"/>'
            f'<g transform="scale(0.42) translate(0 -2)">{icon}</g>'
        )
        entries.append((mini, translate(lang, look.en)))
    supply = view.get("trap_supply")
    trap_label = words["trap"]
    if isinstance(supply, int) and not isinstance(supply, bool):
        trap_label += f" ({supply})"
    trap = (
        f'<polygon points="{_hexagon(0, 0, 10)}" fill="{TILE}" stroke="{TILE_EDGE}"/>'
        f'<g transform="scale(0.8)">{TRAP_BIG}</g>'
    )
    entries.append((trap, trap_label))
    entries.append((_lap_badge(0, 0, "2", 7.5), words["lap"]))
    column_w = width / 2
    out = ['<g class="legend">']
    for k, (mini, label) in enumerate(entries):
        ex = x + (k % 2) * column_w + 10
        ey = y + (k // 2) * 24 + 10
        out.append(f'<g transform="translate({ex:.1f} {ey:.1f})">{mini}</g>')
        out.append(_text(ex + 16, ey + 4, label, size=11, fill=INK))
    out.append("</g>")
    return "".join(out), ((len(entries) + 1) // 2) * 24


def _status(
    view: Mapping[str, Any], x: float, y: float, words: Mapping[str, str]
) -> tuple[str, float]:
    out = [_text(x, y + 18, f"{words['round']} {view.get('round', '?')}", size=19, weight="bold")]
    if view.get("first_round"):
        out.append(_text(x + 98, y + 17, f"({words['first']})", size=11, fill=MUTED))
    return "".join(out), 28


def _winner_banner(
    view: Mapping[str, Any], x: float, y: float, width: float, words: Mapping[str, str]
) -> tuple[str, float]:
    winner = view.get("winner")
    if not winner:
        return "", 0.0
    names = [str(winner)]
    names += [str(w) for w in view.get("winners") or [] if w and str(w) not in names]
    label = f"{words['winner']}: " + " & ".join(_display(n, words) for n in names)
    crown = "M-11 5 L-11 -5 L-5.5 0 L0 -8 L5.5 0 L11 -5 L11 5Z"
    cx = x + width / 2
    out = (
        f'<g class="winner" data-winner="{_attr(winner)}">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="38" rx="10" fill="{GOLD}" '
        'stroke="#c77700" stroke-width="2"/>'
        f'<path transform="translate({x + 26:.1f} {y + 20:.1f})" d="{crown}" fill="#fff" '
        'stroke="#c77700" stroke-width="1.2" stroke-linejoin="round"/>'
        f'<path transform="translate({x + width - 26:.1f} {y + 20:.1f})" d="{crown}" '
        'fill="#fff" stroke="#c77700" stroke-width="1.2" stroke-linejoin="round"/>'
        + _text(cx, y + 25.5, label, size=18, weight="bold", fill="#3b2500", anchor="middle")
        + "</g>"
    )
    return out, 46.0


# --- entry points --------------------------------------------------------------------------------


def _pending_titan(view: Mapping[str, Any]) -> str | None:
    if view.get("winner"):
        return None
    pending = view.get("pending")
    if isinstance(pending, Mapping) and pending.get("titan"):
        return str(pending["titan"])
    return None


def _accessible_title(
    view: Mapping[str, Any],
    circuits: Sequence[Circuit],
    titans: Sequence[tuple[str, Mapping[str, Any]]],
    title: str | None,
    words: Mapping[str, str],
) -> str:
    head = title or f"{words['title']}: " + " / ".join(c.title for c in circuits)
    parts = [f"{head}, {words['round']} {view.get('round', '?')}"]
    boards = max(len(circuits), 1)
    for name, info in titans:
        space = info.get("space")
        where = words["waiting"] if space is None else str(space).upper()
        if space is not None and boards > 1:
            where = f"{_board_index(_int(info.get('lap'), 1), boards)}:{where}"
        bits = [
            _display(name, words),
            where,
            f"{words['lap']} {_int(info.get('lap'), 1)}",
            words["ko"] if info.get("ko") else f"{words['life']} {_int(info.get('life'), 0)}",
        ]
        parts.append(" ".join(bits))
    if view.get("winner"):
        parts.append(f"{words['winner']}: {_display(str(view.get('winner')), words)}")
    return "; ".join(parts)


def board_svg(
    view: dict[str, Any],
    circuits: list[Circuit],
    *,
    highlight: list[str] | None = None,
    title: str | None = None,
    lang: str = "en",
) -> str:
    """The race in ``view`` as one self-contained SVG document (a string).

    ``circuits`` holds one circuit, or three for Grand Slam (boards 0-2 side by side, a Titan on
    board ``(lap - 1) mod 3``, traps given as ``"b:SPACE"``). ``highlight`` names spaces to
    outline (``"C5"``, or ``"1:C5"`` for a Grand Slam board; a bare name outlines it on every
    board). ``title`` heads the picture and is its accessible title. ``lang`` is any language
    of :mod:`app.i18n` (English otherwise).
    """
    lang = language(lang)
    words = words_in(lang)
    boards = max(len(circuits), 1)
    titans = _titans(view)
    pending = _pending_titan(view)
    traps = _trap_squares(view, boards)
    marked: list[set[tuple[int, int]]] = [set() for _ in range(boards)]
    for item in highlight or []:
        name, targets = str(item), list(range(boards))
        if ":" in name:
            head, _, name = name.partition(":")
            board = _int(head.strip(), -1)
            targets = [board] if 0 <= board < boards else []
        square = _square(name)
        if square is not None:
            for board in targets:
                marked[board].add(square)
    tokens: list[dict[tuple[int, int], list[_Token]]] = [{} for _ in range(boards)]
    for name, info in titans:
        square = _square(info.get("space"))
        if square is None:
            continue
        board = _board_index(_int(info.get("lap"), 1), boards)
        mark = words.get(f"mark:{name}", "")
        tokens[board].setdefault(square, []).append(_Token(name, info, mark))

    boards_w = boards * BOARD_WIDTH + (boards - 1) * GUTTER
    side = boards == 1
    width = MARGIN * 2 + boards_w + (GUTTER + PANEL_W if side else 0)
    body: list[str] = []
    y = MARGIN
    if title:
        body.append(_text(MARGIN, y + 18, title, size=18, weight="bold"))
        y += 30
    banner, banner_h = _winner_banner(view, MARGIN, y, width - 2 * MARGIN, words)
    body.append(banner)
    y += banner_h
    top = y
    for index, circuit in enumerate(circuits):
        ox, oy = _board_origin(index, boards)
        if boards > 1:
            heading = f"{words['board']} {index}: {circuit.title}"
            laps = [str(lap) for lap in range(1, 4) if _board_index(lap, boards) == index]
            sub = ",".join(laps)
            tip = f"{words['lap']} {sub}"
        else:
            heading, sub, tip = circuit.title, "", ""
        body.append(
            _board_svg(
                circuit,
                index,
                boards,
                heading,
                sub,
                tip,
                tokens[index],
                traps[index],
                marked[index],
                pending,
                ox,
                oy + top,
            )
        )
    boards_bottom = top + BOARD_HEIGHT

    if side:
        px, py = MARGIN + boards_w + GUTTER, top + 4
        panel_w = PANEL_W
        status, h = _status(view, px, py, words)
        body.append(status)
        py += h + 6
        rows, h = _titan_rows(titans, panel_w, px, py, boards, pending, words)
        body.append(rows)
        py += h + 14
        dice, h = _dice(view.get("dice"), px, py, words)
        body.append(dice)
        py += h + 16
        body.append(
            f'<line x1="{px}" y1="{py - 8:.1f}" x2="{px + panel_w}" y2="{py - 8:.1f}" '
            f'stroke="{TILE_EDGE}"/>'
        )
        legend, h = _legend(circuits, view, px, py, panel_w, lang)
        body.append(legend)
        bottom = max(boards_bottom, py + h) + MARGIN
    else:
        py = boards_bottom + 8
        px = MARGIN
        info_w = 300.0
        table_w = width - 2 * MARGIN - info_w - GUTTER * 2
        # the Titans in two side-by-side tables, then the round, dice and legend on the right
        half = (len(titans) + 1) // 2
        col_w = (table_w - GUTTER) / 2
        left, h1 = _titan_rows(titans[:half], col_w, px, py, boards, pending, words)
        right, h2 = _titan_rows(
            titans[half:], col_w, px + col_w + GUTTER, py, boards, pending, words
        )
        body.extend([left, right])
        ix = MARGIN + table_w + GUTTER * 2
        iy = py
        status, h = _status(view, ix, iy, words)
        body.append(status)
        iy += h + 6
        dice, h = _dice(view.get("dice"), ix, iy, words)
        body.append(dice)
        iy += h + 14
        legend, h = _legend(circuits, view, ix, iy, info_w, lang)
        body.append(legend)
        bottom = max(py + max(h1, h2), iy + h) + MARGIN
    height = math.ceil(bottom)
    width_i = math.ceil(width)
    label = _accessible_title(view, circuits, titans, title, words)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_i}" height="{height}" '
        f'viewBox="0 0 {width_i} {height}" role="img" '
        f'lang="{lang}" data-board-top="{top:.1f}" data-boards="{boards}" '
        f'font-family="{_attr(FONT)}">'
        f"<title>{escape(label)}</title>"
        f'<rect width="{width_i}" height="{height}" fill="{BACKGROUND}"/>'
        + "".join(body)
        + "</svg>"
    )


# --- PNG -----------------------------------------------------------------------------------------
