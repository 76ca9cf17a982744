"""The Titan Race board picture's panel: the round, whose decision is pending, each Titan's life,
lap and hand, the dice on the table, the legend of the features, and the winner's banner."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from xml.sax.saxutils import escape

from app.core.i18n import translate
from app.games.svg import INK, MUTED, flat_hexagon, icon_html, svg_attr, svg_text
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
from app.games.titanrace.engine.geometry import ALL_SPACES, COLUMNS
from app.games.titanrace.textboard import (
    as_int,
    board_index_of,
    square_of,
)

from .board import (
    Token,
    lap_badge,
    token_svg,
)
from .layout import (
    COLOUR_FILL,
    FEATURES,
    GOLD,
    HEART,
    PENDING_RING,
    RAMP_ICONS,
    SUPER_RAMP_LOOK,
    TILE,
    TILE_EDGE,
    TRAP_BIG,
    TRAP_RED,
    display_name,
    words_in,
)

# --- the panel -----------------------------------------------------------------------------------

ROW_H: Final = 38.0


def _hearts(x: float, y: float, life: int, ko: bool, step: float = 12.5) -> str:
    life = max(0, min(life, 6))
    parts = [f'<g class="life" data-life="{0 if ko else life}">']
    for k in range(6):
        full = k < life and not ko
        parts.append(
            f'<path transform="translate({x + k * step:.1f} {y:.1f}) scale(0.9)" d="{HEART}" '
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
        + svg_text(
            x,
            y + 4.5,
            str(count),
            size=12,
            bold=True,
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


def titan_rows_svg(
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
        svg_text(hearts_x - 6, y + 10, words["life"], size=10, fill=MUTED),
        svg_text(lap_x, y + 10, words["lap"], size=10, fill=MUTED, anchor="middle"),
        svg_text(cards_x, y + 10, words["cards"], size=10, fill=MUTED, anchor="middle"),
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
        out.append(f'<g class="titan-row" data-titan="{svg_attr(titan)}">')
        out.append(
            token_svg(
                Token(titan, info, words.get(f"mark:{titan}", "")), x + 18, mid, -1, "",
                pending, 12.5, badge=False, kind="chip"
            )
        )
        out.append(svg_text(x + 37, mid - 3, display_name(titan, words), size=13, bold=True,
                         fill=MUTED if ko else INK))
        if ko:
            out.append(
                f'<rect x="{x + 37:.1f}" y="{mid + 2:.1f}" width="20" height="12" rx="3" '
                f'fill="{TRAP_RED}"/>'
                + svg_text(
                    x + 47,
                    mid + 11.5,
                    words["ko"],
                    size=9.5,
                    fill="#fff",
                    bold=True,
                    anchor="middle",
                )
            )
            out.append(_hearts(x + 68, mid + 8, 0, True, step=10.5))
        else:
            out.append(_hearts(hearts_x, mid + 8, as_int(info.get("life"), 0), False))
        space = square_of(info.get("space"))
        if space is None:
            where = "\u2013"  # not started yet
        else:
            where = f"{COLUMNS[space[0]]}{space[1]}"
            if boards > 1:
                where = f"{board_index_of(as_int(info.get('lap'), 1), boards)}:{where}"
        out.append(svg_text(space_x, mid + 4.5, where, size=12, fill=MUTED, anchor="middle"))
        lap = as_int(info.get("lap"), 1)
        out.append(
            f'<g class="lap-count" data-lap="{lap}">'
            + svg_text(lap_x, mid + 5.5, str(lap), size=15, bold=True, anchor="middle")
            + "</g>"
        )
        count = _hand_count(info.get("hand"))
        if count is not None:
            out.append(_card_icon(cards_x, mid, count))
        out.append("</g>")
    return "".join(out), 15 + len(titans) * ROW_H


def dice_svg(dice: Any, x: float, y: float, words: Mapping[str, str]) -> tuple[str, float]:
    out = [svg_text(x, y + 12, words["dice"], size=12, bold=True)]
    items = [str(d) for d in dice] if isinstance(dice, list) else []
    if not items:
        out.append(svg_text(x + 54, y + 12, words["none"], size=11, fill=MUTED))
        return "".join(out), 22
    for k, die in enumerate(items):
        fill = COLOUR_FILL.get(die, "#adb5bd")
        dx = x + 54 + k * 27
        out.append(
            f'<g class="die" data-colour="{svg_attr(die)}">'
            f'<rect x="{dx + 1:.1f}" y="{y + 1.5:.1f}" width="21" height="21" rx="4" '
            'fill="#000" fill-opacity="0.25"/>'
            f'<rect x="{dx:.1f}" y="{y:.1f}" width="21" height="21" rx="4" fill="{fill}" '
            'stroke="#fff" stroke-width="1.5"/>'
            f"<title>{escape(words.get(f'colour:{die}', die))}</title></g>"
        )
    return "".join(out), 26


def legend_entries(
    circuits: Sequence[Circuit], view: Mapping[str, Any], lang: str
) -> list[tuple[str, str]]:
    """The legend: a mini hexagon (SVG drawn round 0,0, 10 units each way) and its words, for
    each feature present on the board(s), the trap (with the traps left) and the lap badge."""
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
            f'<polygon points="{flat_hexagon(0, 0, 10)}" fill="{look.fill}" stroke="{look.edge}"/>'
            f'<g transform="scale(0.42) translate(0 -2)">{icon}</g>'
        )
        entries.append((mini, translate(lang, look.en)))
    supply = view.get("trap_supply")
    trap_label = words["trap"]
    if isinstance(supply, int) and not isinstance(supply, bool):
        trap_label += f" ({supply})"
    trap = (
        f'<polygon points="{flat_hexagon(0, 0, 10)}" fill="{TILE}" stroke="{TILE_EDGE}"/>'
        f'<g transform="scale(0.8)">{TRAP_BIG}</g>'
    )
    entries.append((trap, trap_label))
    entries.append((lap_badge(0, 0, "2", 7.5), words["lap"]))
    return entries


def legend_svg(
    circuits: Sequence[Circuit],
    view: Mapping[str, Any],
    x: float,
    y: float,
    width: float,
    lang: str,
) -> tuple[str, float]:
    """The legend's entries (:func:`legend_entries`) in two columns."""
    entries = legend_entries(circuits, view, lang)
    column_w = width / 2
    out = ['<g class="legend">']
    for k, (mini, label) in enumerate(entries):
        ex = x + (k % 2) * column_w + 10
        ey = y + (k // 2) * 24 + 10
        out.append(f'<g transform="translate({ex:.1f} {ey:.1f})">{mini}</g>')
        out.append(svg_text(ex + 16, ey + 4, label, size=11, fill=INK))
    out.append("</g>")
    return "".join(out), ((len(entries) + 1) // 2) * 24


def status_svg(
    view: Mapping[str, Any], x: float, y: float, words: Mapping[str, str]
) -> tuple[str, float]:
    out = [svg_text(x, y + 18, f"{words['round']} {view.get('round', '?')}", size=19, bold=True)]
    if view.get("first_round"):
        out.append(svg_text(x + 98, y + 17, f"({words['first']})", size=11, fill=MUTED))
    return "".join(out), 28


def winner_banner(
    view: Mapping[str, Any], x: float, y: float, width: float, words: Mapping[str, str]
) -> tuple[str, float]:
    winner = view.get("winner")
    if not winner:
        return "", 0.0
    names = [str(winner)]
    names += [str(w) for w in view.get("winners") or [] if w and str(w) not in names]
    label = f"{words['winner']}: " + " & ".join(display_name(n, words) for n in names)
    crown = "M-11 5 L-11 -5 L-5.5 0 L0 -8 L5.5 0 L11 -5 L11 5Z"
    cx = x + width / 2
    out = (
        f'<g class="winner" data-winner="{svg_attr(winner)}">'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="38" rx="10" fill="{GOLD}" '
        'stroke="#c77700" stroke-width="2"/>'
        f'<path transform="translate({x + 26:.1f} {y + 20:.1f})" d="{crown}" fill="#fff" '
        'stroke="#c77700" stroke-width="1.2" stroke-linejoin="round"/>'
        f'<path transform="translate({x + width - 26:.1f} {y + 20:.1f})" d="{crown}" '
        'fill="#fff" stroke="#c77700" stroke-width="1.2" stroke-linejoin="round"/>'
        + svg_text(cx, y + 25.5, label, size=18, bold=True, fill="#3b2500", anchor="middle")
        + "</g>"
    )
    return out, 46.0


def panel_facts(circuits: Sequence[Circuit], view: Mapping[str, Any], lang: str) -> str:
    """What the panel shows that the game page shows nowhere else, as HTML for a narrow page
    (which hides the picture's panel, its text too small there): the legend. The round is on
    the page's status line, the Titans and the dice in its players' table."""
    items = "".join(f"<li>{icon_html(mini)} {escape(label)}</li>"
                    for mini, label in legend_entries(circuits, view, lang))
    return (f'<p class="facts-head">{escape(words_in(lang)["legend"])}</p>'
            f'<ul class="board-legend">{items}</ul>')
