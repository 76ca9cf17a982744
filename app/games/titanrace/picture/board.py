"""The Titan Race board picture's boards: a circuit's plate, its spaces with their features,
traps and names, and the Titans' tokens on them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape

from app.games.svg import MUTED, flat_hexagon, svg_attr, svg_text
from app.games.titanrace.engine.circuits import (
    SUPER_RAMP,
    Circuit,
)
from app.games.titanrace.engine.geometry import ALL_SPACES, COLUMNS, parse_space
from app.games.titanrace.textboard import (
    abbreviation,
    as_int,
)

from .layout import (
    BAND_H,
    BOARD_WIDTH,
    COL_STEP,
    DARK_TEXT_ON,
    DRAWN,
    GRID_W,
    HIGHLIGHT,
    KO_FILL,
    PENDING_RING,
    PLATE,
    PLATE_EDGE,
    PLATE_H,
    PLATE_PAD,
    RAMP_ICONS,
    SIZE,
    TILE,
    TILE_EDGE,
    TILE_TEXT,
    TITLE_H,
    TOKEN_R,
    TRAP_BIG,
    TRAP_CORNER,
    TRAP_SMALL,
    colour_of,
    feature_look,
    fill_of,
    local_centre,
)

# --- the board -----------------------------------------------------------------------------------


@dataclass
class Token:
    titan: str
    info: Mapping[str, Any]
    mark: str = ""
    """The two letters on the token, in the picture's language (else the English ones)."""


def draw_board(
    circuit: Circuit,
    index: int,
    boards: int,
    heading: str,
    subheading: str,
    tip: str,
    tokens: Mapping[tuple[int, int], list[Token]],
    traps: set[tuple[int, int]],
    highlight: set[tuple[int, int]],
    pending: str | None,
    ox: float,
    oy: float,
) -> str:
    out: list[str] = [
        f'<g class="board" data-board="{index}" data-circuit="{svg_attr(circuit.name)}">'
    ]
    centre_x = ox + BOARD_WIDTH / 2
    out.append(
        svg_text(
            ox + 4 if subheading else centre_x,
            oy + 18,
            heading,
            size=15,
            bold=True,
            anchor="start" if subheading else "middle",
        )
    )
    if subheading:  # the lap this board is raced on, as the lap badge of the tokens
        out.append(lap_badge(ox + BOARD_WIDTH - 13, oy + 13, subheading, 9.0, tip=tip))
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
        lx, ly = local_centre(col, row)
        cx, cy = ox + lx, oy + ly
        kind, look = feature_look(circuit, col, row)
        fill = look.fill if look else TILE
        edge = look.edge if look else TILE_EDGE
        label = look.text if look else TILE_TEXT
        feature_attr = f' data-feature="{kind}"' if kind else ""
        ramp = circuit.super_ramps.get(name, "").upper() if kind == SUPER_RAMP else ""
        if ramp:
            feature_attr += f' data-ramp="{ramp}"'
        out.append(
            f'<g class="cell" data-space="{name}"{feature_attr}>'
            f'<polygon points="{flat_hexagon(cx, cy, DRAWN)}" fill="{fill}" stroke="{edge}" '
            'stroke-width="1.5"/>'
        )
        here = tokens.get((col, row), [])
        trapped = (col, row) in traps
        if look is not None and not (trapped and not here):
            icon = RAMP_ICONS.get(ramp, "") if kind == SUPER_RAMP else look.icon
            out.append(f'<g transform="translate({cx:.1f} {cy + 3:.1f})">{icon}</g>')
            if ramp:
                out.append(
                    svg_text(
                        cx + 13, cy + 17, ramp, size=9, fill=label, bold=True, anchor="middle"
                    )
                )
        if here:  # drawn over the token's ring, with a halo of the tile's colour
            labels.append(
                svg_text(
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
            out.append(svg_text(cx, cy - 16.5, name, size=9, fill=label, anchor="middle"))
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
            later.append(token_svg(token, cx + shift, cy - shift, index, name, pending))
        if (col, row) in highlight:
            outlines.append(
                f'<polygon class="highlight" data-space="{name}" data-board="{index}" '
                f'points="{flat_hexagon(cx, cy, DRAWN - 1.5)}" fill="{HIGHLIGHT}" '
                f'fill-opacity="0.16" stroke="{HIGHLIGHT}" stroke-width="3.5" '
                'stroke-linejoin="round"/>'
            )
    # Column letters under the plate.
    letters_y = plate_y + PLATE_H + 12
    for col, letter in enumerate(COLUMNS):
        x = ox + PLATE_PAD + SIZE + col * COL_STEP
        out.append(svg_text(x, letters_y, letter, size=10, fill=MUTED, bold=True, anchor="middle"))
    out.extend(outlines)
    out.extend(later)
    out.extend(labels)
    out.append("</g>")
    return "".join(out)


def token_svg(
    token: Token,
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
    colour = colour_of(titan)
    fill = KO_FILL if ko else fill_of(titan)
    text_fill = "#5c5f66" if ko else ("#2b2a33" if colour in DARK_TEXT_ON else "#fff")
    scale = radius / TOKEN_R
    parts = [
        f'<g class="{kind}{" ko" if ko else ""}" data-titan="{svg_attr(titan)}" '
        f'data-space="{space}" data-board="{board}"'
        + (f' data-piece="{svg_attr(titan)}">' if kind == "titan" else ">")
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
    parts.append(svg_text(cx, cy + 4.6 * scale, token.mark or abbreviation(titan),
                       size=round(13 * scale, 1), fill=text_fill, bold=True, anchor="middle"))
    if ko:
        d = radius * 0.72
        parts.append(
            f'<g stroke="#343a40" stroke-width="{2.6 * scale:.1f}" stroke-linecap="round">'
            f'<line x1="{cx - d:.1f}" y1="{cy - d:.1f}" x2="{cx + d:.1f}" y2="{cy + d:.1f}"/>'
            f'<line x1="{cx + d:.1f}" y1="{cy - d:.1f}" x2="{cx - d:.1f}" y2="{cy + d:.1f}"/></g>'
        )
    if badge:
        lap = as_int(info.get("lap"), 1)
        parts.append(lap_badge(cx + radius * 0.93, cy - radius * 0.53, str(lap), 6.8))
    parts.append("</g>")
    return "".join(parts)


def lap_badge(x: float, y: float, lap: str, radius: float, tip: str = "") -> str:
    """A lap number in a dark disc: on every token, and by a Grand Slam board's title."""
    size = round(radius * 1.33, 1)
    hint = f"<title>{escape(tip)}</title>" if tip else ""
    return (
        f'<g class="lap" data-lap="{svg_attr(lap)}">{hint}'
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="#212529" stroke="#fff" '
        f'stroke-width="{radius / 5.6:.1f}"/>'
        + svg_text(x, y + size * 0.36, lap, size=size, fill="#fff", bold=True, anchor="middle")
        + "</g>"
    )
