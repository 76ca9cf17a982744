"""The Great Race board picture: a state view drawn as a self-contained SVG.

The input is the JSON state view of ``docs/great-race-engine.md`` (a plain mapping), in any of
its forms (full, a player's, a spectator's), and the board data of
:mod:`app.games.greatrace.engine.board`.

- The Africa map: pointy-top hexagons, even rows half a space to the right, the column letters
  ``A``-``K`` above it (placed over the odd rows) and the row numbers ``1``-``15`` on its left,
  the sea around it. Blank terrain is ochre, risk-zone spaces charcoal. Space names are written
  only on ``highlight`` spaces (where an option leads), on a pink tag: every label costs the
  mail's PNG render time, and the edges carry the coordinates.
- Cities are terracotta hexagons with their name on a pale label and as many little cards as are
  drawn on entering; the two purple cities are tagged ``start`` and ``finish``.
- Transport lines run city to city, sea lines dashed (round the coast over the sea), air lines
  dotted, each with its cost on a pill placed where it hides no tile if it can.
- A placed tile is a cream hexagon inside its space (so a risk zone shows as a dark rim): its
  petrol cost large with a fuel drop, a red dot per point of damage, DANGER as a yellow
  triangle and STOP as a red octagon.
- Each crew's vehicle is a little car in its colour with the crew's initial, several side by side
  on one space; a crew owing the pending decision has an orange ring; ``highlight`` spaces get a
  thick pink outline.
- The side panel: turn, phase and whom the game waits for, the turn order, one card per crew
  (space, money, petrol/engine/chassis gauges as bars of 10/5/5, hand size, dashboard or
  planning state, finishing place), the progression track with its token stacks, the tiles
  waiting to be placed, the market, the bag and deck counts, a legend, and at the end a winner
  banner with the prestige table.

Edges are crisp where that looks as good (:data:`CRISP`), and damage and city cards are dots and
little cards rather than digits, to keep the PNG quick to render for mail.
Hands are only ever drawn as a count, and during planning nobody's plan is drawn (only whether it
is in), so any view can be shown to anyone it was made for. Every word drawn comes from
:data:`WORDS`. A malformed field is drawn as best it can be rather than raising.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final
from xml.sax.saxutils import escape

from app.games.greatrace.engine.board import (
    CITIES,
    CITY,
    CITY_AT,
    COLUMNS,
    LINES,
    RISK,
    ROWS,
    SPACES,
    City,
    Line,
    col_row,
    parse_space,
)
from app.games.greatrace.engine.pieces import CREW_COLOUR, MAX_CHASSIS, MAX_ENGINE, MAX_PETROL, Tile
from app.i18n import N_, NC_, language, translate

__all__ = ["WORDS", "board_svg", "crew_colour", "parse_tile", "word"]

# --- words ---------------------------------------------------------------------------------------

WORDS: Final[dict[str, tuple[str | None, str]]] = {
    # Translators: the picture's heading (the pages and mails name the game in English).
    "title": ("board picture", NC_("board picture", "The Great Race")),
    "turn": (None, N_("turn")),
    "phase.bivouac": (None, N_("bivouac")),
    "phase.planning": (None, N_("planning")),
    "phase.convoy": (None, N_("convoy")),
    "phase.over": (None, N_("game over")),
    "order": (None, N_("order")),
    "waiting": (None, N_("waiting for")),
    # Translators: the pending decision named in a word or two, after "waiting for: crews".
    "pending.take": ("pending decision", NC_("pending decision", "take a card")),
    "pending.discard": ("pending decision", NC_("pending decision", "discard")),
    "pending.plan": ("pending decision", NC_("pending decision", "plan")),
    "pending.turn": ("pending decision", NC_("pending decision", "sequence")),
    "pending.place": ("pending decision", NC_("pending decision", "place tiles")),
    "pending.drive": ("pending decision", NC_("pending decision", "drive")),
    "pending.repair": ("pending decision", NC_("pending decision", "repair")),
    "pending.avoid": ("pending decision", NC_("pending decision", "danger")),
    "pending.damage": ("pending decision", NC_("pending decision", "damage")),
    "pending.keep": ("pending decision", NC_("pending decision", "keep cards")),
    # Translators: a crew named by its nationality on the board picture ("the French").
    "crew.french": ("great race crew", NC_("great race crew", "French")),
    "crew.belgian": ("great race crew", NC_("great race crew", "Belgian")),
    "crew.italian": ("great race crew", NC_("great race crew", "Italian")),
    "crew.english": ("great race crew", NC_("great race crew", "English")),
    "petrol": (None, N_("petrol")),
    "engine": ("great race gauge", NC_("great race gauge", "engine")),
    "chassis": ("great race gauge", NC_("great race gauge", "chassis")),
    "cards": (None, N_("cards")),
    "planned": (None, N_("planned")),
    "planning": (None, N_("planning…")),
    "passed": (None, N_("passed")),
    "leader": (None, N_("leader used")),
    # Translators: a crew that has reached the finish city (followed by its place).
    "finished": ("great race crew", NC_("great race crew", "finished")),
    "track": (None, N_("progression")),
    "progress": (None, N_("prog.")),
    "bag": (None, N_("tiles in bag")),
    "deck": (None, N_("cards in deck")),
    "discard": (None, N_("discarded")),
    "market": (None, N_("market")),
    "drawn": (None, N_("to place")),
    "winner": (None, N_("winner")),
    "money": (None, N_("money")),
    # Translators: the columns of the final score table.
    "score.place": ("great race score", NC_("great race score", "place")),
    "score.engine": ("great race score", NC_("great race score", "engine")),
    "score.chassis": ("great race score", NC_("great race score", "chassis")),
    "score.money": ("great race score", NC_("great race score", "money")),
    "score.total": ("great race score", NC_("great race score", "total")),
    # Translators: the tags on the start and finish cities of the map.
    "start": ("great race city", NC_("great race city", "start")),
    "finish": ("great race city", NC_("great race city", "finish")),
    "legend.terrain": ("map legend", NC_("map legend", "terrain")),
    "legend.risk": ("map legend", NC_("map legend", "risk zone: +1 petrol")),
    "legend.tile": ("map legend", NC_("map legend", "tile: petrol, damage")),
    "legend.danger": ("map legend", NC_("map legend", "danger")),
    "legend.stop": ("map legend", NC_("map legend", "stop")),
    "legend.city": ("map legend", NC_("map legend", "city: cards drawn")),
    "legend.sea": ("map legend", NC_("map legend", "sea line")),
    "legend.air": ("map legend", NC_("map legend", "air line")),
    "card.trail-hunter": ("great race card", NC_("great race card", "Trail Hunter")),
    "card.financial": ("great race card", NC_("great race card", "Financial")),
    "card.jerrycan": ("great race card", NC_("great race card", "Jerrycan")),
    "card.refueling-station": ("great race card", NC_("great race card", "Refueling Station")),
    "card.transport": ("great race card", NC_("great race card", "Transport")),
    "card.spare-parts": ("great race card", NC_("great race card", "Spare Parts")),
    "card.toolbox": ("great race card", NC_("great race card", "Toolbox")),
    "card.guide": ("great race card", NC_("great race card", "Guide")),
    "card.militia": ("great race card", NC_("great race card", "Militia")),
    "card.driver": ("great race card", NC_("great race card", "Driver")),
    "card.cartographer": ("great race card", NC_("great race card", "Cartographer")),
    "card.saboteur": ("great race card", NC_("great race card", "Saboteur")),
    "card.tracker": ("great race card", NC_("great race card", "Tracker")),
    "card.con-artist": ("great race card", NC_("great race card", "Con Artist")),
    "card.repairman": ("great race card", NC_("great race card", "Repairman")),
    "card.topographer": ("great race card", NC_("great race card", "Topographer")),
}
"""Every word the picture (and :mod:`app.games.greatrace.textboard`) draws, by key: its gettext
context and its English message id, translated by :func:`word` through :mod:`app.i18n`. A
context tells apart a word the catalogue also holds with another sense ("drive" as a pending
decision, not as what a player is waited for to do); the card names are the ones the pages and
mails use."""


def word(lang: str, key: str) -> str:
    """The word ``key`` in ``lang`` (English for a language without a catalogue; the key's tail
    for an unknown key)."""
    found = WORDS.get(key)
    if found is None:
        return key.rpartition(".")[2]
    context, english = found
    return translate(lang, english, context=context)


def crew_name(lang: str, crew: str) -> str:
    return word(lang, f"crew.{crew}") if f"crew.{crew}" in WORDS else crew.capitalize()


# --- crews and tiles ----------------------------------------------------------------------------

UNKNOWN_CREW: Final = "#868e96"


def crew_colour(crew: str) -> str:
    """The crew's colour (``#rrggbb``), grey for a crew the game does not know."""
    return CREW_COLOUR.get(crew, UNKNOWN_CREW)


def _ink_on(fill: str) -> str:
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


FONT: Final = (
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', 'DejaVu Sans', "
    "'Liberation Sans', 'Noto Sans', Arial, sans-serif"
)

BACKGROUND: Final = "#f6f1e7"
INK: Final = "#2b2a33"
MUTED: Final = "#7a7163"
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
    return _grid_point(col, row)


def _grid_point(col: float, row: float) -> tuple[float, float]:
    shift = HEX_W / 2 if round(row) % 2 == 0 else 0.0
    return MAP_X + HEX_W / 2 + col * HEX_W + shift, MAP_Y + R + (row - 1) * ROW_STEP


_UNIT_HEX: Final = tuple(
    (math.cos(math.radians(60 * k - 90)), math.sin(math.radians(60 * k - 90))) for k in range(6)
)


def _hexagon(cx: float, cy: float, radius: float) -> str:
    return " ".join(f"{cx + radius * dx:.1f},{cy + radius * dy:.1f}" for dx, dy in _UNIT_HEX)


# --- small helpers -------------------------------------------------------------------------------


_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_chars(text: str) -> str:
    """``text`` without the characters XML cannot hold (a malformed view may carry any)."""
    return _NOT_XML.sub("\ufffd", text)


def _attr(value: object) -> str:
    return escape(_xml_chars(str(value)), {'"': "&quot;"})


def _text(
    x: float,
    y: float,
    content: str,
    *,
    size: float,
    fill: str = INK,
    bold: bool = False,
    anchor: str = "start",
    extra: str = "",
) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{fill}"{weight} '
        f'text-anchor="{anchor}"{extra}>{escape(_xml_chars(content))}</text>'
    )


def _int(value: object, default: int | None = None) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _strings(value: object) -> list[str]:
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str)]


def _space(value: object) -> str | None:
    return parse_space(value) if isinstance(value, str) else None


def _crews(view: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The crews of the view in seat order (then by name), each with its mapping."""
    crews = _mapping(view.get("crews"))
    found = [(str(name), _mapping(info)) for name, info in crews.items()]
    return sorted(found, key=lambda item: (_int(item[1].get("seat"), 99), item[0]))


def _pending_crews(view: Mapping[str, Any]) -> list[str]:
    if view.get("phase") == "over" or view.get("winner"):
        return []
    pending = _mapping(view.get("pending"))
    crews = _strings(pending.get("crews"))
    crew = pending.get("crew")
    if not crews and isinstance(crew, str):
        crews = [crew]
    return crews


def _phase(view: Mapping[str, Any]) -> str:
    """The view's phase, or an empty string when it names none."""
    phase = view.get("phase")
    return phase if isinstance(phase, str) else ""


def _hand_count(hand: object) -> int | None:
    """The number of cards in a hand given whole (a list) or as a count; never its cards."""
    if isinstance(hand, list | tuple):
        return len(hand)
    return _int(hand)


def _start(view: Mapping[str, Any]) -> str:
    start = view.get("start")
    return start if isinstance(start, str) and start in CITY else "alger"


def _finish(view: Mapping[str, Any]) -> str:
    finish = view.get("finish")
    if isinstance(finish, str) and finish in CITY:
        return finish
    return "le-cap" if _start(view) == "alger" else "alger"


# --- the map -------------------------------------------------------------------------------------


def _sea_and_labels() -> str:
    out = [
        f'<rect x="{MAP_X - SEA_RIM:.1f}" y="{MAP_Y - SEA_RIM:.1f}" '
        f'width="{MAP_W + 2 * SEA_RIM:.1f}" height="{MAP_H + 2 * SEA_RIM:.1f}" rx="14" '
        f'fill="{SEA}" stroke="{SEA_EDGE}" stroke-width="2"/>'
    ]
    for col, letter in enumerate(COLUMNS):
        x, _ = _grid_point(col, 1)
        out.append(_text(x, MAP_Y - 10, letter, size=12, fill=MUTED, bold=True, anchor="middle"))
    for row in range(1, ROWS + 1):
        _, y = _grid_point(0, row)
        out.append(_text(MAP_X - 8, y + 4, str(row), size=11, fill=MUTED, bold=True, anchor="end"))
    return "".join(out)


def _land() -> str:
    """One shape under every space, in the grid's colour: it shows in the gaps between them."""
    rings = " ".join(f"M{_hexagon(*centre(space), R + 0.6)}Z" for space in SPACES)
    return f'<path d="{rings}" fill="{TERRAIN_EDGE}" {CRISP}/>'


def _terrain_space(space: str, tile: Tile | None, code: str) -> str:
    cx, cy = centre(space)
    risk = space in RISK
    fill = RISK_FILL if risk else TERRAIN
    kind = "risk" if risk else "terrain"
    out = [
        f'<g class="space {kind}" data-space="{space}"'
        + (f' data-tile="{_attr(code)}"' if tile else "")
        + ">",
        _space_hexagon(cx, cy, fill),
    ]
    if tile is not None:
        out.append(_tile(cx, cy, tile))
    out.append("</g>")
    return "".join(out)


def _space_hexagon(cx: float, cy: float, fill: str) -> str:
    """A space's hexagon: flat, with crisp edges and a gap to its neighbours for the grid.

    Anti-aliased edges on the 114 hexagons made the PNG render twice as slow (the encoder's
    cost follows the picture's detail), and the crisp gap reads just as well as a stroke.
    """
    return f'<polygon points="{_hexagon(cx, cy, R - 1.2)}" fill="{fill}" {CRISP}/>'


_DROP: Final = "M0 -6.5 C3 -2.5 4.6 0 4.6 2.2 A4.6 4.6 0 0 1 -4.6 2.2 C-4.6 0 -3 -2.5 0 -6.5Z"


def _danger_icon(x: float, y: float, scale: float = 1.0) -> str:
    return (
        f'<g transform="translate({x:.1f} {y:.1f}) scale({scale})">'
        f'<path d="M0 -6.8 L7.2 5.6 L-7.2 5.6Z" fill="{DANGER_YELLOW}" stroke="#1a1a1a" '
        'stroke-width="1.3" stroke-linejoin="round"/>'
        '<rect x="-0.9" y="-3" width="1.8" height="4.6" fill="#1a1a1a"/>'
        '<circle cx="0" cy="3.4" r="1" fill="#1a1a1a"/></g>'
    )


def _stop_icon(x: float, y: float, scale: float = 1.0) -> str:
    points = " ".join(
        f"{6.6 * math.cos(math.radians(22.5 + 45 * k)):.1f},"
        f"{6.6 * math.sin(math.radians(22.5 + 45 * k)):.1f}"
        for k in range(8)
    )
    return (
        f'<g transform="translate({x:.1f} {y:.1f}) scale({scale})">'
        f'<polygon points="{points}" fill="{STOP_RED}" stroke="#fff" stroke-width="1"/>'
        '<rect x="-4" y="-1.1" width="8" height="2.2" fill="#fff"/></g>'
    )


def _damage_pips(x: float, y: float, damage: int, radius: float = 4.2) -> str:
    """One red dot per point of damage, in a column centred on ``y`` (no text: cheaper to
    render, and as quick to read for the tiles' 1 or 2)."""
    step = radius * 2 + 1.2
    top = y - (damage - 1) * step / 2
    return "".join(
        f'<circle cx="{x:.1f}" cy="{top + k * step:.1f}" r="{radius}" fill="{DAMAGE_RED}"/>'
        for k in range(max(0, min(damage, 4)))
    )


_NUMERALS: Final[dict[int, str]] = {
    1: "M-4.4 -5.2 L0.8 -9 L0.8 9",
    2: "M-5 -4.6 C-5 -7.6 -2.6 -9 0.2 -9 C3.2 -9 5.2 -7.2 5.2 -4.5 C5.2 -1.4 2.4 0.8 -5.2 9 L5.6 9",
    3: "M-5.2 -6.6 C-3.8 -8.4 -1.8 -9 0.4 -9 C3.4 -9 5.2 -7.3 5.2 -4.9 C5.2 -2.2 3 -0.5 -0.6 "
    "-0.5 C3.2 -0.5 5.6 1.2 5.6 4.1 C5.6 7.2 3.2 9 0 9 C-2.4 9 -4.4 8.1 -5.6 6.4",
}
"""The petrol costs a tile can show (1 to 3), drawn as strokes 18 units tall around (0, 0).

Every ``<text>`` costs the PNG renderer about 0.2 ms (it opens and maps the font file twice),
and a race has up to 60 tiles; three hand-drawn numerals cost next to nothing."""


def _numeral(x: float, y: float, value: int, scale: float = 1.0) -> str:
    """``value`` large and bold, centred on (x, y): a drawn numeral, or text for another value."""
    path = _NUMERALS.get(value)
    if path is None:
        size = round(24 * scale, 1)
        return _text(
            x, y + 8.7 * scale, str(value), size=size, fill=TILE_INK, bold=True, anchor="middle"
        )
    return (
        f'<path transform="translate({x:.1f} {y:.1f}) scale({scale})" d="{path}" fill="none" '
        f'stroke="{TILE_INK}" stroke-width="3.8" stroke-linecap="round" '
        'stroke-linejoin="round"/>'
    )


def _tile(cx: float, cy: float, tile: Tile) -> str:
    """A tile inside its space (the space's colour shows as a rim): petrol large with a drop,
    a red dot per point of damage, DANGER and STOP on top."""
    out = [
        f'<polygon points="{_hexagon(cx, cy, R - 5.5)}" fill="{TILE_FILL}" {CRISP}/>',
        f'<path transform="translate({cx - 11.5:.1f} {cy + 4:.1f}) scale(0.8)" d="{_DROP}" '
        f'fill="{PETROL_GREEN}"/>',
        _numeral(cx + 1, cy + 2.5, tile.petrol),
    ]
    if tile.damage:
        out.append(_damage_pips(cx + 14, cy + 3, tile.damage))
    if tile.danger and tile.stop:
        out.append(_danger_icon(cx - 7, cy - 13.5, 0.85) + _stop_icon(cx + 7, cy - 13.5, 0.85))
    elif tile.danger:
        out.append(_danger_icon(cx, cy - 13.5, 0.9))
    elif tile.stop:
        out.append(_stop_icon(cx, cy - 13.5, 0.9))
    return "".join(out)


def _unknown_tile(space: str, code: str) -> str:
    """A tile whose code is not understood: a grey tile with a question mark."""
    cx, cy = centre(space)
    return (
        f'<g class="space tile-unknown" data-space="{space}" data-tile="{_attr(code)}">'
        f'<polygon points="{_hexagon(cx, cy, R - 0.8)}" fill="{TERRAIN}" stroke="{TERRAIN_EDGE}"/>'
        f'<polygon points="{_hexagon(cx, cy, R - 6)}" fill="#dee2e6" stroke="#868e96"/>'
        + _text(cx, cy + 7, "?", size=18, fill="#495057", bold=True, anchor="middle")
        + "</g>"
    )


def _city_space(city: City, role: str, lang: str) -> str:
    """A city hexagon: little houses, the cards drawn on entering as little cards, its name on a
    label, and the start or finish tag on a purple city."""
    cx, cy = centre(city.space)
    fill, edge = (PURPLE_FILL, PURPLE_EDGE) if city.purple else (CITY_FILL, CITY_EDGE)
    out = [
        f'<g class="city" data-space="{city.space}" data-city="{city.slug}">',
        _space_hexagon(cx, cy, fill),
        # three little houses
        f'<g transform="translate({cx:.1f} {cy - 7:.1f})" fill="#fff" {CRISP}>'
        '<rect x="-10" y="-3" width="6" height="8"/><rect x="-3" y="-7" width="6" height="12"/>'
        '<rect x="4" y="-1" width="6" height="6"/></g>',
    ]
    if city.cards:
        out.append(_card_pips(cx + 13, cy - 13, city.cards))
    out.append(_city_name(cx, cy, city.name, edge))
    if role:
        tag = word(lang, role)
        tag_w = len(tag) * 5.4 + 8
        out.append(
            f'<rect x="{cx - tag_w / 2:.1f}" y="{cy + 18:.1f}" width="{tag_w:.1f}" height="11" '
            f'rx="5.5" fill="{PURPLE_EDGE}"/>'
            + _text(cx, cy + 26.5, tag.upper(), size=8, fill="#fff", bold=True, anchor="middle")
        )
    out.append("</g>")
    return "".join(out)


CITY_NAME_W: Final = 54.0
"""The widest a city's name is written: wider names are squeezed to it, so that no name runs
into the next space's costs."""


def _city_name(cx: float, cy: float, name: str, edge: str) -> str:
    size = 10.0
    estimate = len(name) * size * 0.62
    fit = ""
    if estimate > CITY_NAME_W:
        fit = f' textLength="{CITY_NAME_W:.0f}" lengthAdjust="spacingAndGlyphs"'
    width = min(estimate, CITY_NAME_W) + 7
    return (
        f'<rect x="{cx - width / 2:.1f}" y="{cy + 4:.1f}" width="{width:.1f}" height="13.5" '
        f'rx="4" fill="{LABEL_FILL}" stroke="{edge}" stroke-width="1"/>'
        + _text(cx, cy + 14.2, name, size=size, fill=INK, bold=True, anchor="middle", extra=fit)
    )


def _card_pips(x: float, y: float, count: int) -> str:
    """``count`` little cards fanned around (x, y): the cards drawn on entering a city."""
    count = max(0, min(count, 4))
    out = []
    for k in range(count):
        angle = (k - (count - 1) / 2) * 16
        out.append(
            f'<rect x="-3.6" y="-5.2" width="7.2" height="10.4" rx="1.2" fill="#fff" '
            f'stroke="{INK}" stroke-width="0.9" '
            f'transform="translate({x + (k - (count - 1) / 2) * 4.2:.1f} {y:.1f}) '
            f'rotate({angle:.0f})"/>'
        )
    return "".join(out)


def _bezier(points: tuple[Point, Point, Point, Point], t: float) -> Point:
    a, c1, c2, b = points
    u = 1 - t
    weights = (u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t)
    return (
        sum(w * p[0] for w, p in zip(weights, (a, c1, c2, b), strict=True)),
        sum(w * p[1] for w, p in zip(weights, (a, c1, c2, b), strict=True)),
    )


def _nearest_space(x: float, y: float) -> str | None:
    row = round((y - MAP_Y - R) / ROW_STEP) + 1
    best: tuple[float, str] | None = None
    for r in (row - 1, row, row + 1):
        if not 1 <= r <= ROWS:
            continue
        for col in range(len(COLUMNS)):
            name = f"{COLUMNS[col]}{r}"
            px, py = _grid_point(col, r)
            d = math.hypot(px - x, py - y)
            if d <= R and (best is None or d < best[0]):
                best = (d, name)
    return best[1] if best else None


def _line_label_at(points: tuple[Point, Point, Point, Point], busy: set[str]) -> Point:
    """The point of the line for its cost label: the middle, or the point nearest to it that
    covers no tile, city, vehicle or highlight (the sea where the line crosses it)."""
    for t in (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73):
        x, y = _bezier(points, t)
        space = _nearest_space(x, y)
        if space is None or space not in busy:
            return x, y
    return _bezier(points, 0.5)


def _route(line: Line) -> tuple[Point, Point, Point, Point]:
    a, b = centre(CITY[line.a].space), centre(CITY[line.b].space)
    controls = LINE_ROUTE.get((line.a, line.b))
    if controls is None:
        return a, a, b, b
    c1, c2 = (
        (MAP_X + HEX_W / 2 + col * HEX_W, MAP_Y + R + (row - 1) * ROW_STEP) for col, row in controls
    )
    return a, c1, c2, b


def _transport_lines(busy: set[str]) -> tuple[str, str]:
    """The lines (drawn under the tiles and cities) and their cost pills (drawn over the map)."""
    lines: list[str] = []
    pills: list[str] = []
    for line in LINES:
        points = _route(line)
        a, c1, c2, b = points
        dash = "9 6" if line.kind == "sea" else "1.5 5"
        cap = "butt" if line.kind == "sea" else "round"
        path = (
            f"M{a[0]:.1f} {a[1]:.1f} C{c1[0]:.1f} {c1[1]:.1f} {c2[0]:.1f} {c2[1]:.1f} "
            f"{b[0]:.1f} {b[1]:.1f}"
        )
        lines.append(
            f'<g class="line {line.kind}" data-line="{line.a}-{line.b}" {CRISP}>'
            f'<path d="{path}" fill="none" stroke="{LINE_INK}" stroke-width="3" '
            f'stroke-dasharray="{dash}" stroke-linecap="{cap}"/></g>'
        )
        x, y = _line_label_at(points, busy)
        pills.append(_line_pill(line, x, y))
    return "".join(lines), "".join(pills)


def _line_pill(line: Line, x: float, y: float) -> str:
    label = f"{line.cost}F"
    width = len(label) * 6.6 + 20
    icon = (
        _ship_icon(x - width / 2 + 9, y)
        if line.kind == "sea"
        else _plane_icon(x - width / 2 + 9, y)
    )
    return (
        f'<g class="line-cost" data-line="{line.a}-{line.b}">'
        f'<rect x="{x - width / 2:.1f}" y="{y - 8:.1f}" width="{width:.1f}" height="16" '
        f'rx="8" fill="#fff" stroke="{LINE_INK}" stroke-width="1.3"/>'
        + icon
        + _text(x + 6, y + 4.2, label, size=11, fill=LINE_INK, bold=True, anchor="middle")
        + "</g>"
    )


def _ship_icon(x: float, y: float) -> str:
    return (
        f'<path transform="translate({x:.1f} {y:.1f})" d="M-5 0 L5 0 L3 4 L-3 4Z M-1 -5 L-1 0 '
        f'L3 0Z" fill="{LINE_INK}"/>'
    )


def _plane_icon(x: float, y: float) -> str:
    return (
        f'<path transform="translate({x:.1f} {y:.1f}) rotate(45)" d="M0 -6 L1 -1 L6 1 L6 2 '
        f"L1 1 L0.6 4 L2.5 5.5 L2.5 6.2 L0 5.5 L-2.5 6.2 L-2.5 5.5 L-0.6 4 L-1 1 L-6 2 L-6 1 "
        f'L-1 -1Z" fill="{LINE_INK}"/>'
    )


# --- vehicles ------------------------------------------------------------------------------------


def _car(x: float, y: float, crew: str, scale: float, ringed: bool, space: str = "") -> str:
    """A little car in the crew's colour, ringed when the crew owes a move: a vehicle on the
    map (``space`` given) with the crew's initial, or the crew's chip in the panel (beside the
    crew's name, so without the initial)."""
    fill = crew_colour(crew)
    ink = _ink_on(fill)
    ring = (
        f'<circle class="pending" cx="0" cy="0" r="15" fill="#fff" fill-opacity="0.35" '
        f'stroke="{PENDING_RING}" stroke-width="3"/>'
        if ringed
        else ""
    )
    return (
        f'<g class="{"vehicle" if space else "chip"}" data-crew="{_attr(crew)}" '
        + (f'data-space="{space}" ' if space else "")
        + f'transform="translate({x:.1f} {y:.1f}) scale({scale})" '
        f'shape-rendering="geometricPrecision">{ring}'
        '<circle cx="-6.5" cy="5.5" r="3.3" fill="#1a1a1a"/>'
        '<circle cx="6.5" cy="5.5" r="3.3" fill="#1a1a1a"/>'
        f'<path d="M-12 4.5 L-12 -1 Q-12 -3 -9.5 -3 L-6 -3 L-3 -8.5 L5 -8.5 L8 -3 L10 -3 '
        f'Q12 -3 12 -1 L12 4.5Z" fill="{fill}" stroke="#1a1a1a" stroke-width="1.3" '
        'stroke-linejoin="round"/>'
        '<path d="M-1.5 -7 L4 -7 L6 -3.5 L-3.2 -3.5Z" fill="#dbeafe" fill-opacity="0.9"/>'
        + (
            _text(0, 3.6, crew[:1].upper(), size=7.5, fill=ink, bold=True, anchor="middle")
            if space
            else ""
        )
        + "</g>"
    )


_SLOTS: Final[dict[int, tuple[tuple[float, float], ...]]] = {
    1: ((0.0, -13.0),),
    2: ((-10.5, -13.0), (10.5, -13.0)),
    3: ((-10.5, -13.0), (10.5, -13.0), (0.0, 0.0)),
    4: ((-10.5, -13.0), (10.5, -13.0), (-10.5, 0.0), (10.5, 0.0)),
}


def _vehicles(placed: Mapping[str, list[str]], ringed: set[str]) -> str:
    out: list[str] = []
    for space, crews in placed.items():
        cx, cy = centre(space)
        shown = crews[:4]
        scale = 1.0 if len(shown) == 1 else 0.85
        for (dx, dy), crew in zip(_SLOTS[len(shown)], shown, strict=True):
            out.append(_car(cx + dx, cy + dy, crew, scale, crew in ringed, space))
        if len(crews) > 4:  # only in a malformed view: say how many more
            out.append(_text(cx, cy + 20, f"+{len(crews) - 4}", size=9, bold=True, anchor="middle"))
    return "".join(out)


def _placed_vehicles(crews: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    placed: dict[str, list[str]] = {}
    for name, info in crews:
        space = _space(info.get("space"))
        if space is not None:
            placed.setdefault(space, []).append(name)
    return placed


def _highlights(spaces: Iterable[str]) -> str:
    """A pink outline on each space, and its name on a pink tag at its foot (the map writes no
    other space names: the edges carry the columns and rows, and every label costs render
    time in the mail's PNG)."""
    out = []
    for space in dict.fromkeys(spaces):
        cx, cy = centre(space)
        width = len(space) * 7.2 + 8
        foot = cy + (18.5 if space in CITY_AT else 15)  # a city's name is where a tile's foot is
        out.append(
            f'<g class="highlight" data-space="{space}" {CRISP}>'
            f'<polygon points="{_hexagon(cx, cy, R - 2.5)}" fill="{HIGHLIGHT}" fill-opacity="0.14" '
            f'stroke="{HIGHLIGHT}" stroke-width="4" stroke-linejoin="round"/>'
            f'<rect x="{cx - width / 2:.1f}" y="{foot:.1f}" width="{width:.1f}" height="13" '
            f'rx="4" fill="{HIGHLIGHT}"/>'
            + _text(cx, foot + 10.5, space, size=11, fill="#fff", bold=True, anchor="middle")
            + "</g>"
        )
    return "".join(out)


def _map(view: Mapping[str, Any], highlight: Sequence[str], lang: str) -> str:
    tiles = {
        space: str(code)
        for key, code in _mapping(view.get("tiles")).items()
        if (space := _space(key)) is not None and space not in CITY_AT
    }
    placed = _placed_vehicles(_crews(view))
    marked = [space for item in highlight if (space := _space(item)) is not None]
    out = ['<g class="map">', _sea_and_labels(), _land()]
    terrain = [space for space in SPACES if space not in CITY_AT]
    out.extend(_terrain_space(space, None, "") for space in terrain if space not in tiles)
    busy = set(tiles) | set(placed) | set(CITY_AT) | set(marked)
    lines, pills = _transport_lines(busy)
    out.append(lines)
    for space in terrain:  # tiles over the lines: a line shows only on a tile's rim
        code = tiles.get(space)
        if code is None:
            continue
        tile = parse_tile(code)
        out.append(_terrain_space(space, tile, code) if tile else _unknown_tile(space, code))
    start, finish = _start(view), _finish(view)
    for city in CITIES:
        role = "start" if city.slug == start else "finish" if city.slug == finish else ""
        out.append(_city_space(city, role if city.purple else "", lang))
    out.append(pills)
    out.append(_highlights(marked))
    out.append(_vehicles(placed, set(_pending_crews(view))))
    out.append("</g>")
    return "".join(out)


# --- the panel -----------------------------------------------------------------------------------


def _status(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    out = [_text(x, y + 20, word(lang, "title"), size=20, bold=True)]
    phase = view.get("phase")
    phase_word = word(lang, f"phase.{phase}") if isinstance(phase, str) else "?"
    turn = _int(view.get("turn"))
    line = f"{word(lang, 'turn')} {turn if turn is not None else '?'} \u00b7 {phase_word}"
    out.append(_text(x, y + 40, line, size=14, bold=True, fill="#5c4a2a"))
    height = 48.0
    pending = _mapping(view.get("pending"))
    waiting = _pending_crews(view)
    if waiting:
        kind = pending.get("kind")
        what = word(lang, f"pending.{kind}") if isinstance(kind, str) else ""
        who = ", ".join(crew_name(lang, c) for c in waiting)
        text = f"{word(lang, 'waiting')}: {who}" + (f" ({what})" if what else "")
        out.append(_text(x, y + 60, text, size=12, fill=PENDING_RING, bold=True))
        height += 20
    order = _strings(view.get("order"))
    if order:
        names = " \u203a ".join(crew_name(lang, crew) for crew in order)
        out.append(
            f'<g class="order" data-order="{_attr(" ".join(order))}">'
            + _text(x, y + height + 13, f"{word(lang, 'order')}: {names}", size=12, fill=INK)
            + "</g>"
        )
        height += 22
    return "".join(out), height + 4


GAUGE_X: Final[dict[str, float]] = {"petrol": 14.0, "engine": 118.0, "chassis": 184.0}
"""Where each gauge's bar starts in a crew's card (its label is written once above the cards)."""
GAUGE_CELL: Final = 9.6


def _gauge(x: float, y: float, name: str, value: int | None) -> str:
    """A bar of cells, one per level, full up to ``value``; a gap after every fifth cell."""
    top = GAUGE_MAX[name]
    level = max(0, min(value or 0, top))
    out = [f'<g class="gauge" data-gauge="{name}" data-value="{"?" if value is None else value}">']
    for k in range(top):
        fill = GAUGE_FILL[name] if k < level else GAUGE_EMPTY
        cx = x + k * GAUGE_CELL + (k // 5) * 4
        out.append(
            f'<rect x="{cx:.1f}" y="{y:.1f}" width="{GAUGE_CELL - 1.8:.1f}" height="11" '
            f'fill="{fill}" {CRISP}/>'
        )
    out.append("</g>")
    return "".join(out)


def _gauge_heads(x: float, y: float, lang: str) -> str:
    """The gauges' names, once above the crews' cards, over their columns."""
    out = [
        _text(x + gx, y, f"{word(lang, name)} /{GAUGE_MAX[name]}", size=10, fill=MUTED)
        for name, gx in GAUGE_X.items()
    ]
    out.append(
        _text(x + PANEL_W - 22, y, word(lang, "cards"), size=10, fill=MUTED, anchor="middle")
    )
    return "".join(out)


def _assistants(info: Mapping[str, Any], phase: object, x: float, y: float, lang: str) -> str:
    """The dashboard's boxes with their counts, or only whether the plan is in while planning."""
    if phase == "planning":
        planned = info.get("planned") is True
        key = "planned" if planned else "planning"
        colour = PETROL_GREEN if planned else MUTED
        return (
            f'<g class="plan" data-planned="{str(planned).lower()}">'
            + _text(x, y + 12, word(lang, key), size=12, fill=colour, bold=planned)
            + "</g>"
        )
    boxes = _mapping(info.get("assistants"))
    counts = {box: _int(boxes.get(box), 0) or 0 for box in BOXES}
    label = "  ".join(f"{box}{counts[box]}" for box in BOXES)
    data = " ".join(f'data-{box.lower()}="{counts[box]}"' for box in BOXES)
    return f'<g class="assistants" {data}>' + _text(x, y + 12, label, size=12, bold=True) + "</g>"


def _hand_icon(x: float, y: float, count: int | None) -> str:
    shown = "?" if count is None else str(count)
    return (
        f'<g class="hand" data-cards="{shown}">'
        f'<rect x="{x - 4:.1f}" y="{y - 1:.1f}" width="14" height="19" rx="2" fill="#e9e1cf" '
        f'stroke="{MUTED}" stroke-width="1"/>'
        f'<rect x="{x - 8:.1f}" y="{y + 1:.1f}" width="14" height="19" rx="2" fill="#fff" '
        f'stroke="{INK}" stroke-width="1.2"/>'
        + _text(x - 1, y + 15, shown, size=12, bold=True, anchor="middle")
        + "</g>"
    )


CREW_ROW_H: Final = 66.0
NO_DASHBOARD: Final = frozenset({"bivouac", "over"})
"""Phases in which the dashboards play no part (the bivouac, the end): they are not drawn."""


def _crew_card(
    name: str,
    info: Mapping[str, Any],
    view: Mapping[str, Any],
    x: float,
    y: float,
    ringed: bool,
    lang: str,
) -> str:
    colour = crew_colour(name)
    frame = PENDING_RING if ringed else "#d8cfbd"
    height = CREW_ROW_H - 6
    right = x + PANEL_W - 10
    money = _int(info.get("money"))
    out = [
        f'<g class="crew" data-crew="{_attr(name)}" {CRISP}>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W:.1f}" height="{height:.1f}" '
        f'rx="8" fill="#fffdf8" stroke="{frame}" stroke-width="{2.2 if ringed else 1}"/>',
        f'<rect x="{x:.1f}" y="{y:.1f}" width="6" height="{height:.1f}" rx="3" fill="{colour}"/>',
        _car(x + 22, y + 14, name, 0.9, ringed),
        _text(x + 38, y + 19, crew_name(lang, name), size=14, bold=True),
        _text(
            right,
            y + 19,
            f"{'?' if money is None else money}F",
            size=14,
            bold=True,
            fill="#5c4a2a",
            anchor="end",
        ),
    ]
    space = _space(info.get("space"))
    if space:
        out.append(_text(right - 62, y + 19, space, size=12, fill=MUTED, anchor="end"))
    for gauge, gx in GAUGE_X.items():
        out.append(_gauge(x + gx, y + 27, gauge, _int(info.get(gauge))))
    out.append(_hand_icon(right - 12, y + 25, _hand_count(info.get("hand"))))
    place = _int(info.get("finished"))
    tags = []
    if place is not None:
        tags.append(f"{word(lang, 'finished')}: {place}.")
    else:
        if _phase(view) not in NO_DASHBOARD:
            out.append(_assistants(info, view.get("phase"), x + 14, y + 40, lang))
        if info.get("passed") is True and view.get("phase") == "convoy":
            tags.append(word(lang, "passed"))
    if info.get("leader_used") is True:
        tags.append(word(lang, "leader"))
    if tags:
        tag_x = x + (14 if place is not None else 130)
        out.append(_text(tag_x, y + 52, " \u00b7 ".join(tags), size=11, fill=MUTED, bold=True))
    out.append("</g>")
    return "".join(out)


TRACK_NUMBERS: Final = frozenset({0, 5, 10, 14})
"""The track's cells that carry their number (every label costs render time)."""


def _track(
    view: Mapping[str, Any], crews: Mapping[str, Mapping[str, Any]], x: float, y: float, lang: str
) -> tuple[str, float]:
    """The progression track 0..14, each crew's token stacked where its progress is."""
    out = [_text(x, y + 12, word(lang, "track"), size=12, bold=True)]
    stacks: dict[int, list[str]] = {}
    for crew in _strings(view.get("track")) or list(crews):
        value = _int(crews.get(crew, {}).get("progress"), 0) or 0
        stacks.setdefault(max(0, min(value, 14)), []).append(crew)
    cell = PANEL_W / 15
    base = y + 62
    for value in range(15):
        cx = x + value * cell
        fill = PURPLE_FILL if value in (0, 14) else "#e9e1cf"
        out.append(
            f'<rect x="{cx + 1:.1f}" y="{base:.1f}" width="{cell - 2:.1f}" height="14" '
            f'fill="{fill}" {CRISP}/>'
        )
        if value in TRACK_NUMBERS:
            ink = "#fff" if value in (0, 14) else MUTED
            out.append(
                _text(
                    cx + cell / 2,
                    base + 11,
                    str(value),
                    size=9.5,
                    fill=ink,
                    bold=True,
                    anchor="middle",
                )
            )
    # ``track`` reads from the front, and on one value the lower token (the earlier arrival)
    # comes first: each stack is listed bottom first
    for value, stack in stacks.items():
        cx = x + value * cell
        for level, crew in enumerate(stack):
            ty = base - 10 - level * 10
            out.append(
                f'<rect class="track-token" data-crew="{_attr(crew)}" data-progress="{value}" '
                f'x="{cx + 2:.1f}" y="{ty:.1f}" width="{cell - 4:.1f}" height="8.5" '
                f'fill="{crew_colour(crew)}" stroke="#1a1a1a" stroke-width="0.8" '
                f"{CRISP}/>"
            )
    return "".join(out), 84


def _mini_tile(x: float, y: float, code: str) -> str:
    tile = parse_tile(code)
    out = [
        f'<g class="drawn-tile" data-tile="{_attr(code)}">'
        f'<polygon points="{_hexagon(x, y, 15)}" fill="{TILE_FILL}" stroke="{TILE_EDGE}" '
        'stroke-width="1.3"/>'
    ]
    if tile is None:
        out.append(_text(x, y + 5, "?", size=13, bold=True, anchor="middle"))
    else:
        out.append(_numeral(x - 1, y + 1.5, tile.petrol, scale=0.6))
        if tile.damage:
            out.append(_damage_pips(x + 8, y + 2, tile.damage, radius=2.6))
        if tile.danger:
            out.append(_danger_icon(x - 6 if tile.stop else x, y - 8, 0.6))
        if tile.stop:
            out.append(_stop_icon(x + 6 if tile.danger else x, y - 8, 0.6))
    out.append("</g>")
    return "".join(out)


def _drawn_and_market(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    out: list[str] = []
    height = 0.0
    drawn = _strings(view.get("drawn"))
    if drawn:
        out.append(_text(x, y + 20, f"{word(lang, 'drawn')}:", size=12, bold=True))
        tx = x + 14 + len(word(lang, "drawn")) * 7
        for k, code in enumerate(drawn[:8]):
            out.append(_mini_tile(tx + 12 + k * 34, y + 16, code))
        height += 38
    market = _strings(view.get("market"))
    if market:
        names = ", ".join(word(lang, f"card.{card}") for card in market)
        out.append(
            '<g class="market">'
            + _text(x, y + height + 14, f"{word(lang, 'market')}: ", size=12, bold=True)
            + _text(x + 14 + len(word(lang, "market")) * 7, y + height + 14, names, size=11)
            + "</g>"
        )
        height += 22
    return "".join(out), height


def _counts(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    parts = []
    for key in ("bag", "deck"):
        value = view.get(key)
        count = _hand_count(value)
        parts.append(f"{word(lang, key)}: {count if count is not None else '?'}")
    discard = view.get("discard")
    if isinstance(discard, list | int) and not isinstance(discard, bool):
        parts.append(f"{word(lang, 'discard')}: {_hand_count(discard)}")
    return _text(x, y + 12, " \u00b7 ".join(parts), size=11, fill=MUTED), 20


LEGEND_STEP: Final = 19.0
"""One legend entry a line: the Polish labels are too long for two columns."""


def _legend(x: float, y: float, lang: str) -> tuple[str, float]:
    entries: list[tuple[str, str]] = [
        (
            f'<polygon points="{_hexagon(0, 0, 9)}" fill="{TERRAIN}" stroke="{TERRAIN_EDGE}"/>',
            word(lang, "legend.terrain"),
        ),
        (
            f'<polygon points="{_hexagon(0, 0, 9)}" fill="{RISK_FILL}" stroke="{RISK_EDGE}"/>',
            word(lang, "legend.risk"),
        ),
        (
            f'<polygon points="{_hexagon(0, 0, 9)}" fill="{TILE_FILL}" stroke="{TILE_EDGE}"/>'
            + _text(-2, 4, "2", size=11, fill=TILE_INK, bold=True, anchor="middle")
            + _damage_pips(5, 1, 1, radius=2.6),
            word(lang, "legend.tile"),
        ),
        (
            f'<polygon points="{_hexagon(0, 0, 9)}" fill="{CITY_FILL}" stroke="{CITY_EDGE}"/>'
            + _card_pips(0, 0, 2),
            word(lang, "legend.city"),
        ),
        (_danger_icon(0, 0), word(lang, "legend.danger")),
        (_stop_icon(0, 0), word(lang, "legend.stop")),
        (
            f'<line x1="-10" y1="0" x2="10" y2="0" stroke="{LINE_INK}" stroke-width="3" '
            'stroke-dasharray="6 3"/>',
            word(lang, "legend.sea"),
        ),
        (
            f'<line x1="-10" y1="0" x2="10" y2="0" stroke="{LINE_INK}" stroke-width="3" '
            'stroke-dasharray="1.5 4" stroke-linecap="round"/>',
            word(lang, "legend.air"),
        ),
    ]
    out = ['<g class="legend">']
    for k, (icon, label) in enumerate(entries):
        ex = x + 12
        ey = y + k * LEGEND_STEP + 10
        out.append(f'<g transform="translate({ex:.1f} {ey:.1f})">{icon}</g>')
        out.append(_text(ex + 16, ey + 4, label, size=10.5))
    out.append("</g>")
    return "".join(out), len(entries) * LEGEND_STEP


def _scores(view: Mapping[str, Any], x: float, y: float, lang: str) -> tuple[str, float]:
    """The winner banner and the prestige table of the finishers, once the game is over."""
    winners = _strings(view.get("winners"))
    winner = view.get("winner")
    if isinstance(winner, str) and winner not in winners:
        winners.insert(0, winner)
    if not winners:
        return "", 0.0
    names = " & ".join(crew_name(lang, w) for w in winners)
    out = [
        f'<g class="winner" data-winner="{_attr(winners[0])}">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{PANEL_W:.1f}" height="36" rx="10" '
        f'fill="{GOLD}" stroke="#c77700" stroke-width="2"/>'
        + _text(
            x + PANEL_W / 2,
            y + 24,
            f"{word(lang, 'winner').capitalize()}: {names}",
            size=17,
            bold=True,
            fill="#3b2500",
            anchor="middle",
        )
        + "</g>"
    ]
    scores = _mapping(view.get("scores"))
    if not scores:
        return "".join(out), 44.0
    columns = ("place", "engine", "chassis", "money", "total")
    col_x = [x + 106 + k * 44 for k in range(len(columns))]
    ty = y + 54
    for cx, key in zip(col_x, columns, strict=True):
        out.append(_text(cx, ty, word(lang, f"score.{key}"), size=9, fill=MUTED, anchor="middle"))
    order = [c for c in _strings(view.get("finishers")) if c in scores]
    order += [str(c) for c in scores if str(c) not in order]
    for k, crew in enumerate(order):
        row = _mapping(scores.get(crew))
        ry = ty + 18 + k * 18
        out.append(_car(x + 12, ry - 4, crew, 0.7, False))
        out.append(_text(x + 26, ry, crew_name(lang, crew), size=12, bold=crew in winners))
        for cx, key in zip(col_x, columns, strict=True):
            value = _int(row.get(key))
            out.append(
                _text(
                    cx,
                    ry,
                    "?" if value is None else str(value),
                    size=12,
                    bold=key == "total",
                    anchor="middle",
                )
            )
    return '<g class="scores">' + "".join(out) + "</g>", 62 + 18 * len(order)


def _panel(view: Mapping[str, Any], lang: str) -> tuple[str, float]:
    x, y = PANEL_X, MARGIN
    out: list[str] = []
    scores, h = _scores(view, x, y, lang)
    out.append(scores)
    y += h + (8 if h else 0)
    status, h = _status(view, x, y, lang)
    out.append(status)
    y += h
    crews = _crews(view)
    ringed = set(_pending_crews(view))
    if crews:
        out.append(_gauge_heads(x, y + 10, lang))
        y += 15
    for name, info in crews:
        out.append(_crew_card(name, info, view, x, y, name in ringed, lang))
        y += CREW_ROW_H
    track, h = _track(view, dict(crews), x, y + 2, lang)
    out.append(track)
    y += h + 6
    extra, h = _drawn_and_market(view, x, y, lang)
    out.append(extra)
    y += h
    counts, h = _counts(view, x, y, lang)
    out.append(counts)
    y += h + 6
    out.append(
        f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x + PANEL_W:.1f}" y2="{y:.1f}" stroke="#d8cfbd"/>'
    )
    legend, h = _legend(x, y + 6, lang)
    out.append(legend)
    return "".join(out), y + 6 + h + MARGIN


# --- entry point ---------------------------------------------------------------------------------


def _accessible_title(view: Mapping[str, Any], lang: str) -> str:
    phase = view.get("phase")
    head = (
        f"{word(lang, 'title')}, {word(lang, 'turn')} {view.get('turn', '?')}, "
        f"{word(lang, f'phase.{phase}') if isinstance(phase, str) else '?'}"
    )
    parts = [head]
    for name, info in _crews(view):
        bits = [crew_name(lang, name), str(_space(info.get("space")) or "?")]
        money = _int(info.get("money"))
        if money is not None:
            bits.append(f"{money}F")
        for gauge in ("petrol", "engine", "chassis"):
            value = _int(info.get(gauge))
            if value is not None:
                bits.append(f"{word(lang, gauge)} {value}")
        place = _int(info.get("finished"))
        if place is not None:
            bits.append(f"{word(lang, 'finished')} {place}")
        parts.append(" ".join(bits))
    winners = _strings(view.get("winners")) or _strings([view.get("winner")])
    if winners:
        parts.append(f"{word(lang, 'winner')}: " + ", ".join(crew_name(lang, w) for w in winners))
    return "; ".join(parts)


def board_svg(view: Mapping[str, Any], *, lang: str = "en", highlight: Sequence[str] = ()) -> str:
    """The Great Race in ``view`` as one self-contained SVG document (a string).

    ``highlight`` names spaces to outline (where an option leads); ``lang`` is any language of
    :mod:`app.i18n` (English otherwise).
    """
    lang = language(lang)
    view = _mapping(view)
    marks = [highlight] if isinstance(highlight, str) else [str(item) for item in highlight]
    board = _map(view, marks, lang)
    panel, panel_bottom = _panel(view, lang)
    height = math.ceil(max(MAP_BOTTOM, panel_bottom))
    width = math.ceil(WIDTH)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" lang="{lang}" data-game="great-race" '
        f'font-family="{_attr(FONT)}">'
        f"<title>{escape(_xml_chars(_accessible_title(view, lang)))}</title>"
        f'<rect width="{width}" height="{height}" fill="{BACKGROUND}"/>' + board + panel + "</svg>"
    )
