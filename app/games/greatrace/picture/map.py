"""The Great Race board picture's map of Africa: sea, terrain, risk zones, cities, transport
lines, placed tiles, the crews' vehicles and the highlighted spaces; also the small icons
(danger, stop, damage, numerals, cards, cars) that the panel's legend draws again."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

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
)
from app.games.greatrace.engine.pieces import Tile
from app.games.svg import INK, MUTED, pointy_hexagon, svg_attr, svg_text

from .fields import crews_of, finish_of, mapping_of, pending_crews_of, space_of, start_of
from .layout import (
    CITY_EDGE,
    CITY_FILL,
    CRISP,
    DAMAGE_RED,
    DANGER_YELLOW,
    HEX_W,
    HIGHLIGHT,
    LABEL_FILL,
    LINE_INK,
    LINE_ROUTE,
    MAP_H,
    MAP_W,
    MAP_X,
    MAP_Y,
    PENDING_RING,
    PETROL_GREEN,
    PURPLE_EDGE,
    PURPLE_FILL,
    RISK_FILL,
    ROW_STEP,
    SEA,
    SEA_EDGE,
    SEA_RIM,
    STOP_RED,
    TERRAIN,
    TERRAIN_EDGE,
    TILE_FILL,
    TILE_INK,
    Point,
    R,
    centre,
    crew_colour,
    grid_point,
    ink_on,
    parse_tile,
)
from .words import word


def _sea_and_labels() -> str:
    out = [
        f'<rect x="{MAP_X - SEA_RIM:.1f}" y="{MAP_Y - SEA_RIM:.1f}" '
        f'width="{MAP_W + 2 * SEA_RIM:.1f}" height="{MAP_H + 2 * SEA_RIM:.1f}" rx="14" '
        f'fill="{SEA}" stroke="{SEA_EDGE}" stroke-width="2"/>'
    ]
    for col, letter in enumerate(COLUMNS):
        x, _ = grid_point(col, 1)
        out.append(svg_text(x, MAP_Y - 10, letter, size=12, fill=MUTED, bold=True, anchor="middle"))
    for row in range(1, ROWS + 1):
        _, y = grid_point(0, row)
        out.append(svg_text(MAP_X - 8, y + 4, str(row), size=11, fill=MUTED, bold=True,
                            anchor="end"))
    return "".join(out)


def _land() -> str:
    """One shape under every space, in the grid's colour: it shows in the gaps between them."""
    rings = " ".join(f"M{pointy_hexagon(*centre(space), R + 0.6)}Z" for space in SPACES)
    return f'<path d="{rings}" fill="{TERRAIN_EDGE}" {CRISP}/>'


def _terrain_space(space: str, tile: Tile | None, code: str) -> str:
    cx, cy = centre(space)
    risk = space in RISK
    fill = RISK_FILL if risk else TERRAIN
    kind = "risk" if risk else "terrain"
    out = [
        f'<g class="space {kind}" data-space="{space}"'
        + (f' data-tile="{svg_attr(code)}"' if tile else "")
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
    return f'<polygon points="{pointy_hexagon(cx, cy, R - 1.2)}" fill="{fill}" {CRISP}/>'


_DROP: Final = "M0 -6.5 C3 -2.5 4.6 0 4.6 2.2 A4.6 4.6 0 0 1 -4.6 2.2 C-4.6 0 -3 -2.5 0 -6.5Z"


def danger_icon(x: float, y: float, scale: float = 1.0) -> str:
    return (
        f'<g transform="translate({x:.1f} {y:.1f}) scale({scale})">'
        f'<path d="M0 -6.8 L7.2 5.6 L-7.2 5.6Z" fill="{DANGER_YELLOW}" stroke="#1a1a1a" '
        'stroke-width="1.3" stroke-linejoin="round"/>'
        '<rect x="-0.9" y="-3" width="1.8" height="4.6" fill="#1a1a1a"/>'
        '<circle cx="0" cy="3.4" r="1" fill="#1a1a1a"/></g>'
    )


def stop_icon(x: float, y: float, scale: float = 1.0) -> str:
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


def damage_pips(x: float, y: float, damage: int, radius: float = 4.2) -> str:
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


def numeral_svg(x: float, y: float, value: int, scale: float = 1.0) -> str:
    """``value`` large and bold, centred on (x, y): a drawn numeral, or text for another value."""
    path = _NUMERALS.get(value)
    if path is None:
        size = round(24 * scale, 1)
        return svg_text(
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
        f'<polygon points="{pointy_hexagon(cx, cy, R - 5.5)}" fill="{TILE_FILL}" {CRISP}/>',
        f'<path transform="translate({cx - 11.5:.1f} {cy + 4:.1f}) scale(0.8)" d="{_DROP}" '
        f'fill="{PETROL_GREEN}"/>',
        numeral_svg(cx + 1, cy + 2.5, tile.petrol),
    ]
    if tile.damage:
        out.append(damage_pips(cx + 14, cy + 3, tile.damage))
    if tile.danger and tile.stop:
        out.append(danger_icon(cx - 7, cy - 13.5, 0.85) + stop_icon(cx + 7, cy - 13.5, 0.85))
    elif tile.danger:
        out.append(danger_icon(cx, cy - 13.5, 0.9))
    elif tile.stop:
        out.append(stop_icon(cx, cy - 13.5, 0.9))
    return "".join(out)


def _unknown_tile(space: str, code: str) -> str:
    """A tile whose code is not understood: a grey tile with a question mark."""
    cx, cy = centre(space)
    return (
        f'<g class="space tile-unknown" data-space="{space}" data-tile="{svg_attr(code)}">'
        f'<polygon points="{pointy_hexagon(cx, cy, R - 0.8)}" fill="{TERRAIN}" '
        f'stroke="{TERRAIN_EDGE}"/>'
        f'<polygon points="{pointy_hexagon(cx, cy, R - 6)}" fill="#dee2e6" stroke="#868e96"/>'
        + svg_text(cx, cy + 7, "?", size=18, fill="#495057", bold=True, anchor="middle")
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
        out.append(card_pips(cx + 13, cy - 13, city.cards))
    out.append(_city_name(cx, cy, city.name, edge))
    if role:
        tag = word(lang, role)
        tag_w = len(tag) * 5.4 + 8
        out.append(
            f'<rect x="{cx - tag_w / 2:.1f}" y="{cy + 18:.1f}" width="{tag_w:.1f}" height="11" '
            f'rx="5.5" fill="{PURPLE_EDGE}"/>'
            + svg_text(cx, cy + 26.5, tag.upper(), size=8, fill="#fff", bold=True, anchor="middle")
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
        + svg_text(cx, cy + 14.2, name, size=size, fill=INK, bold=True, anchor="middle", extra=fit)
    )


def card_pips(x: float, y: float, count: int) -> str:
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
            px, py = grid_point(col, r)
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
        + svg_text(x + 6, y + 4.2, label, size=11, fill=LINE_INK, bold=True, anchor="middle")
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


def car_svg(x: float, y: float, crew: str, scale: float, ringed: bool, space: str = "") -> str:
    """A little car in the crew's colour, ringed when the crew owes a move: a vehicle on the
    map (``space`` given) with the crew's initial, or the crew's chip in the panel (beside the
    crew's name, so without the initial)."""
    fill = crew_colour(crew)
    ink = ink_on(fill)
    ring = (
        f'<circle class="pending" cx="0" cy="0" r="15" fill="#fff" fill-opacity="0.35" '
        f'stroke="{PENDING_RING}" stroke-width="3"/>'
        if ringed
        else ""
    )
    return (
        f'<g class="{"vehicle" if space else "chip"}" data-crew="{svg_attr(crew)}" '
        + (f'data-piece="{svg_attr(crew)}" data-space="{space}" ' if space else "")
        + f'transform="translate({x:.1f} {y:.1f}) scale({scale})" '
        f'shape-rendering="geometricPrecision">{ring}'
        '<circle cx="-6.5" cy="5.5" r="3.3" fill="#1a1a1a"/>'
        '<circle cx="6.5" cy="5.5" r="3.3" fill="#1a1a1a"/>'
        f'<path d="M-12 4.5 L-12 -1 Q-12 -3 -9.5 -3 L-6 -3 L-3 -8.5 L5 -8.5 L8 -3 L10 -3 '
        f'Q12 -3 12 -1 L12 4.5Z" fill="{fill}" stroke="#1a1a1a" stroke-width="1.3" '
        'stroke-linejoin="round"/>'
        '<path d="M-1.5 -7 L4 -7 L6 -3.5 L-3.2 -3.5Z" fill="#dbeafe" fill-opacity="0.9"/>'
        + (
            svg_text(0, 3.6, crew[:1].upper(), size=7.5, fill=ink, bold=True, anchor="middle")
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
            out.append(car_svg(cx + dx, cy + dy, crew, scale, crew in ringed, space))
        if len(crews) > 4:  # only in a malformed view: say how many more
            out.append(svg_text(cx, cy + 20, f"+{len(crews) - 4}", size=9, bold=True,
                                anchor="middle"))
    return "".join(out)


def _placed_vehicles(crews: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    placed: dict[str, list[str]] = {}
    for name, info in crews:
        space = space_of(info.get("space"))
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
            f'<polygon points="{pointy_hexagon(cx, cy, R - 2.5)}" fill="{HIGHLIGHT}" '
            f'fill-opacity="0.14" '
            f'stroke="{HIGHLIGHT}" stroke-width="4" stroke-linejoin="round"/>'
            f'<rect x="{cx - width / 2:.1f}" y="{foot:.1f}" width="{width:.1f}" height="13" '
            f'rx="4" fill="{HIGHLIGHT}"/>'
            + svg_text(cx, foot + 10.5, space, size=11, fill="#fff", bold=True, anchor="middle")
            + "</g>"
        )
    return "".join(out)


def map_svg(view: Mapping[str, Any], highlight: Sequence[str], lang: str) -> str:
    tiles = {
        space: str(code)
        for key, code in mapping_of(view.get("tiles")).items()
        if (space := space_of(key)) is not None and space not in CITY_AT
    }
    placed = _placed_vehicles(crews_of(view))
    marked = [space for item in highlight if (space := space_of(item)) is not None]
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
    start, finish = start_of(view), finish_of(view)
    for city in CITIES:
        role = "start" if city.slug == start else "finish" if city.slug == finish else ""
        out.append(_city_space(city, role if city.purple else "", lang))
    out.append(pills)
    out.append(_highlights(marked))
    out.append(_vehicles(placed, set(pending_crews_of(view))))
    out.append("</g>")
    return "".join(out)
