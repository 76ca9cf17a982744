"""The board picture: a state view drawn as a self-contained SVG, and that SVG rendered to PNG.

:func:`board_svg` (here) puts together the boards (:mod:`.board`) and the panel (:mod:`.panel`),
drawn with the geometry, colours, icons and words of :mod:`.layout`.

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
- a panel (right of one board, under three Grand Slam boards; a group of class ``side-panel``)
  gives the round, whose decision is pending, each Titan's life (6 hearts), lap and hand size,
  the dice on the table as coloured squares and a legend of the features on the board(s); a gold
  banner over the board(s) names the winner.

The root's ``style`` gives the picture's size and its boards' part (``--pic-w``, ``--pic-h``,
``--main-w``, ``--main-h``, in user units, the boards' part from the top left corner): a narrow
page hides the panel and shows only that part, the panel's facts as HTML (:func:`panel_facts`).

Everything is inline attributes (no CSS, fonts or images from outside), so the SVG can be served
as it is and :func:`board_png` renders the same picture for mail. Nothing here changes the game,
and a malformed field is drawn as best it can be rather than raising.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape

from app.core.i18n import language
from app.core.pictures import board_png
from app.games.svg import FONT, svg_attr, svg_text
from app.games.titanrace.engine.circuits import Circuit
from app.games.titanrace.textboard import (
    as_int,
    board_index_of,
    square_of,
    titans_of,
    trap_squares_of,
)

from .board import (
    Token,
    draw_board,
)
from .layout import (
    BACKGROUND,
    BOARD_HEIGHT,
    BOARD_WIDTH,
    GUTTER,
    MARGIN,
    PANEL_W,
    TILE_EDGE,
    board_origin,
    cell_centre,
    display_name,
    words_in,
)
from .panel import (
    dice_svg,
    legend_svg,
    panel_facts,
    status_svg,
    titan_rows_svg,
    winner_banner,
)

__all__ = ["BOARD_HEIGHT", "BOARD_WIDTH", "board_png", "board_svg", "cell_centre", "panel_facts"]

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
            where = f"{board_index_of(as_int(info.get('lap'), 1), boards)}:{where}"
        bits = [
            display_name(name, words),
            where,
            f"{words['lap']} {as_int(info.get('lap'), 1)}",
            words["ko"] if info.get("ko") else f"{words['life']} {as_int(info.get('life'), 0)}",
        ]
        parts.append(" ".join(bits))
    if view.get("winner"):
        parts.append(f"{words['winner']}: {display_name(str(view.get('winner')), words)}")
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
    of :mod:`app.core.i18n` (English otherwise).
    """
    lang = language(lang)
    words = words_in(lang)
    boards = max(len(circuits), 1)
    titans = titans_of(view)
    pending = _pending_titan(view)
    traps = trap_squares_of(view, boards)
    marked: list[set[tuple[int, int]]] = [set() for _ in range(boards)]
    for item in highlight or []:
        name, targets = str(item), list(range(boards))
        if ":" in name:
            head, _, name = name.partition(":")
            board = as_int(head.strip(), -1)
            targets = [board] if 0 <= board < boards else []
        square = square_of(name)
        if square is not None:
            for board in targets:
                marked[board].add(square)
    tokens: list[dict[tuple[int, int], list[Token]]] = [{} for _ in range(boards)]
    for name, info in titans:
        square = square_of(info.get("space"))
        if square is None:
            continue
        board = board_index_of(as_int(info.get("lap"), 1), boards)
        mark = words.get(f"mark:{name}", "")
        tokens[board].setdefault(square, []).append(Token(name, info, mark))

    boards_w = boards * BOARD_WIDTH + (boards - 1) * GUTTER
    side = boards == 1
    width = MARGIN * 2 + boards_w + (GUTTER + PANEL_W if side else 0)
    body: list[str] = []
    y = MARGIN
    if title:
        body.append(svg_text(MARGIN, y + 18, title, size=18, bold=True))
        y += 30
    banner, banner_h = winner_banner(view, MARGIN, y, boards_w, words)
    body.append(banner)
    y += banner_h
    top = y
    for index, circuit in enumerate(circuits):
        ox, oy = board_origin(index, boards)
        if boards > 1:
            heading = f"{words['board']} {index}: {circuit.title}"
            laps = [str(lap) for lap in range(1, 4) if board_index_of(lap, boards) == index]
            sub = ",".join(laps)
            tip = f"{words['lap']} {sub}"
        else:
            heading, sub, tip = circuit.title, "", ""
        body.append(
            draw_board(
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

    body.append('<g class="side-panel">')
    if side:
        px, py = MARGIN + boards_w + GUTTER, top + 4
        panel_w = PANEL_W
        status, h = status_svg(view, px, py, words)
        body.append(status)
        py += h + 6
        rows, h = titan_rows_svg(titans, panel_w, px, py, boards, pending, words)
        body.append(rows)
        py += h + 14
        dice, h = dice_svg(view.get("dice"), px, py, words)
        body.append(dice)
        py += h + 16
        body.append(
            f'<line x1="{px}" y1="{py - 8:.1f}" x2="{px + panel_w}" y2="{py - 8:.1f}" '
            f'stroke="{TILE_EDGE}"/>'
        )
        legend, h = legend_svg(circuits, view, px, py, panel_w, lang)
        body.append(legend)
        bottom = max(boards_bottom, py + h) + MARGIN
        main_w, main_h = MARGIN + boards_w + GUTTER / 2, boards_bottom + MARGIN
    else:
        py = boards_bottom + 8
        px = MARGIN
        info_w = 300.0
        table_w = width - 2 * MARGIN - info_w - GUTTER * 2
        # the Titans in two side-by-side tables, then the round, dice and legend on the right
        half = (len(titans) + 1) // 2
        col_w = (table_w - GUTTER) / 2
        left, h1 = titan_rows_svg(titans[:half], col_w, px, py, boards, pending, words)
        right, h2 = titan_rows_svg(
            titans[half:], col_w, px + col_w + GUTTER, py, boards, pending, words
        )
        body.extend([left, right])
        ix = MARGIN + table_w + GUTTER * 2
        iy = py
        status, h = status_svg(view, ix, iy, words)
        body.append(status)
        iy += h + 6
        dice, h = dice_svg(view.get("dice"), ix, iy, words)
        body.append(dice)
        iy += h + 14
        legend, h = legend_svg(circuits, view, ix, iy, info_w, lang)
        body.append(legend)
        bottom = max(py + max(h1, h2), iy + h) + MARGIN
        main_w, main_h = width, boards_bottom + 4
    body.append("</g>")
    height = math.ceil(bottom)
    width_i = math.ceil(width)
    label = _accessible_title(view, circuits, titans, title, words)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width_i}" height="{height}" '
        f'viewBox="0 0 {width_i} {height}" role="img" '
        f'lang="{lang}" data-board-top="{top:.1f}" data-boards="{boards}" '
        f'font-family="{svg_attr(FONT)}" style="--pic-w:{width_i};--pic-h:{height};'
        f'--main-w:{math.ceil(main_w)};--main-h:{math.ceil(main_h)}">'
        f"<title>{escape(label)}</title>"
        f'<rect width="{width_i}" height="{height}" fill="{BACKGROUND}"/>'
        + "".join(body)
        + "</svg>"
    )
